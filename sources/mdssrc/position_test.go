package mdssrc

import (
	"context"
	"testing"

	"github.com/mldf/convert/sources/sourcetest"
)

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
	all := sourcetest.Describe(t, src)
	cuts := make([]int, len(all)+1)
	for k := range cuts {
		cuts[k] = k
	}
	sourcetest.ResumeAt(t, src, all, cuts)
	sourcetest.BadPositions(t, src, []sourcetest.Position{{N: -1}, {N: 31}, {N: 1 << 62}, {Token: []byte("{}")}})
}
