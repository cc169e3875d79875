package atomicfile_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mldf/convert/internal/atomicfile"
)

// A Dir replaces the target tree whole at Commit, leaves it alone at Abort, and removes the
// leftovers of a killed write before making its own.
func TestDir(t *testing.T) {
	parent := t.TempDir()
	target := filepath.Join(parent, "a.scdl")
	fill := func(d *atomicfile.Dir, name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(d.Path(), name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A killed run's leftover.
	if err := os.Mkdir(filepath.Join(parent, ".a.scdl.tmp-123"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"one", "two"} {
		d, err := atomicfile.CreateDir(target)
		if err != nil {
			t.Fatal(err)
		}
		fill(d, name)
		if err := d.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := entries(t, target); !slices.Equal(got, []string{name}) {
			t.Fatalf("after commit of %s: %v", name, got)
		}
		if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o755 {
			t.Fatalf("target: %v %v", fi, err)
		}
	}
	d, err := atomicfile.CreateDir(target)
	if err != nil {
		t.Fatal(err)
	}
	fill(d, "three")
	if err := d.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(); err == nil {
		t.Fatal("commit after abort succeeded")
	}
	if got := entries(t, target); !slices.Equal(got, []string{"two"}) {
		t.Fatalf("after abort: %v", got)
	}
	if got := entries(t, parent); !slices.Equal(got, []string{"a.scdl"}) {
		t.Fatalf("left beside the target: %v", got)
	}
}
