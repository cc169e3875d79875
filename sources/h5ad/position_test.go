package h5ad

import (
	"path/filepath"
	"testing"

	"github.com/mldf/convert/internal/cells"
	"github.com/mldf/convert/sources/scdlsrc"
	"github.com/mldf/convert/sources/sourcetest"
)

// TestResumeAtCells: h5ad files (CSR and CSC) read as a source (scdlsrc, as the registered
// source reads them) resume after a count of cells with exactly the cells after them, keys,
// origins (cell rows) and obs values included.
func TestResumeAtCells(t *testing.T) {
	need(t)
	var ins []cells.Input
	for _, name := range []string{"small_csr.h5ad", "small_csc.h5ad"} {
		f, err := Open(filepath.Join(fixtures, name), Options{TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, f)
	}
	src := scdlsrc.New(ins, nil)
	defer src.Close()
	all := sourcetest.Describe(t, src)
	if len(all) != 120 {
		t.Fatalf("%d cells", len(all))
	}
	sourcetest.ResumeAt(t, src, all, []int{0, 1, 33, 59, 60, 61, 119, 120})
}
