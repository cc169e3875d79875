// Package appendfile appends the samples of one MLDF file (the "delta", written by a run over
// the new inputs) to another (the base), producing the file one run over the base's inputs
// followed by the new ones would have produced, byte for byte.
//
// The result is written beside the target and renamed over it (internal/atomicfile): a reader
// of the base sees the old file or the new one, never a half-appended one, and a process
// killed during the append leaves the base as it was. The base's bytes before its metadata
// table, [0, metadata_ptr), are cloned with copy_file_range (a reflink on file systems that
// share extents, an in-kernel copy elsewhere); the new payloads continue the data region at
// the base's cursor with the writer's placement rule (docs/FORMAT.md §6.1: the cursor after
// the last payload is the base's metadata_ptr), then the metadata table (the base's rows,
// unchanged, and the new ones), the allocation table and the header are written.
package appendfile

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/objstore"
)

// Errors returned by Append, wrapped with the files they concern.
var (
	// ErrIncompatible: the delta's schema (fields, types, options), page size or flags
	// differ from the base's.
	ErrIncompatible = errors.New("append: files are not compatible")
	// ErrCorrupt: a payload reference or allocation entry lies outside its data region.
	ErrCorrupt = errors.New("append: corrupt file")
)

// castagnoli is the CRC-32C table of the payload checks (docs/FORMAT.md §8).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// chunk bounds the buffers of the table copies and the data copy.
const chunk = 4 << 20

// Report describes an append.
type Report struct {
	Output       string
	BaseSamples  int64 // samples of the base, ids 0..BaseSamples-1, unchanged
	Added        int64 // samples appended
	Size         int64 // the result's size
	Checksum     uint64
	Cloned       int64         // bytes of the base's data region cloned
	Moved        int64         // how far the data region moved (merged class names that no longer fit before it), 0 mostly
	NewClasses   int           // class names added
	RangeCopied  int64         // of Cloned, by copy_file_range (the rest by reads and writes)
	ServerCopied int64         // of Cloned, by the object store (server-side part copies)
	CloneTime    time.Duration // of the append, cloning
	Elapsed      time.Duration
}

// file is one opened input.
type file struct {
	path    string
	f       *os.File    // the local file (copy_file_range reads it), or nil in a bucket
	ra      io.ReaderAt // the file or object
	obj     *objstore.ReaderAt
	r       *mldf.Reader
	hdr     mldf.Header
	descs   []byte
	refs    []int // per field: the offset of its payload reference in a row, or -1
	rowSize int64
	entries int64
}

// open opens a local file, or through store (when not nil) an object in a bucket.
func open(ctx context.Context, store *objstore.Client, path string) (*file, error) {
	var obj *objstore.ReaderAt
	if store != nil {
		o, err := store.OpenReaderAt(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("append: %w", err)
		}
		if o.File() != nil {
			o.Close()
		} else {
			obj = o
		}
	}
	if obj != nil {
		r, err := mldf.OpenReaderAt(path, struct{ io.ReaderAt }{obj}, obj.Size())
		if err != nil {
			obj.Close()
			return nil, fmt.Errorf("append: %w", err)
		}
		return newFile(&file{path: path, ra: obj, obj: obj, r: r})
	}
	if lp, ok := objstore.TargetOf(path).Path(); ok {
		path = lp
	}
	r, err := mldf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("append: %w", err)
	}
	return newFile(&file{path: path, f: f, ra: f, r: r})
}

func newFile(p *file) (*file, error) {
	r, path := p.r, p.path
	p.hdr, p.rowSize, p.entries = r.Header(), int64(r.Layout().Size), int64(r.NumAllocEntries())
	lay := r.Layout()
	for k, d := range r.Fields() {
		p.refs = append(p.refs, -1)
		if _, has := mldf.MetaSize(d.Type); has {
			p.refs[k] = lay.Offsets[k]
		}
	}
	h := p.hdr
	p.descs = make([]byte, int(h.NumFields)*mldf.FieldDescSize)
	if _, err := p.ra.ReadAt(p.descs, int64(h.FieldDescPtr)); err != nil {
		p.close()
		return nil, fmt.Errorf("append: read the field descriptors of %s: %w", path, err)
	}
	return p, nil
}

func (p *file) close() {
	p.r.Close()
	if p.f != nil {
		p.f.Close()
	}
	if p.obj != nil {
		p.obj.Close()
	}
}

