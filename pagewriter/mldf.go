package pagewriter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/manifest"
)

// FieldDescOffset is where this writer puts the field descriptors (8-aligned, after the
// signature and header).
const FieldDescOffset = 80

// Options configure an MLDF Writer.
type Options struct {
	// PageSize is a power of two >= 4096; 0 means manifest.DefaultPageSize.
	PageSize int64
	// Fields are the field descriptors in order.
	Fields []manifest.FieldDesc
	// Checksums sets the checksummed flag: CRC-32C per payload and the header checksum.
	Checksums bool
	// Wrap, when set, wraps every file the writer opens (fault injection in tests).
	Wrap WrapFunc
	// Preallocate reserves disk space ahead of the writes (fallocate, 64 MiB at a time), so a
	// full disk shows early. Off by default: it did not speed up writes on ext4 here.
	Preallocate bool

	named bool // use a named temporary file even where O_TMPFILE works (tests)
}

// preallocStep is how far ahead of the cursor disk space is reserved.
const preallocStep = 64 << 20

// Writer writes one MLDF file. Chunks of samples are appended by many goroutines: each chunk
// holds a Ticket from Issue (issued in sample order), is filled as a Batch and committed with
// Commit, or with Publish, WaitClaimed and Write (which lets the worker go on encoding while
// its chunk waits for its turn). Finish writes the tables and the header and publishes the
// file; Abort discards it. Every method but Issue may be called concurrently.
type Writer struct {
	opt       Options
	out       *Output
	rows      *Spill
	alloc     *Spill
	seq       *Sequencer
	rule      Rule
	rowSize   int64
	refs      []int // per field: offset of its payload reference in a row, or -1
	descs     []byte
	dataPtr   int64
	reserved  int64 // end of the preallocated space; owned by the claim baton
	noPre     atomic.Bool
	unwritten atomic.Int64 // claimed batches not yet written
	state     atomic.Int32 // 0 open, 1 finished or aborted
	written   atomic.Int64 // payload and gap bytes written to the data region
	payloads  atomic.Int64 // payload bytes
	writeNs   atomic.Int64
	segs      sync.Pool // *[]byte buffers for WriteSegments, held only during a write
}

