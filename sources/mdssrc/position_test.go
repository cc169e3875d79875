package mdssrc

import (
	"context"
	"errors"
	"fmt"
	"testing"

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

// TestResumeAtEverySample: resuming after any count of samples (shard boundaries, the last
// sample, the end) gives exactly the samples after them; a resumed source resumes again from
// its own count; bad counts and tokens are ErrPosition.
func TestResumeAtEverySample(t *testing.T) {
	dir := write(t, 30, 400)
	src, err := New(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if src.Inputs().Len() < 3 {
		t.Fatalf("%d shards", src.Inputs().Len())
	}
	all := describeAll(t, src)
	for k := 0; k <= len(all); k++ {
		r, err := src.Resume(int64(k), nil)
		if err != nil {
			t.Fatalf("Resume(%d): %v", k, err)
		}
		if got := describeAll(t, r); fmt.Sprint(got) != fmt.Sprint(all[k:]) || r.Len() != int64(len(all)-k) {
			t.Fatalf("resumed at %d (Len %d):\n%q\nwant\n%q", k, r.Len(), got, all[k:])
		}
		if k < len(all) {
			rr, err := r.(*Source).Resume(1, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := describeAll(t, rr); fmt.Sprint(got) != fmt.Sprint(all[k+1:]) {
				t.Fatalf("resumed at %d then 1: %q", k, got)
			}
		}
	}
	for _, c := range []struct {
		n   int64
		tok []byte
	}{{-1, nil}, {31, nil}, {1 << 62, nil}, {0, []byte("{}")}} {
		if _, err := src.Resume(c.n, c.tok); !errors.Is(err, sources.ErrPosition) {
			t.Errorf("Resume(%d, %q) = %v, want ErrPosition", c.n, c.tok, err)
		}
	}
}
