package pagewriter

import (
	"context"
	"errors"
	"fmt"
	"github.com/mldf/convert/pagewriter/multipart"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// A Container is an output format seen from the page writer: where payloads go and how they
// are recorded. It supplies only its layout, its row translation, how one payload is recorded
// in its row and its allocation entry, and its finalizer; the claims, the parallel writes,
// the spills and the sink are the Writer's. Its methods may be called concurrently (Place
// for different batches), so it must not keep per-batch state.
type Container interface {
	// Layout is fixed when the container is created.
	Layout() Layout
	// Append translates one sample into b: it adds one row (Batch.AddRow) and an Item per
	// payload to record (Batch.AddItem). On error the Writer rolls b back.
	Append(b *Batch, row []byte, payloads [][]byte) error
	// Place records item it, placed at off, in its row (the batch's row it.Row) and encodes
	// its allocation entry (EntrySize bytes) into entry. sample is the row's index in the
	// output. It runs as the batch is written, in parallel with other batches.
	Place(row []byte, it *Item, off, sample int64, entry []byte)
	// Finish writes every byte outside the data region through f (header, descriptors,
	// tables, gaps), in increasing offset order except the header, and returns the result.
	// The Writer commits the sink with Result.Size.
	Finish(f *Final) (Result, error)
}

// Layout is what a Container tells the Writer when it is created.
type Layout struct {
	// Rule places payloads.
	Rule Rule
	// DataStart is where the data region starts, or -1 when it is known only at Finish:
	// then payloads are placed from 0 and staged in a scratch file that the finalizer copies
	// into place (Final.CopyData), adding the start to every pointer it records.
	DataStart int64
	// RowSize and EntrySize are the sizes of one row and one allocation entry (> 0).
	RowSize, EntrySize int
	// MaxRows, when > 0, fails a claim that would take the row count past it, with
	// TooMany (ErrTooManyRows when nil).
	MaxRows int64
	TooMany error
}

// An Item is one payload of a batch as its container records it.
type Item struct {
	// Row is the row's index in the batch and Field the field's index (set by AddItem and
	// by the container).
	Row, Field int32
	// Check is a value the container computed at Append (MLDF: the payload's CRC-32C).
	Check uint32
	// Space is the number of bytes to place (> 0).
	Space int64
	// Data is written at the placed offset (at most Space bytes); the rest of the space
	// stays zero.
	Data []byte
}

// Options configure a Writer.
type Options struct {
	// ScratchDir holds the spill files; "" means the sink's ScratchDir.
	ScratchDir string
	// Wrap, when set, wraps every spill file ("rows", "alloc", "data") (fault injection in
	// tests).
	Wrap WrapFunc
	// Partial, when set, makes the writer resumable (see Partial): named spill files beside
	// the target, Sync, Suspend, and a start from a checkpoint's State.
	Partial *Partial
}

// Writer writes one output from many goroutines. Chunks of samples are appended: each chunk
// holds a Ticket from Issue (issued in sample order), is filled as a Batch and committed with
// Commit, or with Publish, WaitClaimed and Write (which lets the worker go on encoding while
// its chunk waits for its turn). Finish runs the container's finalizer and commits the sink;
// Abort discards the output. Every method but Issue may be called concurrently.
type Writer struct {
	c         Container
	lay       Layout
	sink      Sink
	rows      *Spill
	alloc     *Spill
	data      *Spill // the staged data region (Layout.DataStart < 0), else nil
	seq       *Sequencer
	unwritten atomic.Int64 // claimed batches not yet written
	state     atomic.Int32 // 0 open, 1 finished or aborted
	written   atomic.Int64 // payload and gap bytes written to the data region
	payloads  atomic.Int64 // payload bytes
	writeNs   atomic.Int64
	track     *tracker  // a resumable writer's written chunks (Options.Partial), else nil
	segs      sync.Pool // *[]byte buffers for writeRange, held only during a write
	vecs      sync.Pool // *[][]byte gather lists for writeRange (emptied: they hold no payload)
}

// New opens the sink and the spills and returns a Writer of c's output. Nothing appears at
// the sink's target until Finish succeeds.
func New(open SinkOpener, c Container, opt Options) (*Writer, error) {
	lay := c.Layout()
	if lay.Rule == nil || lay.RowSize <= 0 || lay.EntrySize <= 0 {
		return nil, errors.New("pagewriter: container layout without a rule, a row size or an entry size")
	}
	if lay.TooMany == nil {
		lay.TooMany = ErrTooManyRows
	}
	w := &Writer{c: c, lay: lay}
	sink, err := open(SinkLayout{Stream: max(lay.DataStart, 0)})
	if err != nil {
		return nil, err
	}
	if mp, ok := sink.(*multipart.Sink); ok && opt.Partial != nil {
		t, err := openTee(mp, SinkLayout{Stream: max(lay.DataStart, 0)}, lay.DataStart < 0, opt.Partial, opt.Wrap)
		if err != nil {
			mp.Detach()
			return nil, err
		}
		sink = t
	}
	w.sink = sink
	dir := opt.ScratchDir
	if dir == "" {
		dir = sink.ScratchDir()
	}
	start := Position{Cursor: max(lay.DataStart, 0)}
	if p := opt.Partial; p != nil {
		var from State
		if p.From != nil {
			from = *p.From
			start = from.Position
			w.payloads.Store(from.Payloads)
			w.written.Store(from.Payloads)
		}
		w.track = newTracker()
		if w.rows, err = openPartialSpill(p.Target, rowsSuffix, "rows", spillLen(from.Position.Rows, lay.RowSize), opt.Wrap); err == nil {
			w.alloc, err = openPartialSpill(p.Target, allocSuffix, "alloc", spillLen(from.Position.Entries, lay.EntrySize), opt.Wrap)
		}
		if err == nil && lay.DataStart < 0 {
			w.data, err = openPartialSpill(p.Target, stagedSuffix, "data", from.Position.Cursor, opt.Wrap)
		}
	} else {
		if w.rows, err = CreateSpill(dir, "rows", opt.Wrap); err == nil {
			w.alloc, err = CreateSpill(dir, "alloc", opt.Wrap)
		}
		if err == nil && lay.DataStart < 0 {
			w.data, err = CreateSpill(dir, "data", opt.Wrap)
		}
	}
	if err != nil {
		if w.track != nil {
			// Keep what an earlier run left: the caller decides whether it starts over.
			w.closeSpills()
			if fs, ok := sink.(*fileSink); ok {
				fs.stopBehind()
				fs.o.af.Keep(fs.o.File.Close)
			}
			if ds, ok := sink.(*directSink); ok {
				ds.suspend()
			}
			if t, ok := sink.(*teeSink); ok {
				t.Detach()
			}
		} else {
			w.cleanup()
		}
		return nil, fmt.Errorf("create %s: %w", sink.Name(), err)
	}
	w.seq = NewSequencer(start)
	return w, nil
}

// Container returns the writer's container.
func (w *Writer) Container() Container { return w.c }

// Path returns the sink's name (the output path or URL).
func (w *Writer) Path() string { return w.sink.Name() }

// RowSize returns the size of one row of the container's table.
func (w *Writer) RowSize() int { return w.lay.RowSize }

// Issue returns the ticket of the next chunk. Call it from one goroutine, in sample order.
func (w *Writer) Issue() *Ticket { return w.seq.Issue() }

// Fail makes the writer fail with err: waiting commits return it and Finish refuses.
func (w *Writer) Fail(err error) { w.seq.Fail(err) }

// A Batch is one chunk's samples: their rows and payloads. A Batch is used by one goroutine
// at a time and can be reused after Reset.
type Batch struct {
	w     *Writer
	rows  []byte
	items []Item
	n     int
	bytes int64

	// OnClaim, when set, is called as the batch claims its place, in chunk order and before
	// any later chunk claims, with the index of the batch's first row. An error fails the
	// writer. It must be quick: it holds up every later chunk.
	OnClaim func(firstRow int64) error
	// BeforeClaim, when set, is called first as the batch claims its place, in chunk order,
	// with the index its first row will have, before its payloads are placed: it may take
	// rows out with Remove (a stage that decides in sample order, as dedup does). An error
	// fails the writer. It must be quick too.
	BeforeClaim func(firstRow int64) error

	// Set by claim for Write.
	offs           []int64
	entries        []byte
	claimed        bool
	base           Position
	seq            int64
	dataFrom, data int64 // the claimed range of the data region: [dataFrom, data)
}

// NewBatch returns an empty batch for w.
func (w *Writer) NewBatch() *Batch { return &Batch{w: w} }

// Reset empties b for reuse, keeping its buffers. Payload slices handed to Append are
// released.
func (b *Batch) Reset() {
	clear(b.items)
	b.rows, b.items, b.n, b.bytes, b.OnClaim, b.BeforeClaim = b.rows[:0], b.items[:0], 0, 0, nil, nil
}

// Len returns the number of rows in b.
func (b *Batch) Len() int { return b.n }

// PayloadBytes returns the number of payload bytes in b.
func (b *Batch) PayloadBytes() int64 { return b.bytes }

// Items returns b's items (for containers and tests; do not modify after Publish).
func (b *Batch) Items() []Item { return b.items }

// Append adds one sample through the container: a row and its payloads by field index (nil,
// or one slice per field with nil or empty where the field stores none). b keeps the payload
// slices until Reset. A refused sample leaves b as it was.
func (b *Batch) Append(row []byte, payloads [][]byte) error {
	nr, ni, nb := len(b.rows), len(b.items), b.bytes
	if err := b.w.c.Append(b, row, payloads); err != nil {
		b.rows = b.rows[:nr]
		clear(b.items[ni:])
		b.items, b.bytes = b.items[:ni], nb
		return err
	}
	b.n++
	return nil
}

// AddRow adds the row of the sample being appended (a copy of src, or zeros when src is nil)
// and returns it for the container to fill. Containers call it once per Append.
func (b *Batch) AddRow(src []byte) []byte {
	rs := b.w.lay.RowSize
	at := len(b.rows)
	if len(src) == rs {
		b.rows = append(b.rows, src...)
	} else {
		b.rows = slices.Grow(b.rows, rs)[:at+rs]
		r := b.rows[at:]
		clear(r[copy(r, src):])
	}
	return b.rows[at : at+rs : at+rs]
}

// AddItem adds a payload of the sample being appended, in placement order. Row is set here.
func (b *Batch) AddItem(it Item) {
	it.Row = int32(b.n)
	b.items = append(b.items, it)
	b.bytes += int64(len(it.Data))
}

// Publish hands b over to be claimed in t's turn: its place is claimed as soon as every
// earlier chunk has claimed, on this goroutine if the turn is already open, else on the
// goroutine that opens it. b must not be touched until t.Claimed() is closed; then Write it.
func (w *Writer) Publish(t *Ticket, b *Batch) {
	w.seq.Publish(t, func() error { return w.claim(t, b) })
}

// WaitClaimed waits until the batch published with t has claimed its place and returns the
// claim's error. It ends early when ctx is done or the writer failed.
func (w *Writer) WaitClaimed(ctx context.Context, t *Ticket) error {
	return w.seq.WaitClaimed(ctx, t)
}

// Commit publishes b, waits for its claim (not for any earlier chunk's write) and writes it.
func (w *Writer) Commit(ctx context.Context, t *Ticket, b *Batch) error {
	w.Publish(t, b)
	if err := w.WaitClaimed(ctx, t); err != nil {
		return err
	}
	return w.Write(b)
}

// claim runs with the baton held: it places b's items after the cursor, runs OnClaim, and
// passes the baton on.
func (w *Writer) claim(t *Ticket, b *Batch) error {
	if err := w.seq.Err(); err != nil {
		return err
	}
	if w.state.Load() != 0 {
		return ErrClosed
	}
	base := w.seq.Position()
	if b.BeforeClaim != nil {
		if err := b.BeforeClaim(base.Rows); err != nil {
			w.seq.Fail(err)
			return err
		}
	}
	if m := w.lay.MaxRows; m > 0 && base.Rows+int64(b.n) > m {
		err := fmt.Errorf("%w: room for %d rows (the count announced at the start) and more came", w.lay.TooMany, m)
		w.seq.Fail(err)
		return err
	}
	b.offs = b.offs[:0]
	cur := base.Cursor
	for i := range b.items {
		off, next, err := w.lay.Rule.Place(cur, b.items[i].Space)
		if err != nil {
			err = fmt.Errorf("place chunk %d: %w", t.Seq, err)
			w.seq.Fail(err)
			return err
		}
		b.offs = append(b.offs, off)
		cur = next
	}
	if b.OnClaim != nil {
		if err := b.OnClaim(base.Rows); err != nil {
			w.seq.Fail(err)
			return err
		}
	}
	b.base, b.seq, b.claimed, b.dataFrom, b.data = base, t.Seq, true, base.Cursor, cur
	w.unwritten.Add(1)
	w.seq.Pass(t, Position{Cursor: cur, Rows: base.Rows + int64(b.n), Entries: base.Entries + int64(len(b.items))})
	return nil
}

// Write writes a claimed batch at its place. Writes of different batches run in parallel.
func (w *Writer) Write(b *Batch) error {
	if !b.claimed {
		return errors.New("pagewriter: write of a batch that was not claimed")
	}
	b.claimed = false
	defer w.unwritten.Add(-1)
	if err := w.write(b); err != nil {
		err = fmt.Errorf("write %s (chunk %d): %w", w.sink.Name(), b.seq, err)
		w.seq.Fail(err)
		return err
	}
	if w.track != nil {
		w.track.written(b.seq)
	}
	return nil
}

// write records b's items in its rows and entries from their claimed offsets, delivers its
// range of the data region, and writes rows and entries to the spills.
func (w *Writer) write(b *Batch) error {
	start := time.Now()
	defer func() { w.writeNs.Add(int64(time.Since(start))) }()
	rs, es := int64(w.lay.RowSize), w.lay.EntrySize
	need := len(b.items) * es
	if cap(b.entries) < need {
		b.entries = make([]byte, need)
	}
	b.entries = b.entries[:need]
	for k := range b.items {
		it := &b.items[k]
		r := int64(it.Row)
		w.c.Place(b.rows[r*rs:(r+1)*rs], it, b.offs[k], b.base.Rows+r, b.entries[k*es:(k+1)*es])
	}
	seg, _ := w.segs.Get().(*[]byte)
	if seg == nil {
		seg = new([]byte)
	}
	vecs, _ := w.vecs.Get().(*[][]byte)
	if vecs == nil {
		vecs = new([][]byte)
	}
	var dst rangeWriter = w.sink
	if w.data != nil {
		dst = spillRange{w.data}
	}
	n, err := writeRange(dst, b.dataFrom, b.data, b.items, b.offs, seg, vecs)
	w.segs.Put(seg)
	w.vecs.Put(vecs)
	w.written.Add(n)
	w.payloads.Add(b.bytes)
	if err != nil {
		return err
	}
	if len(b.rows) > 0 {
		if _, err := w.rows.WriteAt(b.rows, b.base.Rows*rs); err != nil {
			return fmt.Errorf("metadata scratch: %w", err)
		}
	}
	if len(b.entries) > 0 {
		if _, err := w.alloc.WriteAt(b.entries, b.base.Entries*int64(es)); err != nil {
			return fmt.Errorf("allocation scratch: %w", err)
		}
	}
	return nil
}

// Result describes a finished output.
type Result struct {
	Path                                string
	Samples, Entries                    int64
	DataPtr, MetadataPtr, AllocTablePtr int64
	Size                                int64 // file size
	Pages                               int64 // pages of the data region
	PayloadBytes                        int64
	Checksum                            uint64 // the header checksum, where the format has one
}

// Stats describe the writer's work so far; safe to call at any time.
type Stats struct {
	Position     Position
	Written      int64 // bytes written to the data region (payloads and joined gaps)
	PayloadBytes int64
	WriteTime    time.Duration // summed over writers
	Wait         WaitStats
}

// Stats returns the writer's statistics.
func (w *Writer) Stats() Stats {
	return Stats{Position: w.seq.Position(), Written: w.written.Load(), PayloadBytes: w.payloads.Load(),
		WriteTime: time.Duration(w.writeNs.Load()), Wait: w.seq.Stats()}
}

// Finish runs the container's finalizer (tables, header) and commits the sink: the output
// appears at its target. Every issued ticket must have been committed and every Commit
// returned. On error the sink is aborted and the target is untouched.
func (w *Writer) Finish() (Result, error) {
	if !w.state.CompareAndSwap(0, 1) {
		return Result{}, ErrClosed
	}
	res, err := w.finish()
	if err != nil {
		w.cleanup()
		return Result{}, err
	}
	return res, nil
}

func (w *Writer) finish() (Result, error) {
	if err := w.seq.Err(); err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrFailed, err)
	}
	if !w.seq.AllPassed() {
		return Result{}, ErrUnclaimed
	}
	if n := w.unwritten.Load(); n != 0 {
		return Result{}, fmt.Errorf("%w: %d claimed chunks not written", ErrUnclaimed, n)
	}
	pos := w.seq.Position()
	if t, ok := w.sink.(*teeSink); ok {
		t.final.Store(true)
	}
	res, err := w.c.Finish(&Final{w: w, pos: pos})
	if err != nil {
		return Result{}, err
	}
	w.closeSpills()
	if err := w.sink.Commit(res.Size); err != nil {
		return Result{}, err
	}
	w.removeSpills()
	res.Path, res.Samples, res.Entries, res.PayloadBytes = w.sink.Name(), pos.Rows, pos.Entries, w.payloads.Load()
	return res, nil
}

