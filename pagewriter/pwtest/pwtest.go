// Package pwtest holds test helpers for the page writer and its sinks. Drive commits chunks
// from several goroutines the way the pipeline does; Memory is an in-memory sink that fails
// Commit unless every byte arrived exactly once; Uploader is an in-memory multipart store
// that records the order of its calls, assembles the object and injects failures.
package pwtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/pagewriter"
)

// Drive issues chunks tickets in order and lets workers goroutines fill (fill(c, b) appends
// chunk c's samples to b), publish and write them: each worker keeps up to two published
// chunks and writes the oldest once claimed, so writes run out of order. It returns the
// first error; the caller then aborts or finishes w.
func Drive(ctx context.Context, w *pagewriter.Writer, workers, chunks int, fill func(c int, b *pagewriter.Batch) error) error {
	type job struct {
		t *pagewriter.Ticket
		c int
	}
	q := make(chan job, workers)
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(q)
		for c := range chunks {
			select {
			case q <- job{w.Issue(), c}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	type pend struct {
		t *pagewriter.Ticket
		b *pagewriter.Batch
	}
	for range workers {
		g.Go(func() error {
			var ps []pend
			flush := func(keep int) error {
				for len(ps) > keep {
					if err := w.WaitClaimed(ctx, ps[0].t); err != nil {
						return err
					}
					if err := w.Write(ps[0].b); err != nil {
						return err
					}
					ps = ps[1:]
				}
				return nil
			}
			for j := range q {
				b := w.NewBatch()
				if err := fill(j.c, b); err != nil {
					w.Fail(err)
					return err
				}
				w.Publish(j.t, b)
				ps = append(ps, pend{j.t, b})
				select {
				case <-ps[0].t.Claimed():
					if err := flush(0); err != nil {
						return err
					}
				default:
					if err := flush(1); err != nil {
						return err
					}
				}
			}
			return flush(0)
		})
	}
	return g.Wait()
}

// ErrCoverage is Memory's Commit when a byte did not arrive exactly once.
var ErrCoverage = errors.New("pwtest: bytes not delivered exactly once")

// Memory is an in-memory sink that records every range delivered to it.
type Memory struct {
	mu        sync.Mutex
	name, dir string
	buf       []byte
	ranges    [][2]int64 // [off, end) of every WriteAt and Zero
	zeros     int        // Zero calls
	committed []byte
	aborts    int
	closed    bool
}

// NewMemory returns a sink named name whose scratch directory is dir.
func NewMemory(name, dir string) *Memory { return &Memory{name: name, dir: dir} }

// Opener returns a SinkOpener that opens m.
func (m *Memory) Opener() pagewriter.SinkOpener {
	return func(pagewriter.SinkLayout) (pagewriter.Sink, error) { return m, nil }
}

func (m *Memory) grow(end int64) {
	if int64(len(m.buf)) < end {
		m.buf = append(m.buf, make([]byte, end-int64(len(m.buf)))...)
	}
}

// WriteAt implements pagewriter.Sink.
func (m *Memory) WriteAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.grow(off + int64(len(p)))
	copy(m.buf[off:], p)
	m.ranges = append(m.ranges, [2]int64{off, off + int64(len(p))})
	return len(p), nil
}

// Zero implements pagewriter.Sink.
func (m *Memory) Zero(off, n int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.grow(off + n)
	clear(m.buf[off : off+n])
	m.ranges = append(m.ranges, [2]int64{off, off + n})
	m.zeros++
	return nil
}

// Commit fails with ErrCoverage unless the delivered ranges tile [0, size): every byte
// exactly once, none past the end.
func (m *Memory) Commit(size int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errors.New("pwtest: commit after commit or abort")
	}
	m.closed = true
	r := slices.Clone(m.ranges)
	slices.SortFunc(r, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	at := int64(0)
	for _, x := range r {
		if x[0] == x[1] {
			continue
		}
		if x[0] != at {
			if x[0] < at {
				return fmt.Errorf("%w: bytes [%d, %d) arrived twice", ErrCoverage, x[0], min(at, x[1]))
			}
			return fmt.Errorf("%w: bytes [%d, %d) never arrived", ErrCoverage, at, x[0])
		}
		at = x[1]
	}
	if at != size {
		return fmt.Errorf("%w: bytes arrived up to %d, the size is %d", ErrCoverage, at, size)
	}
	m.grow(size)
	m.committed = m.buf
	return nil
}

// Abort implements pagewriter.Sink.
func (m *Memory) Abort() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed && m.committed != nil {
		return nil
	}
	m.closed = true
	m.aborts++
	return nil
}

