package beton

import (
	"context"

	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/pipeline"
)

// NewContainer creates a .beton Writer for the pipeline: set it as pipeline.Config.Container.
// The spec's Checksums is ignored (the format has none).
func NewContainer(s pipeline.ContainerSpec) (pipeline.Container, error) {
	w, err := Create(s.Path, Options{PageSize: s.PageSize, Fields: s.Fields, Samples: s.Samples, Wrap: s.Wrap})
	if err != nil {
		return nil, err
	}
	return container{w}, nil
}

type container struct{ w *Writer }

type chunk struct{ *Batch }

func (c chunk) SetOnClaim(f func(int64) error) { c.OnClaim = f }

func (c container) Issue() *pagewriter.Ticket { return c.w.Issue() }

func (c container) NewChunk() pipeline.Chunk { return chunk{c.w.NewBatch()} }

func (c container) Publish(t *pagewriter.Ticket, ch pipeline.Chunk) {
	c.w.Publish(t, ch.(chunk).Batch)
}

func (c container) WaitClaimed(ctx context.Context, t *pagewriter.Ticket) error {
	return c.w.WaitClaimed(ctx, t)
}

func (c container) Write(ch pipeline.Chunk) error { return c.w.Write(ch.(chunk).Batch) }

func (c container) Abort() error { return c.w.Abort() }

func (c container) Stats() pagewriter.Stats { return c.w.Stats() }

func (c container) Finish() (pagewriter.Result, error) {
	r, err := c.w.Finish()
	return pagewriter.Result{Path: r.Path, Samples: r.Samples, Entries: r.Entries, DataPtr: r.DataPtr,
		MetadataPtr: r.MetadataPtr, AllocTablePtr: r.AllocTablePtr, Size: r.Size, Pages: r.Pages,
		PayloadBytes: r.PayloadBytes}, err
}
