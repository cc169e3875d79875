package scdlsrc

import (
	"testing"

	"github.com/mldf/convert/format/scdl"
	"github.com/mldf/convert/internal/cells"
	"github.com/mldf/convert/sources/sourcetest"
)

// TestResumeAtCells: resuming after a count of cells (the boundary of two inputs, the
// last cell, the end) gives exactly the cells after them, keys and origins (row numbers)
// included; a resumed source resumes again from its own count; bad counts and tokens are
// ErrPosition.
func TestResumeAtCells(t *testing.T) {
	var ins []cells.Input
	for range 2 {
		r, err := scdl.Open("../../testdata/scdl/small.scdl")
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, scdl.NewArchiveInput(r))
	}
	src := New(ins, []int64{6000, 6000})
	defer src.Close()
	all := sourcetest.Describe(t, src)
	if len(all) != 120 {
		t.Fatalf("%d cells", len(all))
	}
	sourcetest.ResumeAt(t, src, all, []int{0, 1, 37, 59, 60, 61, 100, 119, 120})
	sourcetest.BadPositions(t, src, []sourcetest.Position{{N: -1}, {N: 121}, {N: 1 << 62}, {Token: []byte("{}")}})
}
