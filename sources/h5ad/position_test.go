package h5ad

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/internal/cells"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
	"github.com/mldf/convert/sources/scdlsrc"
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
	describe := func(s sources.Source) []string {
		var out []string
		if err := s.Run(context.Background(), func(s sample.Sample) error {
			out = append(out, fmt.Sprintf("%q %q %v %+v", s.Key, s.Origin, s.Err, s.Values))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	all := describe(src)
	if len(all) != 120 {
		t.Fatalf("%d cells", len(all))
	}
	for _, k := range []int{0, 1, 33, 59, 60, 61, 119, 120} {
		r, err := src.Resume(int64(k), nil)
		if err != nil {
			t.Fatalf("Resume(%d): %v", k, err)
		}
		if got := describe(r); fmt.Sprint(got) != fmt.Sprint(all[k:]) {
			t.Fatalf("resumed at %d: %d cells, want %d", k, len(got), len(all)-k)
		}
	}
}
