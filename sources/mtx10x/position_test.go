package mtx10x

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
	if len(all) != 50 {
		t.Fatalf("%d cells", len(all))
	}
	for _, k := range []int{0, 1, 12, 24, 25, 26, 49, 50} {
		r, err := src.Resume(int64(k), nil)
		if err != nil {
			t.Fatalf("Resume(%d): %v", k, err)
		}
		if got := describe(r); fmt.Sprint(got) != fmt.Sprint(all[k:]) {
			t.Fatalf("resumed at %d: %d cells, want %d", k, len(got), len(all)-k)
		}
	}
}