// Abort discards the output: the sink is aborted and the target untouched. It fails pending
// commits and is safe to call at any time, more than once, and after Finish (when it does
// nothing).
func (w *Writer) Abort() error {
	w.seq.Fail(errAborted)
	if !w.state.CompareAndSwap(0, 1) {
		return nil
	}
	return w.cleanup()
}

var errAborted = errors.New("pagewriter: aborted")

func (w *Writer) closeSpills() {
	for _, s := range w.spills() {
		if s != nil {
			s.Close()
		}
	}
}

func (w *Writer) cleanup() error {
	w.closeSpills()
	w.removeSpills()
	if w.sink != nil {
		return w.sink.Abort()
	}
	return nil
}

// Final is what a container's finalizer writes through: the final claim position and the
// sink, with the spills streamed into it.
type Final struct {
	w   *Writer
	pos Position
}

// Position returns the final claim position: the end of the data region (relative to 0 when
// it was staged), the number of rows and of allocation entries.
func (f *Final) Position() Position { return f.pos }

// Name names the output, for messages.
func (f *Final) Name() string { return f.w.sink.Name() }

// WriteAt writes p at off.
func (f *Final) WriteAt(p []byte, off int64) error {
	_, err := f.w.sink.WriteAt(p, off)
	return err
}

