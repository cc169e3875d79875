package pipeline

import (
	"context"
	"fmt"
	"runtime"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// Pack is the packing stage: it returns a source that tokenizes the column of src's samples
// in order with p, joins
// the ids into one stream and cuts it into rows of SeqLen ids; the last partial row is
// dropped, or padded with PadID when PadLast. Each row is one sample whose column
// PackLayout.Column holds a KindBytes value: the row's ids in p's encoding, with Int the
// number of non-padding ids. Row i holds stream ids [i*SeqLen, (i+1)*SeqLen), keyed "row:i",
// its origin the documents it spans.
//
// Samples of src that carry an error, lack the column or hold text p refuses add nothing to
// the stream; they are passed on (with Err set) in stream order, for the error policy.
// Tokenization runs on PackLayout.Workers goroutines; the rows are the same for any number.
func Pack(src sources.Source, column string, p encoders.Packer) sources.Source {
	l := p.PackLayout()
	if l.Workers <= 0 {
		l.Workers = runtime.GOMAXPROCS(0)
	}
	return &packStage{src: src, column: column, p: p, l: l}
}

type packStage struct {
	src    sources.Source
	column string
	p      encoders.Packer
	l      encoders.PackLayout
}

// Len returns -1: the number of rows is known only at the end.
func (p *packStage) Len() int64 { return -1 }

type packDoc struct {
	s   sample.Sample
	ids []uint32
	err error
}

type packBatch struct {
	docs []packDoc
	done chan struct{}
}

// Documents are tokenized in batches of packBatchDocs documents or packBatchBytes of text.
const (
	packBatchDocs  = 256
	packBatchBytes = 256 << 10
)

// Run tokenizes in parallel batches and packs and emits in order.
func (p *packStage) Run(ctx context.Context, emit func(sample.Sample) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	work := make(chan *packBatch)
	order := make(chan *packBatch, 2*p.l.Workers+2)

	g.Go(func() error {
		defer close(order)
		defer close(work)
		b := &packBatch{}
		size := 0
		send := func() error {
			b.done = make(chan struct{})
			for _, ch := range []chan *packBatch{order, work} {
				select {
				case ch <- b:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			b, size = &packBatch{}, 0
			return nil
		}
		err := p.src.Run(gctx, func(s sample.Sample) error {
			b.docs = append(b.docs, packDoc{s: s})
			size += len(s.Value(p.column).Bytes)
			if len(b.docs) >= packBatchDocs || size >= packBatchBytes {
				return send()
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(b.docs) > 0 {
			return send()
		}
		return nil
	})
	for range p.l.Workers {
		g.Go(func() error {
			for b := range work {
				for i := range b.docs {
					p.tokenize(&b.docs[i])
				}
				close(b.done)
			}
			return nil
		})
	}

	emitErr := p.emitRows(gctx, order, emit)
	if emitErr != nil {
		cancel()
		_ = g.Wait()
		return emitErr
	}
	return g.Wait()
}

func (p *packStage) tokenize(d *packDoc) {
	if d.s.Err != nil {
		d.err = d.s.Err
		return
	}
	ids, err := p.p.DocumentIDs(&d.s, p.column)
	if err != nil {
		d.err = fmt.Errorf("%s: %w", d.s.Origin, err)
		return
	}
	d.ids = ids
	d.s.Values = nil
}

// docEnd records where a document's ids end in the stream, for the rows' Origin.
type docEnd struct {
	end    int64
	origin string
}

// emitRows packs the batches in order and emits rows and error samples.
func (p *packStage) emitRows(ctx context.Context, order <-chan *packBatch, emit func(sample.Sample) error) error {
	L := p.l.SeqLen
	var (
		pending  []uint32 // stream ids not yet emitted; pending[0] is stream position base
		base     int64
		total    int64
		ends     []docEnd
		index    int64
		row      int64
		inputAcc int64
	)
	emitOne := func(s sample.Sample) error {
		s.Index = index
		index++
		return emit(s)
	}
	emitRow := func(ids []uint32, nReal int) error {
		start, stop := base, base+int64(L)
		for len(ends) > 0 && ends[0].end <= start {
			ends = ends[1:]
		}
		origin := ""
		if len(ends) > 0 {
			origin = ends[0].origin
			last := ends[len(ends)-1].origin
			for _, e := range ends {
				if e.end >= stop {
					last = e.origin
					break
				}
			}
			if last != origin {
				origin += " .. " + last
			}
		}
		key := "row:" + strconv.FormatInt(row, 10)
		row++
		b := p.p.AppendRow(make([]byte, 0, L*p.l.Width), ids)
		s := sample.Sample{Key: key, Origin: origin, InputBytes: inputAcc,
			Values: []sample.Column{{Name: p.l.Column, Value: sample.Value{Kind: sample.KindBytes, Bytes: b, Int: int64(nReal)}}}}
		inputAcc = 0
		base += int64(L)
		return emitOne(s)
	}
	for b := range order {
		select {
		case <-b.done:
		case <-ctx.Done():
			return nil // the group's error explains
		}
		for i := range b.docs {
			d := &b.docs[i]
			if d.err != nil {
				if err := emitOne(sample.Sample{Index: d.s.Index, Key: d.s.Key, Origin: d.s.Origin, InputBytes: d.s.InputBytes, Err: d.err}); err != nil {
					return err
				}
				continue
			}
			pending = append(pending, d.ids...)
			total += int64(len(d.ids))
			inputAcc += d.s.InputBytes
			ends = append(ends, docEnd{end: total, origin: d.s.Origin})
			d.ids = nil
			k := 0
			for ; k+L <= len(pending); k += L {
				if err := emitRow(pending[k:k+L], L); err != nil {
					return err
				}
			}
			if k > 0 {
				pending = append(pending[:0], pending[k:]...)
			}
		}
	}
	if len(pending) > 0 && p.l.PadLast {
		nReal := len(pending)
		for len(pending) < L {
			pending = append(pending, p.l.PadID)
		}
		return emitRow(pending, nReal)
	}
	return nil
}
