package beton

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mldf/convert/manifest"
	"github.com/mldf/convert/pagewriter"
)

// Options configure a Writer.
type Options struct {
	// PageSize is a power of two in [2 MiB, 2 GiB]; 0 means DefaultPageSize (8 MiB).
	PageSize int64
	// Fields are the MLDF descriptors of the fields (encoders.Descriptor), translated with
	// FromManifest. Rows given to Batch.Append are in their MLDF layout (manifest.Layout).
	Fields []manifest.FieldDesc
	// Samples is the number of samples the source announces; 0 or -1 when it streams (or
	// is empty). With a count the data region is written in place after room for that many rows (rows of
	// rejected samples stay as a zero gap); without one it is written to a scratch file and
	// copied after the metadata table by Finish. More samples than announced fail the run.
	Samples int64
	// Wrap, when set, wraps every file the writer opens (fault injection in tests).
	Wrap pagewriter.WrapFunc
}

// column is one field's translation from the MLDF row to FFCV's.
type column struct {
	typ        TypeID
	name       string
	moff, boff int   // offsets in the MLDF row and in FFCV's row
	elem       int64 // NDArray payload size
}

// Writer writes one .beton file with the page writer's protocol: chunks of samples hold a
// Ticket from Issue (in sample order), are filled as a Batch, and are committed with Commit,
// or Publish, WaitClaimed and Write. Payloads are placed in sample then field order, each
// inside one page (pagewriter.PageRule, no alignment), so the file is the same bytes for any
// number of workers. Finish writes the tables and the header and publishes the file; until
// then nothing appears at the path. Every method but Issue may be called concurrently.
type Writer struct {
	opt      Options
	fields   []Field
	cols     []column
	mrow     int // MLDF row size
	rowSize  int64
	descs    []byte
	metaPtr  int64
	dataPtr  int64 // in-place mode: where the data region starts; -1 in scratch mode
	rule     pagewriter.PageRule
	out      *pagewriter.Output
	data     pagewriter.File // where payloads go: out, or the data scratch file
	dataOS   *os.File        // the data scratch file, unwrapped (for copy_file_range)
	dataOff  int64           // added to a payload's offset in the data region to get its offset in data
	rows     *pagewriter.Spill
	alloc    *pagewriter.Spill
	seq      *pagewriter.Sequencer
	state    atomic.Int32
	unwrit   atomic.Int64
	written  atomic.Int64
	payloads atomic.Int64
	writeNs  atomic.Int64
	segs     sync.Pool
}

