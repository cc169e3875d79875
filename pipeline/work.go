package pipeline

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/dedup"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// job is one chunk of consecutive samples with its claim ticket: the samples, or a batch of a
// sources.BatchSource that the worker decodes.
type job struct {
	t       *pagewriter.Ticket
	samples []sample.Sample
	batch   sources.Batch
	before  []byte // the source's token of the place before the chunk (resumable runs)
}

// pending is an encoded chunk waiting for its turn to claim.
type pending struct {
	t    *pagewriter.Ticket
	b    *pagewriter.Batch
	rej  []*SampleError
	n    int64      // samples in the chunk, rejected included
	in   int64      // input bytes
	pays [][2]int64 // per field: non-empty payloads and their bytes
	// mem holds the samples of a decoded batch: it is reused for the next batch once the
	// chunk is written (the page writer then holds none of its payloads).
	mem sources.Memory
	// With dedup: the keys of the chunk's written samples and their payloads' sizes.
	dups    []dupItem
	dupLens []int64
	before  []byte // the job's
}

// worker is one encoder's state: its encoded chunks, published and waiting to be claimed
// or written, in chunk order.
type worker struct {
	r         *runner
	pend      []*pending
	pendBytes int64 // payload bytes in pend
	free      []*pending
	row       []byte
	pays      [][]byte
	hasher    *dedup.Hasher // with dedup
	field     int           // the field encoding now, -1 outside Field.Encode
}

// writeClaimed writes the chunks at the head of pend that have claimed their place (claims
// happen in chunk order, so the claimed ones are a prefix).
func (wk *worker) writeClaimed(ctx context.Context, block bool) error {
	for len(wk.pend) > 0 {
		p := wk.pend[0]
		if !block {
			select {
			case <-p.t.Claimed():
			default:
				return nil
			}
		}
		if err := wk.r.w.WaitClaimed(ctx, p.t); err != nil {
			return err
		}
		if err := wk.r.w.Write(p.b); err != nil {
			return err
		}
		wk.pend[0] = nil
		wk.pend = wk.pend[1:]
		wk.pendBytes -= p.b.PayloadBytes()
		p.b.Reset()
		// A ticket links to its successors: one kept here would keep every later ticket of
		// the run alive.
		p.t, p.rej = nil, p.rej[:0]
		wk.free = append(wk.free, p)
		block = false
	}
	return nil
}

// work encodes chunks and publishes them for claiming in chunk order; a chunk's claim runs
// as soon as its predecessor has claimed, on whichever goroutine sees that first, and the
// worker writes its chunks once claimed. It keeps up to maxPending unclaimed chunks and goes
// on encoding meanwhile; with more it blocks for its oldest one's claim (back-pressure).
func (r *runner) work(ctx context.Context, jobs <-chan *job) error {
	wk := &worker{r: r, row: make([]byte, r.rowSize), pays: make([][]byte, len(r.cfg.Fields))}
	for {
		full := len(wk.pend) >= maxPending || (len(wk.pend) > 0 && wk.pendBytes >= maxPendingBytes)
		if err := wk.writeClaimed(ctx, full); err != nil {
			return err
		}
		if full {
			continue
		}
		var claimed <-chan struct{}
		if len(wk.pend) > 0 {
			claimed = wk.pend[0].t.Claimed()
		}
		start := time.Now()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-claimed:
			// Neither a new chunk nor the claim was there: the worker was starved of input
			// (with input it would have gone on encoding).
			r.inputWait.Add(int64(time.Since(start)))
		case j, ok := <-jobs:
			r.inputWait.Add(int64(time.Since(start)))
			if !ok {
				for len(wk.pend) > 0 {
					if err := wk.writeClaimed(ctx, true); err != nil {
						return err
					}
				}
				return nil
			}
			var p *pending
			if n := len(wk.free); n > 0 {
				p, wk.free = wk.free[n-1], wk.free[:n-1]
			} else {
				p = &pending{b: r.w.NewBatch()}
			}
			if err := r.encode(ctx, j, p, wk); err != nil {
				return err
			}
			wk.pend = append(wk.pend, p)
			wk.pendBytes += p.b.PayloadBytes()
			r.w.Publish(p.t, p.b)
		}
	}
}