// Zero declares [off, off+n) zero bytes; n <= 0 does nothing.
func (f *Final) Zero(off, n int64) error {
	if n <= 0 {
		return nil
	}
	return f.w.sink.Zero(off, n)
}

// CopyRows streams the rows to off, in pieces of whole rows of at most 1 MiB. fix, when set,
// may rewrite a piece (first is the index of its first row) before it is fed to h (when set)
// and written.
func (f *Final) CopyRows(off int64, fix func(rows []byte, first int64), h io.Writer) error {
	return f.copySpill(f.w.rows, int64(f.w.lay.RowSize), f.pos.Rows, off, fix, h)
}

// CopyEntries streams the allocation entries to off, like CopyRows.
func (f *Final) CopyEntries(off int64, fix func(entries []byte, first int64), h io.Writer) error {
	return f.copySpill(f.w.alloc, int64(f.w.lay.EntrySize), f.pos.Entries, off, fix, h)
}

// CopyData copies a staged data region (Layout.DataStart < 0) to off: Position().Cursor
// bytes, gaps included.
func (f *Final) CopyData(off int64) error {
	d := f.w.data
	if d == nil {
		return errors.New("pagewriter: CopyData without a staged data region")
	}
	n := f.pos.Cursor
	if n == 0 {
		return nil
	}
	// The scratch file is as long as the region (a reserved last byte may be unwritten).
	if err := d.Truncate(n); err != nil {
		return fmt.Errorf("size the data scratch file: %w", err)
	}
	return copyToSink(f.w.sink, d, off, n)
}

// copyBuf is the size of the buffers the finalizer's copies use.
const copyBuf = 1 << 20

func (f *Final) copySpill(s *Spill, rec, n, off int64, fix func([]byte, int64), h io.Writer) error {
	per := max(1, copyBuf/rec)
	buf := make([]byte, min(n, per)*rec)
	for done := int64(0); done < n; {
		k := min(per, n-done)
		b := buf[:k*rec]
		if _, err := s.ReadAt(b, done*rec); err != nil {
			return fmt.Errorf("read scratch at %d: %w", done*rec, err)
		}
		if fix != nil {
			fix(b, done)
		}
		if h != nil {
			h.Write(b)
		}
		if _, err := f.w.sink.WriteAt(b, off+done*rec); err != nil {
			return err
		}
		done += k
	}
	return nil
}