// Create starts an MLDF file at path. Nothing appears at path until Finish succeeds.
func Create(path string, opt Options) (*Writer, error) {
	if opt.PageSize == 0 {
		opt.PageSize = manifest.DefaultPageSize
	}
	if err := ValidPageSize(opt.PageSize); err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if len(opt.Fields) > 0xFFFF {
		return nil, fmt.Errorf("create %s: %d fields (at most 65535)", path, len(opt.Fields))
	}
	w := &Writer{opt: opt, rule: SpanRule{PageSize: opt.PageSize}}
	types := make([]manifest.TypeID, len(opt.Fields))
	w.descs = make([]byte, manifest.FieldDescSize*len(opt.Fields))
	seen := map[string]bool{}
	for i, d := range opt.Fields {
		size, _ := manifest.MetaSize(d.Type)
		if size == 0 {
			return nil, fmt.Errorf("create %s: field %q: %w %d", path, d.Name, manifest.ErrUnknownType, uint16(d.Type))
		}
		if d.MetadataSize == 0 {
			d.MetadataSize = uint32(size)
		}
		if seen[d.Name] {
			return nil, fmt.Errorf("create %s: %w: %q appears twice", path, manifest.ErrFieldName, d.Name)
		}
		seen[d.Name] = true
		if err := d.Put(w.descs[i*manifest.FieldDescSize:]); err != nil {
			return nil, fmt.Errorf("create %s: field %d: %w", path, i, err)
		}
		types[i] = d.Type
	}
	layout, err := manifest.Layout(types)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	w.rowSize = int64(layout.Size)
	w.refs = make([]int, len(types))
	for i, t := range types {
		w.refs[i] = -1
		if _, hasRef := manifest.MetaSize(t); hasRef {
			w.refs[i] = layout.Offsets[i]
		}
	}
	w.dataPtr = alignUp(FieldDescOffset+int64(len(w.descs)), opt.PageSize)
	w.seq = NewSequencer(Position{Cursor: w.dataPtr})

	if w.out, err = createOutput(path, opt.Wrap, opt.named); err != nil {
		return nil, err
	}
	dir := dirOf(path)
	if w.rows, err = CreateSpill(dir, "rows", opt.Wrap); err == nil {
		w.alloc, err = CreateSpill(dir, "alloc", opt.Wrap)
	}
	if err == nil {
		// Signature, a zero header (written again last) and the descriptors.
		pre := make([]byte, FieldDescOffset, FieldDescOffset+len(w.descs))
		copy(pre, manifest.Signature)
		pre = append(pre, w.descs...)
		_, err = w.out.WriteAt(pre, 0)
		if err != nil {
			err = fmt.Errorf("write %s: %w", w.out.TempPath(), err)
		}
	}
	if err != nil {
		w.cleanup()
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return w, nil
}

// Path returns the output path.
func (w *Writer) Path() string { return w.out.Target() }

// RowSize returns the size of one metadata row.
func (w *Writer) RowSize() int { return int(w.rowSize) }

// DataPtr returns the start of the data region.
func (w *Writer) DataPtr() int64 { return w.dataPtr }

// Issue returns the ticket of the next chunk. Call it from one goroutine, in sample order.
func (w *Writer) Issue() *Ticket { return w.seq.Issue() }

// Fail makes the writer fail with err: waiting commits return it and Finish refuses.
func (w *Writer) Fail(err error) { w.seq.Fail(err) }

// A Batch is one chunk's encoded samples: their metadata rows and payloads. A Batch is used
// by one goroutine at a time and can be reused after Reset.
type Batch struct {
	w     *Writer
	rows  []byte
	pay   [][]byte // n × len(fields); nil or empty where there is no payload
	sums  []uint32 // per non-empty payload, in order
	n     int
	bytes int64

	// OnClaim, when set, is called as the batch claims its place, in chunk order and before
	// any later chunk claims, with the index of the batch's first row. An error fails the
	// writer. It must be quick: it holds up every later chunk.
	OnClaim func(firstRow int64) error

	offs    []int64
	entries []byte

	// Set by claim for Write.
	claimed        bool
	base           Position
	seq            int64
	resFrom, resTo int64
}

// NewBatch returns an empty batch for w.
func (w *Writer) NewBatch() *Batch { return &Batch{w: w} }

// Reset empties b for reuse, keeping its buffers. Payload slices handed to Append are
// released.
func (b *Batch) Reset() {
	clear(b.pay)
	b.rows, b.pay, b.sums = b.rows[:0], b.pay[:0], b.sums[:0]
	b.n, b.bytes = 0, 0
	b.OnClaim = nil
}

// Len returns the number of rows in b.
func (b *Batch) Len() int { return b.n }

// PayloadBytes returns the number of payload bytes in b.
func (b *Batch) PayloadBytes() int64 { return b.bytes }

// Append adds one sample: its metadata row (RowSize bytes; payload references are filled in
// by the writer) and its payloads by field index (nil, or one slice per field with nil or
// empty where the field stores none). b keeps the payload slices until Reset.
func (b *Batch) Append(row []byte, payloads [][]byte) error {
	w := b.w
	if int64(len(row)) != w.rowSize {
		return fmt.Errorf("pagewriter: row of %d bytes, want %d", len(row), w.rowSize)
	}
	nf := len(w.refs)
	if payloads != nil && len(payloads) != nf {
		return fmt.Errorf("pagewriter: %d payloads for %d fields", len(payloads), nf)
	}
	for f, p := range payloads {
		if len(p) == 0 {
			continue
		}
		if w.refs[f] < 0 {
			return fmt.Errorf("field %q (%s): %w", w.opt.Fields[f].Name, w.opt.Fields[f].Type, ErrNotPayload)
		}
		if err := manifest.CheckPayloadSize(len(p)); err != nil {
			return fmt.Errorf("field %q: %w", w.opt.Fields[f].Name, err)
		}
	}
	at := len(b.rows)
	b.rows = append(b.rows, row...)
	for f := 0; f < nf; f++ {
		var p []byte
		if payloads != nil {
			p = payloads[f]
		}
		if len(p) == 0 && w.refs[f] >= 0 {
			// An empty payload has data_ptr 0, data_size 0 (the pad after them is the field's).
			clear(b.rows[at+w.refs[f] : at+w.refs[f]+12])
		}
		b.pay = append(b.pay, p)
		if len(p) > 0 {
			b.bytes += int64(len(p))
			var sum uint32
			if w.opt.Checksums {
				sum = manifest.PayloadChecksum(p)
			}
			b.sums = append(b.sums, sum)
		}
	}
	b.n++
	return nil
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

// claim runs with the baton held: it places b's payloads after the cursor, runs OnClaim, and
// passes the baton on.
func (w *Writer) claim(t *Ticket, b *Batch) error {
	if err := w.seq.Err(); err != nil {
		return err
	}
	if w.state.Load() != 0 {
		return ErrClosed
	}
	base := w.seq.Position()
	b.offs = b.offs[:0]
	cur := base.Cursor
	for _, p := range b.pay {
		if len(p) == 0 {
			continue
		}
		off, next, err := w.rule.Place(cur, int64(len(p)))
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
	b.resFrom, b.resTo = 0, 0
	if cur > w.reserved && w.opt.Preallocate && !w.noPre.Load() {
		b.resFrom, b.resTo = w.reserved, alignUp(cur, preallocStep)+preallocStep
		w.reserved = b.resTo
	}
	b.base, b.seq, b.claimed = base, t.Seq, true
	w.unwritten.Add(1)
	w.seq.Pass(t, Position{Cursor: cur, Rows: base.Rows + int64(b.n), Entries: base.Entries + int64(len(b.offs))})
	return nil
}

// Write writes a claimed batch at its place. Writes of different batches run in parallel.
func (w *Writer) Write(b *Batch) error {
	if !b.claimed {
		return fmt.Errorf("pagewriter: write of a batch that was not claimed")
	}
	b.claimed = false
	defer w.unwritten.Add(-1)
	if b.resTo > 0 {
		ok, err := preallocate(w.out.Fd(), b.resFrom, b.resTo-b.resFrom)
		if err != nil {
			err = fmt.Errorf("reserve space in %s: %w", w.out.TempPath(), err)
			w.seq.Fail(err)
			return err
		}
		if !ok {
			w.noPre.Store(true)
		}
	}
	if err := w.write(b, b.base); err != nil {
		err = fmt.Errorf("write %s (chunk %d): %w", w.out.TempPath(), b.seq, err)
		w.seq.Fail(err)
		return err
	}
	return nil
}

// write fills b's payload references and allocation entries from its claimed offsets and
// writes payloads, rows and entries at their places.
func (w *Writer) write(b *Batch, base Position) error {
	start := time.Now()
	defer func() { w.writeNs.Add(int64(time.Since(start))) }()
	nf := len(w.refs)
	b.entries = b.entries[:0]
	k := 0
	var e [manifest.AllocEntrySize]byte
	for i, p := range b.pay {
		if len(p) == 0 {
			continue
		}
		r, f := i/nf, i%nf
		ref := b.rows[int64(r)*w.rowSize+int64(w.refs[f]):]
		manifest.PutRef(ref, manifest.PayloadRef{Ptr: uint64(b.offs[k]), Size: uint32(len(p))})
		manifest.AllocEntry{Ptr: uint64(b.offs[k]), Size: uint32(len(p)), Check: b.sums[k]}.Put(e[:])
		b.entries = append(b.entries, e[:]...)
		k++
	}
	seg, _ := w.segs.Get().(*[]byte)
	if seg == nil {
		seg = new([]byte)
	}
	n, err := WriteSegments(w.out, b.pay, b.offs, seg)
	w.segs.Put(seg)
	w.written.Add(n)
	w.payloads.Add(b.bytes)
	if err != nil {
		return err
	}
	if len(b.rows) > 0 {
		if _, err := w.rows.WriteAt(b.rows, base.Rows*w.rowSize); err != nil {
			return fmt.Errorf("metadata scratch: %w", err)
		}
	}
	if len(b.entries) > 0 {
		if _, err := w.alloc.WriteAt(b.entries, base.Entries*manifest.AllocEntrySize); err != nil {
			return fmt.Errorf("allocation scratch: %w", err)
		}
	}
	return nil
}

// Coalescing limits of WriteSegments.
const (
	maxGap     = 64 << 10 // gaps up to this are written as zeros to join two payloads
	directSize = 1 << 20  // payloads at least this big are written straight from their slice
	segLimit   = 4 << 20  // a coalesced segment is flushed at this size
)

// WriteSegments writes the non-empty payloads of pay at offs (one offset per non-empty
// payload, increasing), joining neighbours and small zero gaps (up to 64 KiB) into few large
// writes of up to 4 MiB; payloads of 1 MiB or more are written straight from their slice.
// seg is a reusable buffer. It returns the bytes written.
func WriteSegments(f File, pay [][]byte, offs []int64, seg *[]byte) (int64, error) {
	buf := (*seg)[:0]
	var at, written int64
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		n, err := f.WriteAt(buf, at)
		written += int64(n)
		buf = buf[:0]
		return err
	}
	k := 0
	for _, p := range pay {
		if len(p) == 0 {
			continue
		}
		off := offs[k]
		k++
		if len(p) >= directSize {
			if err := flush(); err != nil {
				return written, err
			}
			n, err := f.WriteAt(p, off)
			written += int64(n)
			if err != nil {
				return written, err
			}
			continue
		}
		end := at + int64(len(buf))
		if len(buf) > 0 && off >= end && off-end <= maxGap {
			buf = append(buf, make([]byte, off-end)...)
		} else {
			if err := flush(); err != nil {
				return written, err
			}
			at = off
		}
		buf = append(buf, p...)
		if len(buf) >= segLimit {
			if err := flush(); err != nil {
				return written, err
			}
		}
	}
	err := flush()
	*seg = buf[:0]
	return written, err
}

// Result describes a finished file.
type Result struct {
	Path                                string
	Samples, Entries                    int64
	DataPtr, MetadataPtr, AllocTablePtr int64
	Size                                int64 // file size
	Pages                               int64 // pages of the data region
	PayloadBytes                        int64
	Checksum                            uint64
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

// Finish writes the metadata table, the allocation table, the checksums and the header, syncs
// the file and renames it onto the output path. Every issued ticket must have been committed
// and every Commit returned. On error the temporary file is removed and the output path is
// untouched.
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
	meta := pos.Cursor
	alloc := meta + pos.Rows*w.rowSize
	size := alloc + pos.Entries*manifest.AllocEntrySize
	flags := manifest.FlagLittleEndian
	if w.opt.Checksums {
		flags |= manifest.FlagChecksummed
	}
	h := manifest.Header{
		VersionMajor: manifest.VersionMajor, VersionMinor: manifest.VersionMinor, Flags: flags,
		NumSamples: uint64(pos.Rows), NumFields: uint16(len(w.refs)), PageSize: uint32(w.opt.PageSize),
		FieldDescPtr: FieldDescOffset, MetadataPtr: uint64(meta), DataPtr: uint64(w.dataPtr),
		AllocTablePtr: uint64(alloc),
	}
	pre := make([]byte, manifest.PreambleSize)
	copy(pre, manifest.Signature)
	h.Put(pre[manifest.HeaderOffset:])
	d := xxhash.New()
	d.Write(pre[manifest.HeaderOffset : manifest.HeaderOffset+manifest.HeaderChecksumOffset])
	d.Write(w.descs)
	if err := w.rows.CopyTo(w.out, meta, pos.Rows*w.rowSize, d); err != nil {
		return Result{}, fmt.Errorf("write metadata table of %s: %w", w.out.TempPath(), err)
	}
	if err := w.alloc.CopyTo(w.out, alloc, pos.Entries*manifest.AllocEntrySize, d); err != nil {
		return Result{}, fmt.Errorf("write allocation table of %s: %w", w.out.TempPath(), err)
	}
	if w.opt.Checksums {
		h.Checksum = d.Sum64()
		h.Put(pre[manifest.HeaderOffset:])
	}
	if err := w.out.Truncate(size); err != nil {
		return Result{}, fmt.Errorf("size %s: %w", w.out.TempPath(), err)
	}
	if _, err := w.out.WriteAt(pre, 0); err != nil {
		return Result{}, fmt.Errorf("write header of %s: %w", w.out.TempPath(), err)
	}
	w.rows.Close()
	w.alloc.Close()
	if err := w.out.Commit(); err != nil {
		return Result{}, err
	}
	return Result{
		Path: w.out.Target(), Samples: pos.Rows, Entries: pos.Entries,
		DataPtr: w.dataPtr, MetadataPtr: meta, AllocTablePtr: alloc, Size: size,
		Pages:        (meta - w.dataPtr + w.opt.PageSize - 1) / w.opt.PageSize,
		PayloadBytes: w.payloads.Load(), Checksum: h.Checksum,
	}, nil
}

// Abort discards the file: the temporary file is removed and the output path is untouched.
// It fails pending commits and is safe to call at any time, more than once, and after
// Finish (when it does nothing).
func (w *Writer) Abort() error {
	w.seq.Fail(errAborted)
	if !w.state.CompareAndSwap(0, 1) {
		return nil
	}
	return w.cleanup()
}

var errAborted = errors.New("pagewriter: aborted")

func (w *Writer) cleanup() error {
	if w.rows != nil {
		w.rows.Close()
	}
	if w.alloc != nil {
		w.alloc.Close()
	}
	if w.out != nil {
		return w.out.Abort()
	}
	return nil
}
