// Package sources turns datasets on disk into ordered streams of samples. Each source walks its
// inputs in a deterministic order and yields sample.Sample values; none knows how the output is
// stored.
package sources

import (
	"context"

	"github.com/mldf/convert/sample"
)

// Source yields samples in a deterministic order.
type Source interface {
	// Len returns the number of samples when known before the run, or -1 when streaming.
	Len() int64
	// Run calls emit for every sample, in order, until the input ends, emit returns an error,
	// or ctx is cancelled. It returns the first error (ctx.Err() when cancelled). Per-sample
	// problems that do not stop the walk are reported through Sample.Err.
	Run(ctx context.Context, emit func(sample.Sample) error) error
}

// Input is one file a source reads, with its size: the unit sharded runs split by bytes.
type Input struct {
	Path string
	Size int64
}
