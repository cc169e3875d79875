//go:build unix

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mldf/convert/format/scdl"
)

// TestVerifyInspectDirectories: verify and inspect on a directory read it as an SCDL
// archive and say what it lacks (never "not an MLDF file"); an archive without header.sch
// is read as BioNeMo reads it; hostile members are refused without blocking.
func TestVerifyInspectDirectories(t *testing.T) {
	small := filepath.Join(repoRoot(t), "testdata", "scdl", "small.scdl")
	archive := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "a.scdl")
		if err := os.CopyFS(dir, os.DirFS(small)); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	// small.scdl has row_ptr and col_ptr uint8; without a header they are described by dtypes.json.
	headerless := func(t *testing.T, dir string) {
		os.Remove(filepath.Join(dir, scdl.HeaderFile))
		os.WriteFile(filepath.Join(dir, scdl.DTypesFile), []byte(`{"data.npy": "float32", "row_ptr.npy": "uint16", "col_ptr.npy": "uint8"}`), 0o644)
	}
	cases := []struct {
		name   string
		mutate func(t *testing.T, dir string)
		is     error
		want   string // in the error, or in verify's output when is is nil
	}{
		{"empty directory", func(t *testing.T, d string) {
			os.RemoveAll(d)
			os.Mkdir(d, 0o755)
		}, scdl.ErrNotArchive, "has none of header.sch, metadata.json"},
		{"no header.sch", headerless, nil, "no header.sch (BioNeMo's default dtypes assumed)"},
		{"no header.sch, no arrays", func(t *testing.T, d string) {
			for _, f := range []string{scdl.HeaderFile, scdl.DataFile} {
				os.Remove(filepath.Join(d, f))
			}
		}, scdl.ErrInvalid, "no header.sch and no data.npy"},
		{"dangling header.sch", func(t *testing.T, d string) {
			os.Remove(filepath.Join(d, scdl.HeaderFile))
			os.Symlink("/nonexistent/header.sch", filepath.Join(d, scdl.HeaderFile))
		}, scdl.ErrMember, "header.sch is a symbolic link"},
		{"data.npy links out", func(t *testing.T, d string) {
			out := filepath.Join(t.TempDir(), "secret")
			os.Rename(filepath.Join(d, scdl.DataFile), out)
			os.Symlink(out, filepath.Join(d, scdl.DataFile))
		}, scdl.ErrMember, "data.npy is a symbolic link"},
		{"metadata.json is a FIFO", func(t *testing.T, d string) {
			os.Remove(filepath.Join(d, scdl.MetadataFile))
			syscall.Mkfifo(filepath.Join(d, scdl.MetadataFile), 0o644)
		}, scdl.ErrMember, "metadata.json is a named pipe"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := archive(t)
			c.mutate(t, dir)
			for _, cmd := range []string{"verify", "inspect"} {
				stdout, _, err := run(t, cmd, dir)
				if c.is == nil {
					if err != nil {
						t.Fatalf("%s: %v", cmd, err)
					}
					if cmd == "verify" && !strings.Contains(stdout, c.want) {
						t.Fatalf("verify: %q, want %q", stdout, c.want)
					}
					continue
				}
				if err == nil || !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "MLDF") {
					t.Fatalf("%s: %v; want %v saying %q", cmd, err, c.is, c.want)
				}
			}
		})
	}
}
