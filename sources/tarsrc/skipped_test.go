package tarsrc

import (
	"archive/tar"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/sources"
)

// TestSkippedMembers checks that the members a shard holds but no sample does (no extension,
// a hidden name, links, devices) are counted by extension after Run, per run, and not
// directories.
func TestSkippedMembers(t *testing.T) {
	dir := t.TempDir()
	members := []member{
		{name: "d/", typ: tar.TypeDir},
		{name: "a.jpg", data: []byte("x")},
		{name: "a.cls", data: []byte("1")},
		{name: "README", data: []byte("r")},
		{name: "d/.hidden", data: []byte("h")},
		{name: "l.jpg", typ: tar.TypeSymlink},
		{name: "fifo", typ: tar.TypeFifo},
		{name: "b.jpg", data: []byte("y")},
	}
	path := filepath.Join(dir, "s.tar")
	if err := os.WriteFile(path, tarBytes(t, members), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := New([]string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"": 2, "(link)": 1, "(special)": 1}
	for range 2 { // counts are per run, not added up
		if got := collect(t, src); len(got) != 2 {
			t.Fatalf("%d samples", len(got))
		}
		if got := sources.SkippedFiles(src); !maps.Equal(got, want) {
			t.Errorf("skipped %v, want %v", got, want)
		}
	}
}
