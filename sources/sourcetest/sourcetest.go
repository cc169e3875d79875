// Package sourcetest holds what the sources' tests share: rendering every sample a source
// emits, and checking that a source resumed after a count of samples emits exactly the rest.
// It is imported by tests only.
package sourcetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// Describe runs src and renders each sample it emits: key, origin, error, values and input
// bytes, the parts a resumed run must reproduce.
func Describe(t testing.TB, src sources.Source) []string {
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

// ResumeAt checks src resumed after each count in cuts, without a token: it must emit
// all[k:] (all is Describe(src)), say so in its Len where it has one, and, resumed again after
// one more sample, emit all[k+1:].
func ResumeAt(t testing.TB, src sources.Resumer, all []string, cuts []int) {
	t.Helper()
	for _, k := range cuts {
		r, err := src.Resume(int64(k), nil)
		if err != nil {
			t.Fatalf("Resume(%d): %v", k, err)
		}
		if got := Describe(t, r); fmt.Sprint(got) != fmt.Sprint(all[k:]) {
			t.Fatalf("resumed at %d: %d samples\n%q\nwant %d\n%q", k, len(got), got, len(all)-k, all[k:])
		}
		if l, ok := r.(interface{ Len() int64 }); ok && l.Len() != int64(len(all)-k) {
			t.Fatalf("resumed at %d: Len %d, want %d", k, l.Len(), len(all)-k)
		}
		if again, ok := r.(sources.Resumer); ok && k < len(all) {
			rr, err := again.Resume(1, nil)
			if err != nil {
				t.Fatalf("resumed at %d, then Resume(1): %v", k, err)
			}
			if got := Describe(t, rr); fmt.Sprint(got) != fmt.Sprint(all[k+1:]) {
				t.Fatalf("resumed at %d then 1: %d samples, want %d", k, len(got), len(all)-k-1)
			}
		}
	}
}

// Position is a place a source is asked to resume from: a count of samples and a token.
type Position struct {
	N     int64
	Token []byte
}

// BadPositions checks that src refuses each place with sources.ErrPosition.
func BadPositions(t testing.TB, src sources.Resumer, bad []Position) {
	t.Helper()
	for _, p := range bad {
		if _, err := src.Resume(p.N, p.Token); !errors.Is(err, sources.ErrPosition) {
			t.Errorf("Resume(%d, %q) = %v, want ErrPosition", p.N, p.Token, err)
		}
	}
}
