package sources

import "errors"

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