// Name implements pagewriter.Sink.
func (m *Memory) Name() string { return m.name }

// ScratchDir implements pagewriter.Sink.
func (m *Memory) ScratchDir() string { return m.dir }

// Bytes returns the committed bytes, or nil.
func (m *Memory) Bytes() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.committed
}

// Zeros returns the number of Zero calls.
func (m *Memory) Zeros() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.zeros
}

// Event is one call the Uploader saw: a part's upload starting or ending, Complete or Abort.
type Event struct {
	Kind string // "start", "end", "complete", "abort"
	Part int
	Size int
}

// Uploader is an in-memory multipart store. Set its fields before use.
type Uploader struct {
	// FailPart, when > 0, makes the upload of that part fail with FailErr.
	FailPart int
	// FailComplete makes Complete fail with FailErr.
	FailComplete bool
	FailErr      error
	// Gate, when set, holds every UploadPart until it can receive from it (or ctx ends).
	Gate chan struct{}

	mu       sync.Mutex
	parts    map[int][]byte
	events   []Event
	inFlight int
	peak     int
	object   []byte
}

func (u *Uploader) record(e Event) {
	u.events = append(u.events, e)
}

// UploadPart implements multipart.Uploader: it copies data.
func (u *Uploader) UploadPart(ctx context.Context, part int, data []byte) error {
	u.mu.Lock()
	u.record(Event{"start", part, len(data)})
	u.inFlight++
	u.peak = max(u.peak, u.inFlight)
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.inFlight--
		u.record(Event{"end", part, len(data)})
		u.mu.Unlock()
	}()
	if u.Gate != nil {
		select {
		case <-u.Gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if part == u.FailPart {
		return u.FailErr
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.parts == nil {
		u.parts = map[int][]byte{}
	}
	if _, dup := u.parts[part]; dup {
		return fmt.Errorf("pwtest: part %d uploaded twice", part)
	}
	u.parts[part] = slices.Clone(data)
	return nil
}

// Complete implements multipart.Uploader: the object is parts 1..n, which must all exist.
func (u *Uploader) Complete(ctx context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.record(Event{Kind: "complete"})
	if u.FailComplete {
		return u.FailErr
	}
	var obj []byte
	for k := 1; k <= len(u.parts); k++ {
		p, ok := u.parts[k]
		if !ok {
			return fmt.Errorf("pwtest: part %d missing of %d", k, len(u.parts))
		}
		obj = append(obj, p...)
	}
	if obj == nil {
		obj = []byte{}
	}
	u.object = obj
	return nil
}

// Abort implements multipart.Uploader.
func (u *Uploader) Abort(ctx context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.record(Event{Kind: "abort"})
	u.parts = nil
	return nil
}

// Object returns the completed object, or nil.
func (u *Uploader) Object() []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.object
}

// Events returns the calls seen so far.
func (u *Uploader) Events() []Event {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.events)
}

// Count returns how many events of kind were seen.
func (u *Uploader) Count(kind string) int {
	n := 0
	for _, e := range u.Events() {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// PeakInFlight returns the most UploadPart calls that ran at once.
func (u *Uploader) PeakInFlight() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.peak
}

// PartSizes returns the sizes of the stored parts by part number (1-based; index 0 unused).
func (u *Uploader) PartSizes() []int {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := make([]int, len(u.parts)+1)
	for k, p := range u.parts {
		if k < len(s) {
			s[k] = len(p)
		}
	}
	return s
}