// compatible checks that add can be appended to base: the same fields (names, types, flags,
// options and class names), page size and flags. The error names both files and what differs.
func compatible(base, add *file) error {
	bad := func(what string, a, b any) error {
		return fmt.Errorf("%w: %s: %s is %v in %s but %v in %s", ErrIncompatible, what, what, a, base.path, b, add.path)
	}
	bh, ah := base.hdr, add.hdr
	bf, af := base.r.Fields(), add.r.Fields()
	names := func(fs []mldf.FieldDesc) []string {
		s := make([]string, len(fs))
		for i, f := range fs {
			s[i] = f.Name + ":" + f.Type.String()
		}
		return s
	}
	switch {
	case len(bf) != len(af):
		return bad("fields", names(bf), names(af))
	case bh.PageSize != ah.PageSize:
		return bad("page size", bh.PageSize, ah.PageSize)
	case bh.Flags != ah.Flags:
		return bad("flags", mldf.FlagNames(bh.Flags), mldf.FlagNames(ah.Flags))
	}
	for k := range bf {
		if bf[k].Name != af[k].Name || bf[k].Type != af[k].Type {
			return bad("fields", names(bf), names(af))
		}
		ba, aa := bf[k].Arguments, af[k].Arguments
		bc, bok := mldf.ParseClassLabelArgs(ba)
		ac, aok := mldf.ParseClassLabelArgs(aa)
		if bok && aok && bf[k].Type == mldf.TypeInt && bc.NamesPtr != 0 && ac.NamesPtr != 0 {
			// Class names in both files: merged (classes.go); the rest of the arguments
			// is reserved and zero.
			clear(ba[4:32])
			clear(aa[4:32])
		}
		if bf[k].Flags != af[k].Flags || bf[k].MetadataSize != af[k].MetadataSize || ba != aa {
			return bad(fmt.Sprintf("the options of field %q", bf[k].Name), "one value", "another")
		}
	}
	return nil
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// place returns where the writer puts a payload of s bytes at cursor (docs/FORMAT.md §6.1)
// and the cursor after it.
func place(cursor, s, page int64) (at, next int64) {
	if (s <= page && cursor%page+s > page) || (s > page && cursor%page != 0) {
		cursor = alignUp(cursor, page)
	}
	return cursor, alignUp(cursor+s, 8)
}

// Append writes base followed by the samples of add to out atomically (out may be base: it is
// replaced only when the whole append succeeds). The two files must have the same schema
// (ErrIncompatible names both); the class names of a class-label field are merged (an
// existing class keeps its id, a new one gets the next). ctx stops a long append, leaving out
// as it was.
func Append(ctx context.Context, base, add, out string) (rep Report, err error) {
	return AppendWith(ctx, nil, base, add, out)
}

// AppendWith is Append where base and out may be objects in a bucket (s3://, gs://, az://),
// reached through store: the result is a multipart upload of the preamble, a server-side
// copy of the base's data region (UploadPartCopy), the new payloads and the tables, and
// appears at out only when the upload completes. add is a local file. Make store with
// objstore.WithoutPartChecksums, as for a merge (server-side part copies).
func AppendWith(ctx context.Context, store *objstore.Client, base, add, out string) (rep Report, err error) {
	return AppendOpts(ctx, base, add, out, Options{Store: store})
}

// Options are the options of AppendOpts.
type Options struct {
	// Store reaches a base and an out in a bucket (AppendWith); nil for local files.
	Store *objstore.Client
	// Started, when set, is called with the ID of the multipart upload of an out in a bucket
	// once it is made, before anything is uploaded; an error stops the append.
	Started func(upload string) error
	// Committing, when set, is called with the Fingerprint the result will have, just before
	// it is published (the rename, or the upload's completion); an error stops the append,
	// leaving out as it was.
	Committing func(fingerprint string) error
}

// AppendOpts is AppendWith with its options.
func AppendOpts(ctx context.Context, base, add, out string, opt Options) (rep Report, err error) {
	store := opt.Store
	start := time.Now()
	rep.Output = out
	b, err := open(ctx, store, base)
	if err != nil {
		return rep, err
	}
	defer b.close()
	a, err := open(ctx, nil, add)
	if err != nil {
		return rep, err
	}
	defer a.close()
	if err := compatible(b, a); err != nil {
		return rep, err
	}
	cls, descs, blocks, namesEnd, err := mergeClasses(b, a)
	if err != nil {
		return rep, err
	}
	page := int64(b.hdr.PageSize)
	rs := b.rowSize
	nb, na := int64(b.hdr.NumSamples), int64(a.hdr.NumSamples)
	oldData, oldMeta := int64(b.hdr.DataPtr), int64(b.hdr.MetadataPtr)
	// The merged class names may no longer fit before the data region: then the region
	// moves by whole pages (the placement within pages is the same) and every pointer of the
	// base moves with it.
	newData := max(alignUp(namesEnd, page), oldData)
	shift := newData - oldData
	rep.Moved = shift

	// Pass 1: where the data region ends (sizes only).
	cursor := oldMeta + shift
	lo, hi := a.hdr.DataPtr, a.hdr.MetadataPtr
	var added int64
	for i := range na {
		row := a.r.Row(int(i))
		for k, off := range a.refs {
			if off < 0 {
				continue
			}
			ref := mldf.GetRef(row[off:])
			if ref.Size == 0 {
				continue
			}
			if ref.Ptr < lo || ref.Ptr > hi || uint64(ref.Size) > hi-ref.Ptr {
				return rep, fmt.Errorf("%w: %s sample %d field %d: payload [%d, %d+%d) lies outside the data region [%d, %d)",
					ErrCorrupt, add, i, k, ref.Ptr, ref.Ptr, ref.Size, lo, hi)
			}
			_, cursor = place(cursor, int64(ref.Size), page)
			added++
		}
		for _, c := range cls {
			if v := mldf.GetInt(row[c.off:]); v < -1 || v >= int64(len(c.remap)) {
				return rep, fmt.Errorf("%w: %s sample %d field %d: class %d of %d", ErrCorrupt, add, i, c.field, v, len(c.remap))
			}
		}
	}
	meta := cursor
	alloc := meta + (nb+na)*rs
	size := alloc + (b.entries+added)*mldf.AllocEntrySize

	var o sink
	if b.f != nil {
		lo, err := newLocalSink(b, out, size)
		if err != nil {
			return rep, err
		}
		o = lo
	} else {
		bo, err := newObjectSink(ctx, store, b, out)
		if err != nil {
			return rep, err
		}
		o = bo
	}
	defer func() {
		if err != nil {
			o.abort()
		}
	}()
	if id := o.upload(); id != "" && opt.Started != nil {
		if err := opt.Started(id); err != nil {
			return rep, err
		}
	}
	h := b.hdr
	h.NumSamples = uint64(nb + na)
	h.DataPtr, h.MetadataPtr, h.AllocTablePtr, h.Checksum = uint64(newData), uint64(meta), uint64(alloc), 0
	pre := make([]byte, namesEnd)
	copy(pre, mldf.Signature)
	h.Put(pre[mldf.HeaderOffset:])
	copy(pre[h.FieldDescPtr:], descs)
	for _, bl := range blocks {
		copy(pre[bl.at:], bl.b)
	}
	d := xxhash.New()
	d.Write(pre[mldf.HeaderOffset : mldf.HeaderOffset+mldf.HeaderChecksumOffset])
	d.Write(descs)
	if err := o.write(pre, 0); err != nil {
		return rep, err
	}
	cloneStart := time.Now()
	n := oldMeta - oldData
	if err := o.region(oldData, newData, n); err != nil {
		return rep, fmt.Errorf("append: clone %s: %w", base, err)
	}
	rep.Cloned, rep.CloneTime = n, time.Since(cloneStart)

	// Pass 2: the new payloads, in order, read and written in chunks. An upload takes its
	// bytes in offset order: the tables, after the payloads, come next.
	checks := h.Flags&mldf.FlagChecksummed != 0
	cursor = oldMeta + shift
	entries := make([]byte, 0, added*mldf.AllocEntrySize)
	src := &windowReader{r: a.f, end: int64(hi)}
	dst := &gatherWriter{w: o.write}
	for i := range na {
		if i%1024 == 0 && ctx.Err() != nil {
			return rep, fmt.Errorf("append: %w", ctx.Err())
		}
		cursor, err = placeRow(a.r.Row(int(i)), a.refs, cursor, page, func(_ int, ref mldf.PayloadRef, at int64) error {
			p, err := src.read(int64(ref.Ptr), int64(ref.Size))
			if err != nil {
				return fmt.Errorf("append: read %s sample %d: %w", add, i, err)
			}
			e := mldf.AllocEntry{Ptr: uint64(at), Size: ref.Size}
			if checks {
				e.Check = crc32.Checksum(p, castagnoli)
			}
			var eb [mldf.AllocEntrySize]byte
			e.Put(eb[:])
			entries = append(entries, eb[:]...)
			return dst.write(p, at)
		})
		if err != nil {
			return rep, err
		}
	}
	if err := dst.flush(); err != nil {
		return rep, err
	}
	if cursor != meta {
		return rep, fmt.Errorf("append: internal error: data ends at %d, want %d", cursor, meta)
	}

	// The base's rows, their payload references moved by shift.
	tw := &tableWriter{w: o.write, off: meta, d: d, name: out}
	move := func(tab []byte) error {
		for r := 0; r+int(rs) <= len(tab); r += int(rs) {
			for _, off := range b.refs {
				if off < 0 {
					continue
				}
				if ref := mldf.GetRef(tab[r+off:]); ref.Size != 0 {
					ref.Ptr += uint64(shift)
					mldf.PutRef(tab[r+off:], ref)
				}
			}
		}
		return nil
	}
	if shift == 0 {
		move = nil
	}
	if err := copyTable(ctx, b.ra, oldMeta, nb*rs, rs, move, tw); err != nil {
		return rep, fmt.Errorf("append: copy the metadata table of %s: %w", base, err)
	}
	// Pass 3: the new rows, their classes mapped and their references placed as in pass 2.
	cursor = oldMeta + shift
	row := make([]byte, rs)
	for i := range na {
		if i%1024 == 0 && ctx.Err() != nil {
			return rep, fmt.Errorf("append: %w", ctx.Err())
		}
		copy(row, a.r.Row(int(i)))
		for _, c := range cls {
			if v := mldf.GetInt(row[c.off:]); v >= 0 {
				mldf.PutInt(row[c.off:], c.remap[v])
			}
		}
		cursor, _ = placeRow(row, a.refs, cursor, page, func(off int, ref mldf.PayloadRef, at int64) error {
			ref.Ptr = uint64(at)
			mldf.PutRef(row[off:], ref)
			return nil
		})
		if err := tw.write(row); err != nil {
			return rep, err
		}
	}
	// The base's allocation entries (moved by shift), then the new ones.
	moveEntries := func(tab []byte) error {
		for k := 0; k+mldf.AllocEntrySize <= len(tab); k += mldf.AllocEntrySize {
			e := mldf.DecodeAllocEntry(tab[k:])
			e.Ptr += uint64(shift)
			e.Put(tab[k:])
		}
		return nil
	}
	if shift == 0 {
		moveEntries = nil
	}
	if err := copyTable(ctx, b.ra, int64(b.hdr.AllocTablePtr), b.entries*mldf.AllocEntrySize, mldf.AllocEntrySize, moveEntries, tw); err != nil {
		return rep, fmt.Errorf("append: copy the allocation table of %s: %w", base, err)
	}
	if err := tw.write(entries); err != nil {
		return rep, err
	}
	if err := tw.flush(); err != nil {
		return rep, err
	}
	if tw.off != size {
		return rep, fmt.Errorf("append: internal error: tables end at %d, want %d", tw.off, size)
	}
	if checks {
		h.Checksum = d.Sum64()
		h.Put(pre[mldf.HeaderOffset:])
	}
	if opt.Committing != nil {
		if err := opt.Committing(Fingerprint(size, pre[:mldf.PreambleSize])); err != nil {
			return rep, err
		}
	}
	if err := o.finish(pre[:mldf.PreambleSize]); err != nil {
		return rep, err
	}
	rep.RangeCopied, rep.ServerCopied = o.copied()
	rep.BaseSamples, rep.Added, rep.Size, rep.Checksum, rep.Elapsed = nb, na, size, h.Checksum, time.Since(start)
	for _, c := range cls {
		rep.NewClasses += len(c.names) - c.had
	}
	return rep, nil
}

// placeRow places the payloads of row (its references at refs, -1 for a field without one,
// that have a size) from cursor on, calling fn with each reference's offset in the row, the
// reference and where its payload goes; it returns the cursor after them, or fn's error.
func placeRow(row []byte, refs []int, cursor, page int64, fn func(off int, ref mldf.PayloadRef, at int64) error) (int64, error) {
	for _, off := range refs {
		if off < 0 {
			continue
		}
		ref := mldf.GetRef(row[off:])
		if ref.Size == 0 {
			continue
		}
		var at int64
		at, cursor = place(cursor, int64(ref.Size), page)
		if err := fn(off, ref, at); err != nil {
			return cursor, err
		}
	}
	return cursor, nil
}

// windowReader reads payloads in increasing offset order through a window of chunk bytes
// of a data region ending at end: one read a window instead of one a payload.
type windowReader struct {
	r      io.ReaderAt
	end    int64
	buf    []byte
	lo, hi int64 // the window
	big    []byte
}

// read returns the n bytes at off, valid until the next read.
func (w *windowReader) read(off, n int64) ([]byte, error) {
	if off >= w.lo && off+n <= w.hi {
		return w.buf[off-w.lo : off-w.lo+n], nil
	}
	if n > chunk {
		if int64(cap(w.big)) < n {
			w.big = make([]byte, n)
		}
		p := w.big[:n]
		_, err := w.r.ReadAt(p, off)
		return p, err
	}
	if w.buf == nil {
		w.buf = make([]byte, chunk)
	}
	k := max(min(chunk, w.end-off), n)
	if _, err := w.r.ReadAt(w.buf[:k], off); err != nil {
		w.lo, w.hi = 0, 0
		return nil, err
	}
	w.lo, w.hi = off, off+k
	return w.buf[:n], nil
}

// gatherWriter joins writes at increasing offsets, with the zero bytes between them, into
// writes of up to chunk bytes.
type gatherWriter struct {
	w     func(b []byte, off int64) error
	buf   []byte
	start int64 // the offset of buf
}

func (g *gatherWriter) write(p []byte, at int64) error {
	end := g.start + int64(len(g.buf))
	if len(g.buf) > 0 && (at < end || at-end+int64(len(p))+int64(len(g.buf)) > chunk) {
		if err := g.flush(); err != nil {
			return err
		}
	}
	if len(p) > chunk {
		return g.w(p, at)
	}
	if g.buf == nil {
		g.buf = make([]byte, 0, chunk)
	}
	if len(g.buf) == 0 {
		g.start = at
	}
	n := len(g.buf)
	g.buf = g.buf[:n+int(at-g.start)-n] // the gap: zero bytes
	clear(g.buf[n:])
	g.buf = append(g.buf, p...)
	return nil
}

func (g *gatherWriter) flush() error {
	if len(g.buf) == 0 {
		return nil
	}
	err := g.w(g.buf, g.start)
	g.start, g.buf = g.start+int64(len(g.buf)), g.buf[:0]
	return err
}

// copyRW copies n bytes at srcOff of src to dstOff of dst through a buffer.
func copyRW(ctx context.Context, src, dst *os.File, srcOff, dstOff, n int64) error {
	buf := make([]byte, min(n, chunk))
	for n > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		b := buf[:min(n, int64(len(buf)))]
		if _, err := src.ReadAt(b, srcOff); err != nil {
			return err
		}
		if _, err := dst.WriteAt(b, dstOff); err != nil {
			return err
		}
		srcOff, dstOff, n = srcOff+int64(len(b)), dstOff+int64(len(b)), n-int64(len(b))
	}
	return nil
}

