// Package merge joins the part files of a sharded conversion (OUT.part-00003-of-00008.mldf)
// into one MLDF file. It checks that every part is present, complete (its .done record matches
// it) and compatible with the others, then copies the data regions page-aligned with
// copy_file_range where the kernel allows, rebases the tables and recomputes the checksum.
//
// Parts and output may be bucket URLs (s3://, gs://, az://): the parts are then listed and
// read through objstore, and the merged object is a multipart upload of server-side copies
// of their data regions plus the tables made here, the same bytes as a local merge
// (object.go; docs/STORAGE.md, "Merge in a bucket").
//
// The merged file holds the parts' samples in part order with the same payload bytes and
// metadata; only the payload offsets differ from a single-machine run (each part's data region
// starts on a page boundary). Memory use is bounded: tables are streamed in fixed-size chunks.
package merge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pagewriter"
)

// Errors returned by Merge, wrapped with the file they concern.
var (
	ErrPartName     = errors.New("merge: not a part file name")
	ErrMissingPart  = errors.New("merge: part missing")
	ErrDuplicate    = errors.New("merge: part given twice")
	ErrIncomplete   = errors.New("merge: part not complete")
	ErrRecord       = errors.New("merge: bad completion record")
	ErrMismatch     = errors.New("merge: part does not match its completion record")
	ErrIncompatible = errors.New("merge: parts are not compatible")
	ErrCorruptPart  = errors.New("merge: corrupt part")
	ErrUnsupported  = errors.New("merge: not supported")
)

// CopyMethod selects how data regions are copied.
type CopyMethod int

const (
	// CopyAuto uses copy_file_range (in-kernel copy, or a reflink on file systems that share
	// extents) and falls back to reads and writes where the kernel refuses it.
	CopyAuto CopyMethod = iota
	// CopyReadWrite copies through a user-space buffer (pread/pwrite).
	CopyReadWrite
)

// Options tune MergeWith. The zero value is what Merge uses.
type Options struct {
	// Copy selects the copy method of the data regions.
	Copy CopyMethod
	// VerifyParts runs reader.Verify on every part before merging: every structural and
	// field rule (it reads all the data once more).
	VerifyParts bool
	// TrustParts skips the check made by default while copying: the CRC-32C of every payload
	// against its part's allocation table (rule V6), computed from the bytes as they are
	// copied. Without it the data is copied with copy_file_range where the kernel allows,
	// never read by the merge.
	TrustParts bool
	// Store reaches parts and outputs named by bucket URLs (s3://, gs://, az://); nil means
	// a client of the merge's own (objstore.New), made only when needed.
	Store *objstore.Client
}

// Report describes a merge.
type Report struct {
	Output       string
	Parts        int
	Samples      int64
	Entries      int64 // allocation entries (non-empty payloads)
	DataBytes    int64 // bytes of the parts' data regions copied
	RangeCopied  int64 // of DataBytes, copied with copy_file_range
	ServerCopied int64 // of DataBytes, copied by the object store (server-side part copies)
	Size         int64 // output file size
	Checksum     uint64
	RecipeSHA256 string
	Elapsed      time.Duration // the whole merge
	CopyTime     time.Duration // of Elapsed, copying the data regions
	SyncTime     time.Duration // of Elapsed, syncing and publishing the output
}

// CopyMethodName names how the data was copied, for summaries.
func (r Report) CopyMethodName() string {
	switch {
	case r.DataBytes == 0:
		return "nothing to copy"
	case r.ServerCopied > 0:
		return fmt.Sprintf("server-side copy, %.1f MB through the client", float64(r.DataBytes-r.ServerCopied)/1e6)
	case r.ServerCopied == 0 && !isLocal(r.Output):
		return "through the client"
	case r.RangeCopied == r.DataBytes:
		return "copy_file_range"
	case r.RangeCopied == 0:
		return "read/write"
	}
	return "copy_file_range + read/write"
}

