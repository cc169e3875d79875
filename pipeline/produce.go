package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// produce runs the source and cuts its samples into chunks, issuing each chunk's ticket in
// sample order. A sources.BatchSource's batches become the chunks (with adaptive chunks):
// the workers decode them into memory they reuse.
func (r *runner) produce(ctx context.Context, jobs chan<- *job) error {
	defer close(jobs)
	if bs, ok := r.cfg.Source.(sources.BatchSource); ok && r.cfg.ChunkSize == 0 && r.skip == 0 {
		var before []byte // the place before the batch, for a checkpoint taken there
		if r.ck != nil && r.ck.from != nil {
			before = r.ck.from.Token
		}
		err := bs.RunBatches(ctx, func(b sources.Batch) error {
			j := &job{t: r.w.Issue(), batch: b, before: before}
			if pb, ok := b.(sources.PositionedBatch); ok && r.ck != nil {
				before = pb.After()
			} else {
				before = nil
			}
			select {
			case jobs <- j:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if err != nil && !(ctx.Err() != nil && errors.Is(err, ctx.Err())) {
			return fmt.Errorf("source: %w", err)
		}
		return err
	}
	size, auto := r.cfg.ChunkSize, r.cfg.ChunkSize == 0
	if auto {
		size = DefaultChunkSize
	}
	cur := r.samples(size)
	var sent int64 // samples handed out in chunks
	// A source that knows its place after each sample (sources.PositionedRunner) gives the
	// token a checkpoint before each chunk records; after is that of the sample being emitted.
	var before []byte
	var after func() []byte
	run := r.cfg.Source.Run
	if pr, ok := r.cfg.Source.(sources.PositionedRunner); ok && r.ck != nil {
		if r.ck.from != nil && r.skip == 0 {
			before = r.ck.from.Token
		}
		run = func(ctx context.Context, emit func(sample.Sample) error) error {
			return pr.RunPositioned(ctx, func(s sample.Sample, a func() []byte) error {
				after = a
				err := emit(s)
				after = nil
				return err
			})
		}
	}
	send := func() error {
		sent += int64(len(cur))
		j := &job{t: r.w.Issue(), samples: cur, before: before}
		if after != nil {
			before = after()
		}
		cur = r.samples(size)
		select {
		case jobs <- j:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var bytes int64
	skip := r.skip // samples written before a resume, from a source that cannot seek
	err := run(ctx, func(s sample.Sample) error {
		if skip > 0 {
			if skip--; skip == 0 && after != nil {
				before = after()
			}
			return ctx.Err()
		}
		cur = append(cur, s)
		bytes += s.InputBytes
		full := len(cur) >= tailChunk(size, auto, r.total-sent, r.cfg.Workers)
		if auto && full && bytes < minChunkBytes {
			full = len(cur) >= maxAutoChunk
		}
		if full || bytes >= maxChunkBytes {
			bytes = 0
			return send()
		}
		return ctx.Err()
	})
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return err
		}
		return fmt.Errorf("source: %w", err)
	}
	if len(cur) > 0 {
		return send()
	}
	return nil
}

// tailChunk is the size of the chunk being cut when left samples remain from its first one
// (left < 0 or not auto: unknown, size). Near the end of a source whose length is known,
// adaptive chunks shrink to about a quarter of each worker's share of what is left, so the
// last chunks spread over all the workers rather than leaving one to finish a whole chunk
// alone (64 images of 1 ms are a 64 ms tail on one core).
func tailChunk(size int, auto bool, left int64, workers int) int {
	if !auto || left <= 0 || workers <= 1 {
		return size
	}
	share := (left + int64(4*workers) - 1) / int64(4*workers)
	if share < int64(size) {
		return int(share)
	}
	return size
}