// copyTable streams n bytes at off of src (records of rec bytes) into tw, through edit when
// it is not nil.
func copyTable(ctx context.Context, src io.ReaderAt, off, n, rec int64, edit func([]byte) error, tw *tableWriter) error {
	if n == 0 {
		return nil
	}
	buf := make([]byte, min(n, max(chunk/rec, 1)*rec))
	for n > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		b := buf[:min(n, int64(len(buf)))]
		if _, err := src.ReadAt(b, off); err != nil {
			return err
		}
		if edit != nil {
			if err := edit(b); err != nil {
				return err
			}
		}
		if err := tw.write(b); err != nil {
			return err
		}
		off, n = off+int64(len(b)), n-int64(len(b))
	}
	return nil
}

// tableWriter appends table bytes at off through a buffer, hashing them.
type tableWriter struct {
	w    func(b []byte, off int64) error
	off  int64
	d    *xxhash.Digest
	buf  []byte
	name string
}

func (t *tableWriter) write(b []byte) error {
	if len(t.buf)+len(b) > chunk {
		if err := t.flush(); err != nil {
			return err
		}
	}
	if len(b) > chunk {
		t.d.Write(b)
		if err := t.w(b, t.off); err != nil {
			return fmt.Errorf("append: write the tables of %s at %d: %w", t.name, t.off, err)
		}
		t.off += int64(len(b))
		return nil
	}
	if t.buf == nil {
		t.buf = make([]byte, 0, chunk)
	}
	t.buf = append(t.buf, b...)
	return nil
}

func (t *tableWriter) flush() error {
	if len(t.buf) == 0 {
		return nil
	}
	t.d.Write(t.buf)
	if err := t.w(t.buf, t.off); err != nil {
		return fmt.Errorf("append: write the tables of %s at %d: %w", t.name, t.off, err)
	}
	t.off += int64(len(t.buf))
	t.buf = t.buf[:0]
	return nil
}