// Merge checks the parts and writes them as one file at out; see MergeWith.
func Merge(out string, parts []string) (Report, error) {
	return MergeWith(context.Background(), out, parts, Options{})
}

// part is one checked part.
type part struct {
	path    string
	index   int
	obj     *objstore.ReaderAt // the part, local or in a bucket
	f       *os.File           // obj's local file (nil in a bucket): copy_file_range reads it
	r       io.ReaderAt        // obj
	hdr     mldf.Header
	rec     Record
	descs   []byte
	names   []byte // the class-names blocks after the descriptors (MLDF 1.1), to their end
	refs    []int  // per field: offset of its payload reference in a row, or -1
	rowSize int64
	entries int64
	shift   int64 // added to every payload pointer
}

func (p *part) dataLen() int64 { return int64(p.hdr.MetadataPtr - p.hdr.DataPtr) }

// MergeWith checks that parts are all N parts of one sharded run (names parse, indices 0..N-1
// each once, the same N), complete (each opens as a valid MLDF file and its .done record
// exists, names it, and carries its checksum and sample count) and compatible (the same
// recipe hash, field descriptors, page size and flags). Then it writes one MLDF file at out
// atomically: nothing appears at out unless the whole merge succeeds. Unless opt.TrustParts,
// every payload's CRC-32C is checked as it is copied (a part's header checksum always is), so
// a flipped bit in any part fails the merge, naming the part, sample and rule. ctx stops a
// long copy.
func MergeWith(ctx context.Context, out string, parts []string, opt Options) (rep Report, err error) {
	start := time.Now()
	rep.Output = out
	ps, err := checkNames(out, parts)
	if err != nil {
		return rep, err
	}
	if opt.Store == nil {
		opt.Store = objstore.New()
		defer opt.Store.Close()
	}
	defer func() {
		for _, p := range ps {
			if p.obj != nil {
				p.obj.Close()
			}
		}
	}()
	// Each part is opened (a stat) before anything is read: whether it is a local file is a
	// capability of the opened part (its File), and a merge whose parts are in a bucket is
	// refused below before their data is read.
	remote := !isLocal(out)
	for _, p := range ps {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if err := openPart(ctx, p, opt); err != nil {
			return rep, err
		}
		remote = remote || p.f == nil
	}
	if remote && isLocal(out) {
		return rep, fmt.Errorf("merge %s: %w: the parts are in a bucket; merge into the bucket (an s3://, gs:// or az:// output)", out, ErrUnsupported)
	}
	if remote && !opt.TrustParts {
		return rep, fmt.Errorf("merge %s: %w: checking every payload's CRC-32C would read the parts' data through this machine; merge with the server-side copy (TrustParts) and verify the result", out, ErrUnsupported)
	}
	for _, p := range ps {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if err := checkPart(ctx, p, opt); err != nil {
			return rep, err
		}
	}
	if err := checkCompatible(ps); err != nil {
		return rep, err
	}
	rep.Parts = len(ps)
	rep.RecipeSHA256 = ps[0].rec.RecipeSHA256
	w := write
	if remote {
		w = writeObject
	}
	if err := w(ctx, out, ps, opt, &rep); err != nil {
		return rep, err
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// checkNames parses the part names and checks that they are exactly parts 0..N-1 of N.
func checkNames(out string, parts []string) ([]*part, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge %s: %w: no parts given", out, ErrMissingPart)
	}
	outAbs, _ := filepath.Abs(out)
	n := -1
	byIndex := map[int]*part{}
	for _, path := range parts {
		if abs, _ := filepath.Abs(path); abs == outAbs {
			return nil, fmt.Errorf("merge %s: the output is also given as a part", out)
		}
		_, i, count, err := ParsePartName(path)
		if err != nil {
			return nil, fmt.Errorf("merge %s: %w", out, err)
		}
		if n >= 0 && count != n {
			return nil, fmt.Errorf("merge %s: %w: %s is a part of %d but %s is a part of %d",
				out, ErrIncompatible, path, count, parts[0], n)
		}
		n = count
		if q, dup := byIndex[i]; dup {
			return nil, fmt.Errorf("merge %s: %w: part %d is both %s and %s", out, ErrDuplicate, i, q.path, path)
		}
		byIndex[i] = &part{path: path, index: i}
	}
	ps := make([]*part, n)
	var missing []int
	for i := range n {
		p, ok := byIndex[i]
		if !ok {
			missing = append(missing, i)
			continue
		}
		ps[i] = p
	}
	if len(missing) > 0 {
		example := PartPath(out, missing[0], n)
		if q := byIndex[firstKey(byIndex)]; q != nil {
			base, _, _, _ := ParsePartName(q.path)
			example = PartPath(base, missing[0], n)
		}
		return nil, fmt.Errorf("merge %s: %w: %d of %d parts missing: tasks %v (e.g. %s); re-run those tasks",
			out, ErrMissingPart, len(missing), n, missing, example)
	}
	return ps, nil
}

func firstKey(m map[int]*part) int {
	k := -1
	for i := range m {
		if k < 0 || i < k {
			k = i
		}
	}
	return k
}

// checkPart checks part p (opened by openPart: a local file and an object in a bucket alike)
// with the MLDF reader: every header, descriptor and table rule the reader makes at open, and
// with opt.VerifyParts all of Verify. Then it reads what the merge keeps of the part
// (descriptors, class names) and checks its completion record.
func checkPart(ctx context.Context, p *part, opt Options) error {
	obj := p.obj
	rd, err := openReader(p.path, obj)
	if err != nil {
		return fmt.Errorf("part %d: %w: %w", p.index, ErrCorruptPart, err)
	}
	defer rd.Close()
	if rd.Size() != obj.Size() {
		return fmt.Errorf("part %d: %w: %s changed while being read", p.index, ErrCorruptPart, p.path)
	}
	p.hdr = rd.Header()
	layout := rd.Layout()
	p.rowSize = int64(layout.Size)
	p.entries = int64(rd.NumAllocEntries())
	for k, d := range rd.Fields() {
		p.refs = append(p.refs, -1)
		if _, has := mldf.MetaSize(d.Type); has {
			p.refs[k] = layout.Offsets[k]
		}
	}
	if opt.VerifyParts {
		if _, err := rd.VerifyWith(ctx, mldf.VerifyOptions{}); err != nil {
			return fmt.Errorf("part %d: %w: %w", p.index, ErrCorruptPart, err)
		}
	}
	p.descs = make([]byte, int(p.hdr.NumFields)*mldf.FieldDescSize)
	if _, err := p.r.ReadAt(p.descs, int64(p.hdr.FieldDescPtr)); err != nil {
		return fmt.Errorf("part %d: read descriptors of %s: %w", p.index, p.path, err)
	}
	if err := readNames(p, p.r); err != nil {
		return err
	}
	return checkRecord(p, func(path string) (Record, error) { return ReadRecord(ctx, opt.Store, path) })
}

// openPart opens part p through opt.Store, a local file and an object in a bucket alike (a
// stat; nothing is read yet).
func openPart(ctx context.Context, p *part, opt Options) error {
	obj, err := opt.Store.OpenReaderAt(ctx, p.path)
	if err != nil {
		if errors.Is(err, objstore.ErrNotFound) {
			return fmt.Errorf("part %d: %w: %s does not exist; re-run task %d (%w)", p.index, ErrMissingPart, p.path, p.index, err)
		}
		return fmt.Errorf("part %d: %w", p.index, err)
	}
	p.obj, p.r, p.f = obj, obj, obj.File()
	return nil
}

// openReader opens the MLDF reader over a part: a local file mapped (Verify then runs at
// memory speed), an object in a bucket through positional reads of obj, which stays open.
func openReader(name string, obj *objstore.ReaderAt) (*mldf.Reader, error) {
	if f := obj.File(); f != nil {
		return mldf.Open(f.Name())
	}
	return mldf.OpenReaderAt(name, struct{ io.ReaderAt }{obj}, obj.Size())
}

// checkRecord reads p's completion record with read and checks that it describes p, then
// that p's tables hash to its header checksum.
func checkRecord(p *part, read func(string) (Record, error)) (err error) {
	recPath := p.path + ".done"
	if p.rec, err = read(recPath); err != nil {
		return fmt.Errorf("part %d: %w", p.index, err)
	}
	r := p.rec
	_, ri, rn, _ := ParsePartName(p.path)
	switch {
	case r.Shard != ri || r.Shards != rn:
		return fmt.Errorf("part %d: %w: %s is for task %d of %d, the part's name says %d of %d",
			p.index, ErrMismatch, recPath, r.Shard, r.Shards, ri, rn)
	case r.Part != "" && filepath.Base(r.Part) != filepath.Base(p.path):
		return fmt.Errorf("part %d: %w: %s names part %s", p.index, ErrMismatch, recPath, r.Part)
	case r.Samples != int64(p.hdr.NumSamples):
		return fmt.Errorf("part %d: %w: %s has %d samples, its record %s says %d",
			p.index, ErrMismatch, p.path, p.hdr.NumSamples, recPath, r.Samples)
	}
	if sum, _ := r.checksum(); sum != p.hdr.Checksum {
		return fmt.Errorf("part %d: %w: %s has header checksum %016x, its record %s says %s: the part was replaced or rewritten after the task finished; re-run task %d",
			p.index, ErrMismatch, p.path, p.hdr.Checksum, recPath, r.Checksum, p.index)
	}
	if p.hdr.Flags&mldf.FlagChecksummed != 0 {
		if got, err := tableChecksum(p); err != nil {
			return err
		} else if got != p.hdr.Checksum {
			return fmt.Errorf("part %d: %w: the tables of %s hash to %016x but its header says %016x: the part is corrupt; re-run task %d",
				p.index, ErrMismatch, p.path, got, p.hdr.Checksum, p.index)
		}
	}
	return nil
}

// chunkSize bounds every buffer of the merge.
const chunkSize = 1 << 20

// tableChecksum recomputes p's header checksum from the file, streaming its tables.
func tableChecksum(p *part) (uint64, error) {
	hdr := make([]byte, mldf.HeaderSize)
	if _, err := p.r.ReadAt(hdr, mldf.HeaderOffset); err != nil {
		return 0, fmt.Errorf("part %d: read header of %s: %w", p.index, p.path, err)
	}
	d := xxhash.New()
	d.Write(hdr[:mldf.HeaderChecksumOffset])
	d.Write(p.descs)
	end := int64(p.hdr.AllocTablePtr) + p.entries*mldf.AllocEntrySize
	buf := make([]byte, chunkSize)
	for off := int64(p.hdr.MetadataPtr); off < end; {
		n := min(end-off, chunkSize)
		if _, err := p.r.ReadAt(buf[:n], off); err != nil {
			return 0, fmt.Errorf("part %d: read tables of %s at %d: %w", p.index, p.path, off, err)
		}
		d.Write(buf[:n])
		off += n
	}
	return d.Sum64(), nil
}

// checkCompatible checks that every part has part 0's format, fields and recipe.
func checkCompatible(ps []*part) error {
	a := ps[0]
	for _, p := range ps[1:] {
		bad := func(what string, x, y any) error {
			return fmt.Errorf("%w: %s: %s has %v, %s has %v", ErrIncompatible, what, a.path, x, p.path, y)
		}
		switch {
		case p.rec.RecipeSHA256 != a.rec.RecipeSHA256:
			return bad("different recipes (recipe_sha256 of the .done records)", a.rec.RecipeSHA256, p.rec.RecipeSHA256)
		case p.hdr.VersionMajor != a.hdr.VersionMajor || p.hdr.VersionMinor != a.hdr.VersionMinor:
			return bad("format version", fmt.Sprintf("%d.%d", a.hdr.VersionMajor, a.hdr.VersionMinor),
				fmt.Sprintf("%d.%d", p.hdr.VersionMajor, p.hdr.VersionMinor))
		case p.hdr.Flags != a.hdr.Flags:
			return bad("flags", fmt.Sprintf("%#x", a.hdr.Flags), fmt.Sprintf("%#x", p.hdr.Flags))
		case p.hdr.PageSize != a.hdr.PageSize:
			return bad("page size", a.hdr.PageSize, p.hdr.PageSize)
		case p.hdr.FieldDescPtr != a.hdr.FieldDescPtr || p.hdr.DataPtr != a.hdr.DataPtr:
			return bad("layout (field_desc_ptr, data_ptr)", fmt.Sprint(a.hdr.FieldDescPtr, a.hdr.DataPtr),
				fmt.Sprint(p.hdr.FieldDescPtr, p.hdr.DataPtr))
		case !bytes.Equal(p.descs, a.descs) || !bytes.Equal(p.names, a.names):
			return fmt.Errorf("%w: field descriptors differ between %s and %s (fields, types or options)", ErrIncompatible, a.path, p.path)
		}
	}
	return nil
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// plan lays the parts out: each part's data region on the next page boundary (p.shift), then
// the rows and the allocation entries of all parts. It returns the merged header (checksum
// 0), its rows, entries and size.
func plan(ps []*part) (h mldf.Header, rows, entries, size int64) {
	a := ps[0]
	page := int64(a.hdr.PageSize)
	cursor := int64(a.hdr.DataPtr)
	for _, p := range ps {
		if p.dataLen() > 0 {
			at := alignUp(cursor, page)
			p.shift = at - int64(p.hdr.DataPtr)
			cursor = at + p.dataLen()
		}
		rows += int64(p.hdr.NumSamples)
		entries += p.entries
	}
	meta := cursor
	alloc := meta + rows*a.rowSize
	size = alloc + entries*mldf.AllocEntrySize
	h = a.hdr
	h.NumSamples = uint64(rows)
	h.MetadataPtr, h.AllocTablePtr, h.Checksum = uint64(meta), uint64(alloc), 0
	return h, rows, entries, size
}

// preamble returns the merged file's bytes before its data region's first payload: the
// signature, h, the field descriptors and the class-names blocks after them (the rest up to
// data_ptr is zero).
func preamble(h mldf.Header, descs, names []byte) []byte {
	pre := make([]byte, int(h.FieldDescPtr)+len(descs)+len(names))
	copy(pre, mldf.Signature)
	h.Put(pre[mldf.HeaderOffset:])
	copy(pre[h.FieldDescPtr:], descs)
	copy(pre[int(h.FieldDescPtr)+len(descs):], names)
	return pre
}

// readNames reads p's class-names blocks (docs/FORMAT.md §14): the bytes from the end of the
// descriptors to the end of the last block, which the merged file keeps as they are (the
// parts' descriptors, and so the blocks' places, are equal).
func readNames(p *part, ra io.ReaderAt) error {
	h := p.hdr
	if h.VersionMinor < mldf.VersionMinorClassNames {
		return nil
	}
	descEnd := h.FieldDescPtr + uint64(len(p.descs))
	end := descEnd
	for k := 0; k+mldf.FieldDescSize <= len(p.descs); k += mldf.FieldDescSize {
		var a [mldf.ArgumentsSize]byte
		copy(a[:], p.descs[k+76:k+76+mldf.ArgumentsSize])
		c, ok := mldf.ParseClassLabelArgs(a)
		if !ok || c.NamesSize == 0 {
			continue
		}
		e := c.NamesPtr + uint64(c.NamesSize)
		if c.NamesPtr < descEnd || e < c.NamesPtr || e > h.DataPtr || c.NamesSize > mldf.MaxClassNamesBlock {
			return fmt.Errorf("part %d: %w: %s: class-names block [%d, %d+%d) outside [%d, %d)",
				p.index, ErrCorruptPart, p.path, c.NamesPtr, c.NamesPtr, c.NamesSize, descEnd, h.DataPtr)
		}
		end = max(end, e)
	}
	if end-descEnd > uint64(len(p.descs)/mldf.FieldDescSize)*mldf.MaxClassNamesBlock+uint64(len(p.descs)) {
		return fmt.Errorf("part %d: %w: %s: class-names blocks too large", p.index, ErrCorruptPart, p.path)
	}
	p.names = make([]byte, end-descEnd)
	if _, err := ra.ReadAt(p.names, int64(descEnd)); err != nil {
		return fmt.Errorf("part %d: read class names of %s: %w", p.index, p.path, err)
	}
	return nil
}

// write lays the parts out and writes the merged file.
func write(ctx context.Context, out string, ps []*part, opt Options, rep *Report) (err error) {
	a := ps[0]
	h, rows, entries, size := plan(ps)
	meta := int64(h.MetadataPtr)

	o, err := pagewriter.CreateOutput(out, nil)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	defer func() {
		if err != nil {
			o.Abort()
		}
	}()
	tmp := o.TempPath()
	pre := preamble(h, a.descs, a.names)
	if _, err := o.WriteAt(pre, 0); err != nil {
		return fmt.Errorf("merge: write %s: %w", tmp, err)
	}
	// Size the file first: the gaps between the parts' regions stay holes (zero bytes).
	if err := o.Truncate(size); err != nil {
		return fmt.Errorf("merge: size %s: %w", tmp, err)
	}

	c := copier{dst: o, dstFd: int(o.Fd()), method: opt.Copy, buf: make([]byte, chunkSize)}
	copyStart := time.Now()
	for _, p := range ps {
		dst := int64(p.hdr.DataPtr) + p.shift
		if opt.TrustParts {
			err = c.copy(ctx, p.f, int64(p.hdr.DataPtr), dst, p.dataLen())
		} else {
			err = c.copyChecked(ctx, p, dst)
		}
		if errors.Is(err, ErrCorruptPart) {
			return err
		}
		if err != nil {
			return fmt.Errorf("merge: copy the data of %s into %s: %w", p.path, tmp, err)
		}
	}
	rep.DataBytes, rep.RangeCopied, rep.CopyTime = c.total, c.ranged, time.Since(copyStart)

	d, end, err := writeTables(ps, o.WriteAt, meta, pre, a.descs, tmp)
	if err != nil {
		return err
	}
	if end != size {
		return fmt.Errorf("merge: internal error: tables end at %d, want %d", end, size)
	}
	if h.Flags&mldf.FlagChecksummed != 0 {
		h.Checksum = d.Sum64()
		h.Put(pre[mldf.HeaderOffset:])
	}
	if _, err := o.WriteAt(pre[:mldf.PreambleSize], 0); err != nil {
		return fmt.Errorf("merge: write header of %s: %w", tmp, err)
	}
	syncStart := time.Now()
	if err := o.Commit(); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	rep.SyncTime = time.Since(syncStart)
	rep.Samples, rep.Entries, rep.Size, rep.Checksum = rows, entries, size, h.Checksum
	return nil
}

// writeTables writes the merged metadata table (every part's rows, rebased) and allocation
// table (every part's entries, rebased) at meta through out, and returns the header checksum's
// digest (over the header up to its checksum, the descriptors and the tables) and where the
// tables end. The local and the bucket merge share it.
func writeTables(ps []*part, out func([]byte, int64) (int, error), meta int64, pre, descs []byte, name string) (*xxhash.Digest, int64, error) {
	d := xxhash.New()
	d.Write(pre[mldf.HeaderOffset : mldf.HeaderOffset+mldf.HeaderChecksumOffset])
	d.Write(descs)
	tw := tableWriter{out: out, off: meta, d: d, buf: make([]byte, 0, chunkSize), name: name}
	in := make([]byte, chunkSize)
	for _, p := range ps {
		if err := rebaseRows(p, &tw, in); err != nil {
			return nil, 0, err
		}
	}
	for _, p := range ps {
		if err := rebaseEntries(p, &tw, in); err != nil {
			return nil, 0, err
		}
	}
	if err := tw.flush(); err != nil {
		return nil, 0, err
	}
	return d, tw.off, nil
}

// tableWriter appends table bytes at off through a buffer, hashing them.
type tableWriter struct {
	out  func(b []byte, off int64) (int, error)
	off  int64
	d    *xxhash.Digest
	buf  []byte
	name string
}

func (t *tableWriter) write(b []byte) error {
	if len(t.buf)+len(b) > cap(t.buf) {
		if err := t.flush(); err != nil {
			return err
		}
	}
	t.buf = append(t.buf, b...)
	return nil
}

func (t *tableWriter) flush() error {
	if len(t.buf) == 0 {
		return nil
	}
	t.d.Write(t.buf)
	if _, err := t.out(t.buf, t.off); err != nil {
		return fmt.Errorf("merge: write tables of %s at %d: %w", t.name, t.off, err)
	}
	t.off += int64(len(t.buf))
	t.buf = t.buf[:0]
	return nil
}

// rebaseRows streams p's metadata rows into tw, moving every non-empty payload reference by
// p.shift. A reference outside p's data region is an error (the part is corrupt).
func rebaseRows(p *part, tw *tableWriter, in []byte) error {
	rs := p.rowSize
	per := max(int64(len(in))/rs, 1)
	lo, hi := p.hdr.DataPtr, p.hdr.MetadataPtr
	total := int64(p.hdr.NumSamples)
	for first := int64(0); first < total; first += per {
		n := min(per, total-first)
		b := in[:n*rs]
		if _, err := p.r.ReadAt(b, int64(p.hdr.MetadataPtr)+first*rs); err != nil {
			return fmt.Errorf("merge: read metadata of %s: %w", p.path, err)
		}
		for i := range n {
			row := b[i*rs : (i+1)*rs]
			for f, off := range p.refs {
				if off < 0 {
					continue
				}
				ref := mldf.GetRef(row[off:])
				if ref.Size == 0 {
					continue
				}
				if ref.Ptr < lo || ref.Ptr > hi || uint64(ref.Size) > hi-ref.Ptr {
					return fmt.Errorf("merge: %w: %s sample %d field %d: payload [%d, %d+%d) lies outside the data region [%d, %d)",
						ErrCorruptPart, p.path, first+i, f, ref.Ptr, ref.Ptr, ref.Size, lo, hi)
				}
				ref.Ptr = uint64(int64(ref.Ptr) + p.shift)
				mldf.PutRef(row[off:], ref)
			}
		}
		if err := tw.write(b); err != nil {
			return err
		}
	}
	return nil
}

// rebaseEntries streams p's allocation entries into tw with their pointers moved by p.shift.
// The checks (CRC-32C) stay: the payload bytes are the same.
func rebaseEntries(p *part, tw *tableWriter, in []byte) error {
	const es = mldf.AllocEntrySize
	per := int64(len(in)) / es
	lo, hi := p.hdr.DataPtr, p.hdr.MetadataPtr
	for first := int64(0); first < p.entries; first += per {
		n := min(per, p.entries-first)
		b := in[:n*es]
		if _, err := p.r.ReadAt(b, int64(p.hdr.AllocTablePtr)+first*es); err != nil {
			return fmt.Errorf("merge: read allocation table of %s: %w", p.path, err)
		}
		for k := range n {
			e := mldf.DecodeAllocEntry(b[k*es:])
			if e.Ptr < lo || e.Ptr > hi || uint64(e.Size) > hi-e.Ptr {
				return fmt.Errorf("merge: %w: %s allocation entry %d: payload [%d, %d+%d) lies outside the data region [%d, %d)",
					ErrCorruptPart, p.path, first+k, e.Ptr, e.Ptr, e.Size, lo, hi)
			}
			e.Ptr = uint64(int64(e.Ptr) + p.shift)
			e.Put(b[k*es:])
		}
		if err := tw.write(b); err != nil {
			return err
		}
	}
	return nil
}