// encode encodes every sample of j into p. Bad samples become rejects; only a broken
// invariant (or cancellation) is an error.
func (r *runner) encode(ctx context.Context, j *job, p *pending, wk *worker) (err error) {
	p.t, p.rej, p.n, p.in, p.before = j.t, p.rej[:0], int64(len(j.samples)), 0, j.before
	if p.pays == nil {
		p.pays = make([][2]int64, len(r.cfg.Fields))
	}
	clear(p.pays)
	p.b.OnClaim = func(int64) error { return r.account(p) }
	if r.dd != nil {
		clear(p.dups)
		p.dups, p.dupLens = p.dups[:0], p.dupLens[:0]
		p.b.BeforeClaim = func(firstRow int64) error { return r.dedupClaim(p, firstRow) }
	}
	samples := j.samples
	if j.batch != nil {
		// The previous chunk in p was written: its samples' memory is free for this one.
		j.batch.Decode(&p.mem)
		j.batch, samples = nil, p.mem.Samples
		p.n = int64(len(samples))
	}
	// A panic of an encoder is a bug of ours, whatever the sample (an encoder turns a panic
	// of a third-party decoder on the sample's bytes into its error, see encoders.Guard): it
	// stops the run with a *PanicError naming the field and the sample, with the stack. One
	// deferred recover serves the whole chunk; encodeSample marks the field it is in.
	wk.field = -1
	cur := -1
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		where := "encoding a chunk"
		if cur >= 0 {
			where = "encoding sample " + quote.S(samples[cur].Origin)
		}
		if f := wk.field; f >= 0 {
			where = fmt.Sprintf("field %q %s", r.cfg.Fields[f].Field.Name(), where)
		}
		wk.field = -1
		err = &PanicError{Where: where, Value: p, Stack: debug.Stack()}
	}()
	for i := range samples {
		s := &samples[i]
		cur = i
		p.in += s.InputBytes
		if i%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if s.Err != nil {
			p.rej = append(p.rej, &SampleError{Origin: strings.Clone(s.Origin), Key: strings.Clone(s.Key), Reason: reasonOf(s.Err, true), Err: s.Err, pos: i})
			continue
		}
		e := r.encodeSample(s, wk)
		if e != nil {
			e.pos = i
			p.rej = append(p.rej, e)
			continue
		}
		row := p.b.Len()
		if err := p.b.Append(wk.row, wk.pays); err != nil {
			return fmt.Errorf("%s: %w", s.Origin, err)
		}
		if r.dd != nil {
			wk.dedupKey(p, i, row, s.Origin, s.Key)
		}
		for f, pay := range wk.pays {
			if len(pay) > 0 {
				p.pays[f][0]++
				p.pays[f][1] += int64(len(pay))
			}
		}
	}
	clear(wk.pays)
	if j.samples == nil {
		return nil // a batch: its samples stay in p.mem until p is reused
	}
	// The chunk's slice goes back to the producer, emptied so that it keeps no value alive.
	clear(j.samples)
	select {
	case r.free <- j.samples[:0]:
	default:
	}
	j.samples = nil
	return nil
}

// samples returns an empty slice for a chunk of up to size samples (it may grow past that):
// one an earlier chunk emptied, or a new one.
func (r *runner) samples(size int) []sample.Sample {
	select {
	case s := <-r.free:
		return s
	default:
		return make([]sample.Sample, 0, size)
	}
}

// ctxEvery is how many samples encode encodes between two checks for cancellation.
const ctxEvery = 64

// encodeSample encodes one sample into wk.row and wk.pays: a bad sample is se. While a field
// encodes, wk.field is its index (the deferred recover of encode names it in a panic's error).
func (r *runner) encodeSample(s *sample.Sample, wk *worker) (se *SampleError) {
	row, pays := wk.row, wk.pays
	clear(row)
	clear(pays)
	next := 0 // sources emit their columns in the order of the fields: look there first
	for f := range r.cfg.Fields {
		b := &r.cfg.Fields[f]
		meta := row[r.offs[f] : r.offs[f]+r.sizes[f]]
		var v sample.Value
		i := s.Find(b.Column, next)
		ok := i >= 0
		if ok {
			v, next = s.Values[i].Value, i+1
		}
		if !ok || v.Kind == sample.KindNone {
			if b.Optional {
				continue
			}
			err := fmt.Errorf("%w %q", ErrMissingColumn, b.Column)
			return &SampleError{Origin: strings.Clone(s.Origin), Key: strings.Clone(s.Key), Field: b.Field.Name(), Reason: reasonOf(err, false), Err: err}
		}
		wk.field = f
		payload, err := b.Field.Encode(v, meta)
		wk.field = -1
		if err == nil {
			err = mldf.CheckPayloadSize(len(payload))
		}
		if err == nil && len(payload) > 0 && !r.hasRef[f] {
			err = fmt.Errorf("%s field returned a %d-byte payload", b.Field.Type(), len(payload))
		}
		if err != nil {
			return &SampleError{Origin: strings.Clone(s.Origin), Key: strings.Clone(s.Key), Field: b.Field.Name(), Reason: reasonOf(err, false), Err: err}
		}
		if r.hasRef[f] {
			clear(meta[:12]) // the writer owns the payload reference
		}
		pays[f] = payload
	}
	return nil
}
