package sources

import (
	"context"

	"github.com/mldf/convert/sample"
)

// BatchSource is a Source that can also hand over its samples in batches not yet decoded (a
// run of JSONL lines, say), for the consumer to decode on its own workers into memory it
// reuses once it is done with the samples. A consumer that finds this interface may call
// RunBatches instead of Run; one that does not sees the same samples through Run.
type BatchSource interface {
	Source
	// RunBatches calls emit with each batch, in order, until the input ends, emit returns an
	// error, or ctx is cancelled; it returns the first error (ctx.Err() when cancelled), like
	// Run. The batches' samples, decoded one batch after the other, are the samples Run
	// emits, with the same keys, origins, values and errors; only Sample.Index is left to
	// the consumer (each batch's samples are numbered from 0). emit may keep the batch and
	// decode it later, on any goroutine.
	RunBatches(ctx context.Context, emit func(Batch) error) error
}

// Batch is a run of consecutive samples of a BatchSource in their raw form.
type Batch interface {
	// Decode sets m.Samples to the batch's samples, in order, building them in m's memory
	// (m.Samples, m.Columns and m.Blocks are reused, not appended to). It is called at most
	// once per batch, on any goroutine; a batch not decoded is simply dropped. The samples,
	// their values' bytes and their keys and origins live in m: they are valid until m is
	// passed to Decode again, so a consumer copies what it keeps longer (the origin of an
	// error it reports, for instance).
	Decode(m *Memory)
}

// Memory is where a Batch decodes its samples: buffers a consumer keeps and hands to one
// Decode after another, so that decoding allocates nothing once they have grown. The zero
// value is ready to use. A Memory is used by one Decode at a time.
type Memory struct {
	// Samples are the decoded samples (Decode sets them).
	Samples []sample.Sample
	// Columns back the samples' Values.
	Columns []sample.Column
	// Blocks back the values' bytes and the samples' keys and origins.
	Blocks [][]byte
	// Scratch is the decoding state a source keeps between decodes (a scanner); a source
	// replaces what is not its own.
	Scratch any
}
