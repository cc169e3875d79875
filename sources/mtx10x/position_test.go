package mtx10x

import (
	"path/filepath"
	"testing"

	"github.com/mldf/convert/internal/cells"
	"github.com/mldf/convert/sources/scdlsrc"
	"github.com/mldf/convert/sources/sourcetest"
)

// TestResumeAtCells: a 10x directory read as a source (scdlsrc over the directory, as the
// registered source reads it) resumes after a count of cells with exactly the cells after
// them, keys and origins (cell rows) included.
func TestResumeAtCells(t *testing.T) {
	var ins []cells.Input
	for range 2 {
		d, err := Open(filepath.Join(fixtures, "tenx"), Options{TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, d)
	}
	src := scdlsrc.New(ins, nil)
	defer src.Close()
	all := sourcetest.Describe(t, src)
	if len(all) != 50 {
		t.Fatalf("%d cells", len(all))
	}
	sourcetest.ResumeAt(t, src, all, []int{0, 1, 12, 24, 25, 26, 49, 50})
}
