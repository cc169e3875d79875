package scdlsrc

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mldf/convert/format/scdl"
	"github.com/mldf/convert/internal/cells"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// describeAll runs src and renders its samples (key, origin, error, values, input bytes).
func describeAll(t *testing.T, src sources.Source) []string {
	t.Helper()
	var out []string
	err := src.Run(context.Background(), func(s sample.Sample) error {
		out = append(out, fmt.Sprintf("%q %q %v %+v %d", s.Key, s.Origin, s.Err, s.Values, s.InputBytes))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

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
	all := describeAll(t, src)
	if len(all) != 120 {
		t.Fatalf("%d cells", len(all))
	}
	for _, k := range []int{0, 1, 37, 59, 60, 61, 100, 119, 120} {
		r, err := src.Resume(int64(k), nil)
		if err != nil {
			t.Fatalf("Resume(%d): %v", k, err)
		}
		if got := describeAll(t, r); fmt.Sprint(got) != fmt.Sprint(all[k:]) || r.Len() != int64(len(all)-k) {
			t.Fatalf("resumed at %d (Len %d): %d cells, want %d", k, r.Len(), len(got), len(all)-k)
		}
		if k < len(all) {
			rr, err := r.(*Source).Resume(1, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := describeAll(t, rr); fmt.Sprint(got) != fmt.Sprint(all[k+1:]) {
				t.Fatalf("resumed at %d then 1", k)
			}
		}
	}
	for _, c := range []struct {
		n   int64
		tok []byte
	}{{-1, nil}, {121, nil}, {1 << 62, nil}, {0, []byte("{}")}} {
		if _, err := src.Resume(c.n, c.tok); !errors.Is(err, sources.ErrPosition) {
			t.Errorf("Resume(%d, %q) = %v, want ErrPosition", c.n, c.tok, err)
		}
	}
}
