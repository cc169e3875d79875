package imagefolder

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/sample"
)

// TestFIFOEntries (image folders): a named pipe named like an image (or
// a symbolic link to one) is listed as a sample with ErrNotRegular, a reject entry, without
// ever being opened; a named pipe as the root is not a directory; and loading such a value
// (what the image field does) is refused at once.
func TestFIFOEntries(t *testing.T) {
	root := t.TempDir()
	touch(t, root, "cat/a.jpg")
	pipe := filepath.Join(root, "cat", "b.jpg")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	os.Symlink(pipe, filepath.Join(root, "cat", "c.jpg"))
	s, err := New(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, s)
	if len(got) != 3 || got[0].Err != nil {
		t.Fatalf("%+v", got)
	}
	for _, g := range got[1:] {
		if !errors.Is(g.Err, ErrNotRegular) || !strings.Contains(g.Err.Error(), "named pipe") {
			t.Fatalf("%s: %v", g.Key, g.Err)
		}
		if _, err := g.Value(ColumnImage).Load(); !errors.Is(err, inputfile.ErrNotRegular) {
			t.Fatalf("Load(%s) = %v", g.Key, err)
		}
	}
	if _, err := (sample.Value{Kind: sample.KindFile, Path: pipe}).Load(); !errors.Is(err, inputfile.ErrNotRegular) {
		t.Fatal(err)
	}
	rootPipe := filepath.Join(t.TempDir(), "root")
	syscall.Mkfifo(rootPipe, 0o600)
	if _, err := New(rootPipe, Options{}); !errors.Is(err, ErrNotDir) {
		t.Fatalf("New(fifo) = %v", err)
	}
}
