package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/outpath"
)

// snapshot hashes every regular file under the roots, and records every other kind of
// file, so a test can show that a refused command touched nothing.
func snapshot(t *testing.T, roots ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			switch fi, _ := os.Lstat(p); {
			case fi == nil:
			case fi.Mode().IsRegular():
				b, _ := os.ReadFile(p)
				sum := sha256.Sum256(b)
				m[p] = string(sum[:])
			default:
				m[p] = fi.Mode().String()
			}
			return nil
		})
	}
	return m
}

// TestOutputAliasing runs every command that writes with an output that is an input, the
// recipe, another output, a device or a directory, spelled directly, through a symbolic link,
// and through a sharded run's part name: each is refused before any work, naming both paths,
// and nothing changes on disk.
func TestOutputAliasing(t *testing.T) {
	if testing.Short() {
		t.Skip("converts small folders")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	writeNoiseFolder(t, data, 6, 8)
	img := filepath.Join(data, "class0", "0000.png")
	// An input named like the part of a sharded run whose output is data/class1/p.png.
	partInput := filepath.Join(data, "class1", "p.part-00000-of-00002.png")
	if b, err := os.ReadFile(filepath.Join(data, "class1", "0001.png")); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(partInput, b, 0o644); err != nil {
		t.Fatal(err)
	}
	recipePath := filepath.Join(dir, "r.yaml")
	os.WriteFile(recipePath, []byte("source: {type: images, path: "+data+"}\nfields: [{name: image, type: image, mode: png}, {name: label, type: int}]\noutput: "+
		filepath.Join(dir, "out.mldf")+"\n"), 0o644)
	linkToInput := filepath.Join(dir, "link.mldf")
	os.Symlink(img, linkToInput)
	linkDir := filepath.Join(dir, "datalink")
	os.Symlink(data, linkDir)
	shard := filepath.Join(dir, "s.tar")
	if b, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata/tar/wds/shard-000000.tar")); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(shard, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// A converted file and the two parts of a sharded run, for merge and export.
	mldfFile := filepath.Join(dir, "done.mldf")
	parts := filepath.Join(dir, "parts", "p.mldf")
	for _, args := range [][]string{
		{"images", data, mldfFile, "--mode", "png"},
		{"images", data, parts, "--mode", "png", "--shards", "2", "--shard", "0"},
		{"images", data, parts, "--mode", "png", "--shards", "2", "--shard", "1"},
	} {
		if _, stderr, err := run(t, args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
	}
	part0 := partPath(parts, 0, 2)
	out := filepath.Join(dir, "new.mldf")

	for _, c := range []struct {
		name string
		args []string
		want error
		msg  string
	}{
		{"output is an input", []string{"images", data, img}, outpath.ErrAlias, "output " + img + " is the input " + img},
		{"output is an input through a linked folder", []string{"images", data, filepath.Join(linkDir, "class0/0000.png")}, outpath.ErrAlias, "is the input"},
		{"output is a symlink to an input", []string{"images", data, linkToInput}, outpath.ErrAlias, "is the input"},
		{"report is an input", []string{"images", data, out, "--report", img}, outpath.ErrAlias, "report " + img + " is the input"},
		{"rejects is an input", []string{"images", data, out, "--rejects", img}, outpath.ErrAlias, "rejects " + img + " is the input"},
		{"cpuprofile is an input", []string{"images", data, out, "--cpuprofile", img}, outpath.ErrAlias, "cpuprofile"},
		{"trace is an input", []string{"images", data, out, "--trace", img}, outpath.ErrAlias, "trace " + img + " is the input"},
		{"trace is the output", []string{"images", data, out, "--trace", out}, outpath.ErrAlias, "is also the output"},
		{"output is the recipe", []string{"run", recipePath, "--output", recipePath}, outpath.ErrAlias, "is the recipe"},
		{"report is the recipe", []string{"run", recipePath, "--report", recipePath}, outpath.ErrAlias, "is the recipe"},
		{"validate: rejects is the recipe", []string{"validate", recipePath, "--rejects", recipePath}, outpath.ErrAlias, "is the recipe"},
		{"report is the output", []string{"images", data, out, "--report", out}, outpath.ErrAlias, "report " + out + " is also the output"},
		{"report is the existing output", []string{"images", data, mldfFile, "--report", mldfFile}, outpath.ErrAlias, "is also the output"},
		{"rejects is the report", []string{"images", data, out, "--rejects", out + ".report.json"}, outpath.ErrAlias, "is also the report"},
		{"output is /dev/null", []string{"images", data, "/dev/null"}, outpath.ErrNotRegular, "character device"},
		{"report is /dev/null", []string{"images", data, out, "--report", "/dev/null"}, outpath.ErrNotRegular, "character device"},
		{"output is a directory", []string{"images", data, data}, outpath.ErrNotRegular, "a directory"},
		{"a sharded run's part is an input", []string{"images", data, filepath.Join(data, "class1", "p.png"), "--shards", "2", "--shard", "0"}, outpath.ErrAlias, "part " + partInput},
		{"index -o the shard", []string{"index", shard, "-o", shard}, outpath.ErrAlias, "is the shard " + shard},
		{"index -o /dev/null", []string{"index", shard, "-o", "/dev/null"}, outpath.ErrNotRegular, "character device"},
		{"merge into a part", []string{"merge", part0, part0, partPath(parts, 1, 2)}, outpath.ErrAlias, "is the part " + part0},
		{"export into the file", []string{"export", mldfFile, mldfFile, "--format", "folder"}, nil, "not a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, dir, "/dev/null")
			_, _, err := run(t, c.args...)
			if err == nil || (c.want != nil && !errors.Is(err, c.want)) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %v, want %v with %q", err, c.want, c.msg)
			}
			t.Log(err)
			after := snapshot(t, dir, "/dev/null")
			for p, h := range before {
				if after[p] != h {
					t.Errorf("%s changed", p)
				}
			}
			for p := range after {
				if _, ok := before[p]; !ok {
					t.Errorf("%s appeared", p)
				}
			}
		})
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is no longer a device: %v", err)
	}
	// The same commands with distinct paths work.
	if _, stderr, err := run(t, "images", data, out, "--report", filepath.Join(dir, "rep.json")); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if b, _ := os.ReadFile(out); !bytes.HasPrefix(b, []byte(mldf.Signature)) {
		t.Fatalf("output %.8q", b)
	}
}
