package format_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/format"
	_ "github.com/mldf/convert/format/beton"
	_ "github.com/mldf/convert/format/mds"
	"github.com/mldf/convert/format/mldf"
	_ "github.com/mldf/convert/format/scdl"
	"github.com/mldf/convert/format/taridx"
)

// TestSniff: each format package registered itself, and Sniff tells them apart by their
// signatures, then by name; a file that matches none is ErrUnknown.
func TestSniff(t *testing.T) {
	var names []string
	for _, f := range format.Formats() {
		names = append(names, f.Name)
	}
	if len(names) != 5 {
		t.Fatalf("registered %v, want mldf, beton, mds, scdl, taridx", names)
	}
	for _, c := range []struct {
		name, head, want string
	}{
		{"a.mldf", mldf.Signature, "mldf"},
		{"a.beton", mldf.Signature, "mldf"}, // the signature wins over the name
		{"x", mldf.Signature + "more bytes", "mldf"},
		{"a.taridx", taridx.Magic, "taridx"},
		{"a.taridx", "TARIDX\x00\x01", "taridx"}, // byte 7 is Parse's to refuse
		{"data/train.beton", "\x00\x00\x00\x00", "beton"},
		{"train.beton", "", "beton"},
		{"a.mldf", mldf.Signature[:8], ""},
		{"a.mldf", "", ""},
		{"beton", "", ""},
		{"a.tar", "TARIDX", ""},
	} {
		f, err := format.Sniff(c.name, []byte(c.head))
		if c.want == "" {
			if !errors.Is(err, format.ErrUnknown) {
				t.Errorf("Sniff(%q, %q) = %q, %v; want ErrUnknown", c.name, c.head, f.Name, err)
			}
			continue
		}
		if err != nil || f.Name != c.want {
			t.Errorf("Sniff(%q, %q) = %q, %v; want %s", c.name, c.head, f.Name, err, c.want)
		}
	}
	dir := t.TempDir()
	if f, ok := format.DirFormat(dir); !ok || f.Name != "scdl" {
		t.Errorf("DirFormat(a directory without index.json) = %q, %v", f.Name, ok)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, ok := format.DirFormat(dir); !ok || f.Name != "mds" {
		t.Errorf("DirFormat(a directory with index.json) = %q, %v", f.Name, ok)
	}
	for _, name := range []string{"mldf", "beton", "taridx"} { // read from buckets too
		if f, ok := format.Lookup(name); !ok || f.Open == nil || f.OpenPath == nil {
			t.Errorf("Lookup(%s) = %+v, %v; want a format opened from a path and a ReaderAt", name, f, ok)
		}
	}
	if f, ok := format.Lookup("scdl"); !ok || f.Open != nil || !f.Dir {
		t.Errorf("Lookup(scdl) = %+v, %v; want a local directory format", f, ok)
	}
}

// TestRegisterTwice: a second format of a registered name panics.
func TestRegisterTwice(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	f, _ := format.Lookup("mldf")
	format.Register(f)
}

// TestOpenGolden opens the golden MLDF file through the registry, locally and through an
// io.ReaderAt, and verifies it.
func TestOpenGolden(t *testing.T) {
	path := filepath.Join("..", "testdata", "golden", "tiny.mldf")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := format.Sniff(path, b[:format.HeadSize])
	if err != nil {
		t.Fatal(err)
	}
	local, err := f.OpenPath(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	osf, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := f.Open(t.Context(), "mem://tiny.mldf", osf, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Close()
	for _, file := range []format.File{local, remote} {
		if _, err := file.Describe(); err != nil {
			t.Error(err)
		}
		if _, err := file.Sample(0); err != nil {
			t.Error(err)
		}
		if _, err := file.Verify(t.Context(), format.VerifyOptions{}); err != nil {
			t.Error(err)
		}
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 3 << 30: "3.0 GiB"} {
		if got := format.Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