// Create starts a .beton file at path. Fields FFCV cannot store are refused here, before any
// sample is read.
func Create(path string, opt Options) (*Writer, error) {
	if opt.PageSize == 0 {
		opt.PageSize = DefaultPageSize
	}
	if err := ValidPageSize(opt.PageSize); err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if len(opt.Fields) == 0 || len(opt.Fields) > 0xFFFF {
		return nil, fmt.Errorf("create %s: %d fields (want 1..65535)", path, len(opt.Fields))
	}
	w := &Writer{opt: opt, rule: pagewriter.PageRule{PageSize: opt.PageSize, Align: 1}}
	types := make([]manifest.TypeID, len(opt.Fields))
	seen := map[string]bool{}
	for i, d := range opt.Fields {
		f, err := FromManifest(d)
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		if seen[f.Name] {
			return nil, fmt.Errorf("create %s: %w: %q appears twice", path, ErrFieldName, f.Name)
		}
		seen[f.Name] = true
		w.fields = append(w.fields, f)
		types[i] = d.Type
	}
	ml, err := manifest.Layout(types)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	bl := Layout(w.fields)
	w.mrow, w.rowSize = ml.Size, int64(bl.Size)
	w.descs = make([]byte, FieldDescSize*len(w.fields))
	for i := range w.fields {
		f := &w.fields[i]
		c := column{typ: f.Type, name: f.Name, moff: ml.Offsets[i], boff: bl.Offsets[i]}
		if f.Type == TypeNDArray {
			c.elem, _ = f.ElementSize()
		}
		w.cols = append(w.cols, c)
		if err := f.Put(w.descs[i*FieldDescSize:]); err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
	}
	w.metaPtr = MetadataOffset(len(w.fields))
	w.dataPtr = -1
	if opt.Samples > 0 {
		w.dataPtr = DataStart(w.metaPtr+opt.Samples*w.rowSize, opt.PageSize)
	}
	w.seq = pagewriter.NewSequencer(pagewriter.Position{})

	if w.out, err = pagewriter.CreateOutput(path, opt.Wrap); err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	if w.rows, err = pagewriter.CreateSpill(dir, "beton-rows", opt.Wrap); err == nil {
		w.alloc, err = pagewriter.CreateSpill(dir, "beton-alloc", opt.Wrap)
	}
	if err == nil {
		if w.dataPtr >= 0 {
			w.data, w.dataOff = w.out, w.dataPtr
		} else {
			err = w.createDataScratch(dir)
		}
	}
	if err != nil {
		w.cleanup()
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return w, nil
}

// createDataScratch creates the unlinked scratch file that holds the data region while the
// number of samples is unknown.
func (w *Writer) createDataScratch(dir string) error {
	f, err := os.CreateTemp(dir, ".beton-data-*")
	if err != nil {
		return fmt.Errorf("create data scratch file in %s: %w", dir, err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return fmt.Errorf("unlink data scratch file: %w", err)
	}
	w.dataOS, w.data = f, f
	if w.opt.Wrap != nil {
		w.data = w.opt.Wrap(f, "data")
	}
	return nil
}

// Path returns the output path.
func (w *Writer) Path() string { return w.out.Target() }

// Fields returns the FFCV field descriptors.
func (w *Writer) Fields() []Field { return w.fields }

// RowSize returns the size of an FFCV metadata row.
func (w *Writer) RowSize() int { return int(w.rowSize) }

// Issue returns the ticket of the next chunk. Call it from one goroutine, in sample order.
func (w *Writer) Issue() *pagewriter.Ticket { return w.seq.Issue() }

// Fail makes the writer fail with err: waiting commits return it and Finish refuses.
func (w *Writer) Fail(err error) { w.seq.Fail(err) }

// alloc kinds of a Batch allocation.
const (
	allocPlain = iota // the payload as is
	allocNUL          // a JSON payload: the bytes, then one NUL
	allocEmpty        // a zero-size allocation; one zero byte is reserved so its ptr is unique
)

// An allocation is one payload of a batch.
type allocation struct {
	row, col int
	kind     int
	p        []byte
}

// size returns the allocation's size as recorded in the file.
func (a *allocation) size() int64 {
	switch a.kind {
	case allocNUL:
		return int64(len(a.p)) + 1
	case allocEmpty:
		return 0
	}
	return int64(len(a.p))
}

// A Batch is one chunk's samples: FFCV rows and payloads. A Batch is used by one goroutine
// at a time and can be reused after Reset.
type Batch struct {
	w     *Writer
	rows  []byte
	al    []allocation
	n     int
	bytes int64

	// OnClaim, when set, is called as the batch claims its place, in chunk order, with the
	// index of its first row. An error fails the writer. It must be quick.
	OnClaim func(firstRow int64) error

	offs    []int64
	segPay  [][]byte
	segOffs []int64
	entries []byte
	claimed bool
	base    pagewriter.Position
	seq     int64
}

// NewBatch returns an empty batch for w.
func (w *Writer) NewBatch() *Batch { return &Batch{w: w} }

// Reset empties b for reuse, keeping its buffers and releasing the payloads.
func (b *Batch) Reset() {
	clear(b.al)
	clear(b.segPay)
	b.rows, b.al, b.n, b.bytes, b.OnClaim = b.rows[:0], b.al[:0], 0, 0, nil
}

// Len returns the number of rows in b.
func (b *Batch) Len() int { return b.n }

// PayloadBytes returns the number of payload bytes in b.
func (b *Batch) PayloadBytes() int64 { return b.bytes }

var nul = []byte{0}

// Append adds one sample: its metadata row in the MLDF layout of Options.Fields (as our
// encoders fill it; payload references are ignored) and its payloads by field index. b keeps
// the payload slices until Reset. It refuses a payload larger than a page, a raw image whose
// size is not width × height × 3, an NDArray of the wrong size and a missing image; a missing
// JSON value is stored as null, a missing or empty Bytes value as a zero-size allocation.
func (b *Batch) Append(row []byte, payloads [][]byte) error {
	w := b.w
	if len(row) != w.mrow {
		return fmt.Errorf("beton: row of %d bytes, want %d", len(row), w.mrow)
	}
	if payloads != nil && len(payloads) != len(w.cols) {
		return fmt.Errorf("beton: %d payloads for %d fields", len(payloads), len(w.cols))
	}
	at := len(b.rows)
	b.rows = append(b.rows, make([]byte, w.rowSize)...)
	out := b.rows[at:]
	first := len(b.al)
	fail := func(err error) error {
		b.rows = b.rows[:at]
		clear(b.al[first:])
		b.al = b.al[:first]
		return err
	}
	var added int64
	for i, c := range w.cols {
		var p []byte
		if payloads != nil {
			p = payloads[i]
		}
		m, o := row[c.moff:], out[c.boff:]
		a := allocation{row: b.n, col: i, p: p}
		switch c.typ {
		case TypeInt, TypeFloat:
			copy(o[:8], m[:8])
			continue
		case TypeRGBImage:
			im := manifest.GetImageMeta(m)
			if len(p) == 0 {
				return fail(fmt.Errorf("%w: field %q: no image (FFCV cannot store a missing image; make the field required)", ErrPayload, c.name))
			}
			if im.Channels != 3 {
				return fail(fmt.Errorf("%w: field %q: a %d-channel image (FFCV stores RGB)", ErrPayload, c.name, im.Channels))
			}
			bm := ImageMeta{Width: im.Width, Height: im.Height}
			switch im.Mode {
			case manifest.ImageModeJPEG:
				bm.Mode = ImageJPEG
			case manifest.ImageModeRaw:
				bm.Mode = ImageRaw
				if want := int(im.Width) * int(im.Height) * 3; len(p) != want {
					return fail(fmt.Errorf("%w: field %q: raw image of %d bytes, %dx%dx3 is %d", ErrPayload, c.name, len(p), im.Width, im.Height, want))
				}
			default:
				return fail(fmt.Errorf("%w: field %q: image mode %d (FFCV stores JPEG or raw RGB)", ErrUnsupported, c.name, im.Mode))
			}
			bm.Put(o)
		case TypeBytes:
			if len(p) == 0 {
				a.kind = allocEmpty
			}
		case TypeJSON:
			a.kind = allocNUL
			if len(p) == 0 {
				a.p = []byte("null")
			}
		case TypeNDArray:
			if int64(len(p)) != c.elem {
				return fail(fmt.Errorf("%w: field %q: array of %d bytes, its dtype and shape make %d", ErrPayload, c.name, len(p), c.elem))
			}
		}
		if s := a.size(); s > w.opt.PageSize {
			return fail(fmt.Errorf("%w: field %q: %d bytes do not fit in one %s page; FFCV keeps every payload inside a page: set page_size to %s or more (or shrink it, e.g. max_resolution)",
				ErrPageLarge, c.name, s, human(w.opt.PageSize), human(nextPow2(s))))
		}
		b.al = append(b.al, a)
		added += int64(len(a.p))
	}
	b.bytes += added
	b.n++
	return nil
}

func nextPow2(n int64) int64 {
	p := int64(MinPageSize)
	for p < n {
		p <<= 1
	}
	return p
}

func human(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Publish hands b over to be claimed in t's turn; b must not be touched until t.Claimed()
// is closed, then Write it.
func (w *Writer) Publish(t *pagewriter.Ticket, b *Batch) {
	w.seq.Publish(t, func() error { return w.claim(t, b) })
}

// WaitClaimed waits until the batch published with t has claimed its place and returns the
// claim's error. It ends early when ctx is done or the writer failed.
func (w *Writer) WaitClaimed(ctx context.Context, t *pagewriter.Ticket) error {
	return w.seq.WaitClaimed(ctx, t)
}

// Commit publishes b, waits for its claim and writes it.
func (w *Writer) Commit(ctx context.Context, t *pagewriter.Ticket, b *Batch) error {
	w.Publish(t, b)
	if err := w.WaitClaimed(ctx, t); err != nil {
		return err
	}
	return w.Write(b)
}

// claim runs with the baton held: it places b's allocations after the cursor (offsets
// relative to the start of the data region), runs OnClaim and passes the baton on.
func (w *Writer) claim(t *pagewriter.Ticket, b *Batch) error {
	if err := w.seq.Err(); err != nil {
		return err
	}
	if w.state.Load() != 0 {
		return pagewriter.ErrClosed
	}
	base := w.seq.Position()
	if w.dataPtr >= 0 && base.Rows+int64(b.n) > w.opt.Samples {
		err := fmt.Errorf("%w: the source announced %d samples and yields more", ErrTooMany, w.opt.Samples)
		w.seq.Fail(err)
		return err
	}
	b.offs = b.offs[:0]
	cur := base.Cursor
	for i := range b.al {
		a := &b.al[i]
		var off int64
		if a.kind == allocEmpty {
			off, cur = cur, cur+1
		} else {
			var err error
			if off, cur, err = w.rule.Place(cur, a.size()); err != nil {
				err = fmt.Errorf("place chunk %d: %w", t.Seq, err)
				w.seq.Fail(err)
				return err
			}
		}
		b.offs = append(b.offs, off)
	}
	if b.OnClaim != nil {
		if err := b.OnClaim(base.Rows); err != nil {
			w.seq.Fail(err)
			return err
		}
	}
	b.base, b.seq, b.claimed = base, t.Seq, true
	w.unwrit.Add(1)
	w.seq.Pass(t, pagewriter.Position{Cursor: cur, Rows: base.Rows + int64(b.n), Entries: base.Entries + int64(len(b.al))})
	return nil
}

// Write writes a claimed batch at its place. Writes of different batches run in parallel.
func (w *Writer) Write(b *Batch) error {
	if !b.claimed {
		return errors.New("beton: write of a batch that was not claimed")
	}
	b.claimed = false
	defer w.unwrit.Add(-1)
	if err := w.write(b); err != nil {
		err = fmt.Errorf("write %s (chunk %d): %w", w.out.TempPath(), b.seq, err)
		w.seq.Fail(err)
		return err
	}
	return nil
}

// write fills b's pointers (relative to the data region; Finish adds its start) and its
// allocation entries, and writes payloads, rows and entries.
func (w *Writer) write(b *Batch) error {
	start := time.Now()
	defer func() { w.writeNs.Add(int64(time.Since(start))) }()
	b.segPay, b.segOffs, b.entries = b.segPay[:0], b.segOffs[:0], b.entries[:0]
	var e [AllocEntrySize]byte
	for k := range b.al {
		a := &b.al[k]
		off := b.offs[k]
		c := &w.cols[a.col]
		ref := b.rows[int64(a.row)*w.rowSize+int64(c.boff):]
		le.PutUint64(ref[PtrOffset(c.typ):], uint64(off))
		if c.typ == TypeBytes || c.typ == TypeJSON {
			le.PutUint64(ref[8:], uint64(a.size()))
		}
		AllocEntry{SampleID: uint64(b.base.Rows) + uint64(a.row), Ptr: uint64(off), Size: uint64(a.size())}.Put(e[:])
		b.entries = append(b.entries, e[:]...)
		if a.kind == allocEmpty {
			continue
		}
		b.segPay = append(b.segPay, a.p)
		b.segOffs = append(b.segOffs, w.dataOff+off)
		if a.kind == allocNUL {
			b.segPay = append(b.segPay, nul)
			b.segOffs = append(b.segOffs, w.dataOff+off+int64(len(a.p)))
		}
	}
	seg, _ := w.segs.Get().(*[]byte)
	if seg == nil {
		seg = new([]byte)
	}
	n, err := pagewriter.WriteSegments(w.data, b.segPay, b.segOffs, seg)
	w.segs.Put(seg)
	w.written.Add(n)
	w.payloads.Add(b.bytes)
	if err != nil {
		return err
	}
	if len(b.rows) > 0 {
		if _, err := w.rows.WriteAt(b.rows, b.base.Rows*w.rowSize); err != nil {
			return fmt.Errorf("metadata scratch: %w", err)
		}
	}
	if len(b.entries) > 0 {
		if _, err := w.alloc.WriteAt(b.entries, b.base.Entries*AllocEntrySize); err != nil {
			return fmt.Errorf("allocation scratch: %w", err)
		}
	}
	return nil
}

// Result describes a finished file.
type Result struct {
	Path                                string
	Samples, Entries                    int64
	MetadataPtr, DataPtr, AllocTablePtr int64
	Size                                int64 // file size
	Pages                               int64 // pages of the data region
	PayloadBytes                        int64
}

// Stats returns the writer's statistics so far.
func (w *Writer) Stats() pagewriter.Stats {
	return pagewriter.Stats{Position: w.seq.Position(), Written: w.written.Load(), PayloadBytes: w.payloads.Load(),
		WriteTime: time.Duration(w.writeNs.Load()), Wait: w.seq.Stats()}
}

// Finish writes the header, the descriptors, the metadata table and the allocation table
// (moving the data region in place first when the sample count was unknown), syncs the file
// and renames it onto the output path. On error the output path is untouched.
func (w *Writer) Finish() (Result, error) {
	if !w.state.CompareAndSwap(0, 1) {
		return Result{}, pagewriter.ErrClosed
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
		return Result{}, fmt.Errorf("%w: %w", pagewriter.ErrFailed, err)
	}
	if !w.seq.AllPassed() {
		return Result{}, pagewriter.ErrUnclaimed
	}
	if n := w.unwrit.Load(); n != 0 {
		return Result{}, fmt.Errorf("%w: %d claimed chunks not written", pagewriter.ErrUnclaimed, n)
	}
	pos := w.seq.Position()
	dataPtr := w.dataPtr
	if dataPtr < 0 {
		dataPtr = DataStart(w.metaPtr+pos.Rows*w.rowSize, w.opt.PageSize)
	}
	allocPtr := dataPtr + pos.Cursor
	size := allocPtr + pos.Entries*AllocEntrySize
	tmp := w.out.TempPath()
	if err := w.out.Truncate(size); err != nil {
		return Result{}, fmt.Errorf("size %s: %w", tmp, err)
	}
	if w.dataPtr < 0 && pos.Cursor > 0 {
		// The scratch file is as long as the region (a reserved last byte may be unwritten).
		if err := w.data.Truncate(pos.Cursor); err != nil {
			return Result{}, fmt.Errorf("size the data scratch file: %w", err)
		}
		if err := w.copyData(dataPtr, pos.Cursor); err != nil {
			return Result{}, fmt.Errorf("move the data region into %s: %w", tmp, err)
		}
	}
	if err := w.rebase(w.rows, w.metaPtr, pos.Rows, w.rowSize, dataPtr, w.rowPtrs()); err != nil {
		return Result{}, fmt.Errorf("write metadata table of %s: %w", tmp, err)
	}
	if err := w.rebase(w.alloc, allocPtr, pos.Entries, AllocEntrySize, dataPtr, []int{8}); err != nil {
		return Result{}, fmt.Errorf("write allocation table of %s: %w", tmp, err)
	}
	pre := make([]byte, HeaderSize, HeaderSize+len(w.descs))
	Header{Version: Version, NumFields: uint16(len(w.fields)), PageSize: uint32(w.opt.PageSize),
		NumSamples: uint64(pos.Rows), AllocTablePtr: uint64(allocPtr)}.Put(pre)
	pre = append(pre, w.descs...)
	if _, err := w.out.WriteAt(pre, 0); err != nil {
		return Result{}, fmt.Errorf("write header of %s: %w", tmp, err)
	}
	w.closeScratch()
	if err := w.out.Commit(); err != nil {
		return Result{}, err
	}
	return Result{Path: w.out.Target(), Samples: pos.Rows, Entries: pos.Entries,
		MetadataPtr: w.metaPtr, DataPtr: dataPtr, AllocTablePtr: allocPtr, Size: size,
		Pages: (pos.Cursor + w.opt.PageSize - 1) / w.opt.PageSize, PayloadBytes: w.payloads.Load()}, nil
}

// rowPtrs returns the offsets of the data pointers in a row.
func (w *Writer) rowPtrs() []int {
	var p []int
	for _, c := range w.cols {
		if o := PtrOffset(c.typ); o >= 0 {
			p = append(p, c.boff+o)
		}
	}
	return p
}

// rebase copies n records of size rec from the scratch file s to the output at off, adding
// base to the u64 at each of ptrs in every record.
func (w *Writer) rebase(s *pagewriter.Spill, off, n, rec, base int64, ptrs []int) error {
	per := max(1, (1<<20)/rec)
	buf := make([]byte, min(n, per)*rec)
	for done := int64(0); done < n; {
		k := min(per, n-done)
		b := buf[:k*rec]
		if _, err := s.ReadAt(b, done*rec); err != nil {
			return fmt.Errorf("read scratch: %w", err)
		}
		for r := int64(0); r < k; r++ {
			for _, p := range ptrs {
				q := b[r*rec+int64(p):]
				le.PutUint64(q, le.Uint64(q)+uint64(base))
			}
		}
		if _, err := w.out.WriteAt(b, off+done*rec); err != nil {
			return err
		}
		done += k
	}
	return nil
}

// copyData copies the data scratch file into the output at dst: in the kernel with
// copy_file_range where it can, else through a buffer.
func (w *Writer) copyData(dst, n int64) error {
	if w.opt.Wrap == nil {
		roff, woff := int64(0), dst
		for roff < n {
			c, err := unix.CopyFileRange(int(w.dataOS.Fd()), &roff, int(w.out.Fd()), &woff, int(min(n-roff, 1<<30)), 0)
			if err != nil || c == 0 {
				break // not supported here (or across file systems): copy the rest by hand
			}
		}
		if roff == n {
			return nil
		}
		return copyRange(w.out, w.data, roff, dst+roff, n-roff)
	}
	return copyRange(w.out, w.data, 0, dst, n)
}

func copyRange(dst io.WriterAt, src io.ReaderAt, from, to, n int64) error {
	buf := make([]byte, min(n, 4<<20))
	for done := int64(0); done < n; {
		b := buf[:min(int64(len(buf)), n-done)]
		if _, err := src.ReadAt(b, from+done); err != nil {
			return fmt.Errorf("read data scratch at %d: %w", from+done, err)
		}
		if _, err := dst.WriteAt(b, to+done); err != nil {
			return err
		}
		done += int64(len(b))
	}
	return nil
}

// Abort discards the file: the output path is untouched. It is safe to call at any time,
// more than once, and after Finish (when it does nothing).
func (w *Writer) Abort() error {
	w.seq.Fail(errAborted)
	if !w.state.CompareAndSwap(0, 1) {
		return nil
	}
	return w.cleanup()
}

var errAborted = errors.New("beton: aborted")

func (w *Writer) closeScratch() {
	if w.rows != nil {
		w.rows.Close()
	}
	if w.alloc != nil {
		w.alloc.Close()
	}
	if w.dataOS != nil {
		w.data.Close()
	}
}

func (w *Writer) cleanup() error {
	w.closeScratch()
	if w.out != nil {
		return w.out.Abort()
	}
	return nil
}
