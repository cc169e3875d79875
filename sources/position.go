package sources

import (
	"context"
	"errors"
	"fmt"

	"github.com/mldf/convert/sample"
)

// ErrPosition is a position token a source cannot continue from (another source's, or
// damaged).
var ErrPosition = errors.New("sources: bad position token")

// Resumer is a Source that can continue a run from a place without reading what came
// before it: a resumed conversion starts there (docs/RESUME.md). A source without it is
// resumed by running it from the start and dropping the samples already written.
type Resumer interface {
	Source
	// Resume returns a source over the samples after the first samples ones, given the
	// token recorded at that place (nil where the place was recorded by count only: a
	// Sample-by-Sample run, or a batch without a token). Its samples, with the same keys,
	// origins and values, are those the full run emits after the first samples ones.
	Resume(samples int64, token []byte) (Source, error)
}

// PositionedBatch is a Batch of a Resumer that knows the place after its last sample: the
// token its Resume takes there.
type PositionedBatch interface {
	Batch
	// After returns the token of the place after the batch's last sample. It is called as
	// the batch is received, before Decode.
	After() []byte
}

// PositionedRunner is a Resumer whose place is not known from a count of samples alone (a
// byte offset in a tar shard): RunPositioned is Run with each sample's place. A run that
// checkpoints uses it instead of Run, and records the token after a chunk's last sample.
type PositionedRunner interface {
	Resumer
	// RunPositioned is Run, emit being also given after, which returns the token of the
	// place after the sample (what Resume takes there). after may be called only during
	// that emit call; it is not called for most samples, so its work is done on demand.
	RunPositioned(ctx context.Context, emit func(s sample.Sample, after func() []byte) error) error
}

// ResumeInner is the Resume of a wrapper whose samples are those of the source it wraps,
// one for one (a column added, an error set): inner resumed, for the wrapper to wrap again.
// A source that cannot resume is an error wrapping ErrPosition.
func ResumeInner(inner Source, samples int64, token []byte) (Source, error) {
	r, ok := inner.(Resumer)
	if !ok {
		return nil, fmt.Errorf("%w: the source cannot seek", ErrPosition)
	}
	return r.Resume(samples, token)
}

// RunPositioned runs src through its RunPositioned (PositionedRunner), or through Run with
// no token for any place: what a wrapper of ResumeInner's kind runs.
func RunPositioned(ctx context.Context, src Source, emit func(sample.Sample, func() []byte) error) error {
	if p, ok := src.(PositionedRunner); ok {
		return p.RunPositioned(ctx, emit)
	}
	return src.Run(ctx, func(s sample.Sample) error { return emit(s, noToken) })
}

func noToken() []byte { return nil }
