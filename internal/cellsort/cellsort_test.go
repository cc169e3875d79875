package cellsort

import (
	"math/rand/v2"
	"slices"
	"testing"
)

type e struct {
	r, c int64
	v    float32
}

func TestSortsRowsFromAnyOrder(t *testing.T) {
	const rows, cols = 1000, 37
	want := make([][]float32, rows)
	for r := range want {
		want[r] = make([]float32, cols)
	}
	var es []e
	rng := rand.New(rand.NewPCG(1, 2))
	for range 9000 {
		r, c := rng.Int64N(rows), rng.Int64N(cols)
		v := float32(rng.IntN(9) + 1)
		want[r][c] += v // duplicates are summed
		es = append(es, e{r, c, v})
	}
	for _, span := range []int64{7, 1} { // span 1: more buckets than open files allowed
		check(t, span, es, want)
	}
}

func check(t *testing.T, span int64, es []e, want [][]float32) {
	const rows, cols = 1000, 37
	s, err := New(t.TempDir(), rows, cols, span)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, x := range es {
		if err := s.Add(x.r, x.c, x.v); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Add(rows, 0, 1); err == nil {
		t.Fatal("out of range entry accepted")
	}
	if err := s.Finish(); err != nil {
		t.Fatal(err)
	}
	// Ranges that cut across buckets.
	for lo := int64(0); lo < rows; lo += 13 {
		hi := min(lo+13, rows)
		indptr, cs, vs, err := s.Rows(lo, hi, []int64{0}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for r := lo; r < hi; r++ {
			got := make([]float32, cols)
			a, b := indptr[r-lo], indptr[r-lo+1]
			if !slices.IsSorted(cs[a:b]) {
				t.Fatalf("row %d: columns not sorted: %v", r, cs[a:b])
			}
			for k := a; k < b; k++ {
				got[cs[k]] = vs[k]
			}
			if !slices.Equal(got, want[r]) {
				t.Fatalf("row %d: %v, want %v", r, got, want[r])
			}
		}
	}
}
