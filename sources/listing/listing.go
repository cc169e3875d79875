// Package listing keeps the list of samples that a source finds before its run (the files of
// a folder, the entries of a manifest) on disk rather than in memory, in key order, so that a
// source over 10^8 files holds a few megabytes of it. Records are added in any order, sorted
// with bounded memory (runs of at most Options.MemLimit bytes, spilled to an unlinked
// temporary file and merged), then read back in order from any position.
//
// A list that fits in MemLimit never touches the disk. Otherwise it costs twice its size in
// the temporary directory while it is sorted and once afterwards; the file has no name, so
// nothing is left behind even after kill -9, and its descriptor is closed when the List is no
// longer reachable (or by Close).
package listing

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
)

// Defaults of Options.
const (
	// DefaultMemLimit is the bytes of records held in memory before a sorted run is spilled.
	DefaultMemLimit = 16 << 20
	// indexEvery is the distance in records between two positions kept for seeking.
	indexEvery = 4096
	// readBuf is the read buffer of a sequential read or of one run during the merge.
	readBuf = 32 << 10
)

// ErrCorrupt means the temporary file did not read back as written.
var ErrCorrupt = errors.New("listing: temporary file corrupt")

// Options configure a Builder. The zero value sorts by key, in os.TempDir().
type Options struct {
	// Dir holds the temporary file; "" means os.TempDir().
	Dir string
	// MemLimit is the bytes of records held in memory; 0 means DefaultMemLimit.
	MemLimit int
	// Unsorted keeps the records in the order they were added (keys are then ignored).
	Unsorted bool
}

// A Builder collects records. It is used by one goroutine.
type Builder struct {
	opt  Options
	buf  []byte // records being collected: uvarint key length, key, uvarint data length, data
	offs []int  // start of each record in buf
	f    *os.File
	runs []int64 // end offset in f of each spilled run (they follow each other from 0)
	n    int64
	err  error
}

// NewBuilder returns an empty Builder.
func NewBuilder(o Options) *Builder {
	if o.MemLimit <= 0 {
		o.MemLimit = DefaultMemLimit
	}
	if o.Dir == "" {
		o.Dir = os.TempDir()
	}
	return &Builder{opt: o}
}

// Len returns the number of records added.
func (b *Builder) Len() int64 { return b.n }

// Add appends a record. key decides its place (bytewise order; records with equal keys keep
// the order they were added in); data is returned with it.
func (b *Builder) Add(key, data []byte) error {
	if b.err != nil {
		return b.err
	}
	if b.opt.Unsorted {
		key = nil
	}
	b.reserve(2*binary.MaxVarintLen64 + len(key) + len(data))
	b.offs = append(b.offs, len(b.buf))
	b.buf = binary.AppendUvarint(b.buf, uint64(len(key)))
	b.buf = append(b.buf, key...)
	b.buf = binary.AppendUvarint(b.buf, uint64(len(data)))
	b.buf = append(b.buf, data...)
	b.n++
	if len(b.buf) >= b.opt.MemLimit {
		b.err = b.spill()
	}
	return b.err
}

// reserve makes room for n more bytes in b.buf, growing it by doubling but never past the
// memory limit (a doubling slice would end at twice the limit).
func (b *Builder) reserve(n int) {
	if cap(b.buf)-len(b.buf) >= n {
		return
	}
	c := max(2*cap(b.buf), 64<<10, len(b.buf)+n)
	c = min(c, max(b.opt.MemLimit+4096, len(b.buf)+n))
	nb := make([]byte, len(b.buf), c)
	copy(nb, b.buf)
	b.buf = nb
}

// record returns the key and data of the record at off in buf.
func record(buf []byte, off int) (key, data []byte) {
	kl, n := binary.Uvarint(buf[off:])
	off += n
	key = buf[off : off+int(kl)]
	off += int(kl)
	dl, n := binary.Uvarint(buf[off:])
	off += n
	return key, buf[off : off+int(dl)]
}

// sort puts b.offs in the order of the records' keys (stable).
func (b *Builder) sort() {
	if b.opt.Unsorted {
		return
	}
	slices.SortStableFunc(b.offs, func(x, y int) int {
		kx, _ := record(b.buf, x)
		ky, _ := record(b.buf, y)
		return bytes.Compare(kx, ky)
	})
}

// recordLen returns the encoded length of the record at off in buf.
func recordLen(buf []byte, off int) int {
	k, d := record(buf, off)
	return uvarintLen(len(k)) + len(k) + uvarintLen(len(d)) + len(d)
}

func uvarintLen(n int) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(n))
}

// spill writes the collected records as one sorted run to the temporary file.
func (b *Builder) spill() error {
	if b.f == nil {
		f, err := createTemp(b.opt.Dir)
		if err != nil {
			return err
		}
		b.f = f
	}
	b.sort()
	at := int64(0)
	if len(b.runs) > 0 {
		at = b.runs[len(b.runs)-1]
	}
	w := bufio.NewWriterSize(io.NewOffsetWriter(b.f, at), 1<<20)
	n := int64(0)
	for _, off := range b.offs {
		rec := b.buf[off : off+recordLen(b.buf, off)]
		w.Write(rec)
		n += int64(len(rec))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("listing: write %s: %w", b.opt.Dir, err)
	}
	b.runs = append(b.runs, at+n)
	b.buf, b.offs = b.buf[:0], b.offs[:0]
	return nil
}

// createTemp creates an unlinked temporary file in dir.
func createTemp(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, ".listing-*")
	if err != nil {
		return nil, fmt.Errorf("listing: temporary file: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("listing: temporary file: %w", err)
	}
	return f, nil
}

// Abort discards the records and the temporary file.
func (b *Builder) Abort() {
	if b.f != nil {
		b.f.Close()
		b.f = nil
	}
	b.buf, b.offs, b.err = nil, nil, errors.New("listing: aborted")
}

// Finish returns the list of the records in order. The Builder must not be used afterwards.
func (b *Builder) Finish() (*List, error) {
	if b.err != nil {
		b.Abort()
		return nil, b.err
	}
	if b.f == nil {
		b.sort()
		l := &List{n: b.n, hi: b.n, mem: b.buf, order: b.offs}
		b.buf, b.offs = nil, nil
		return l, nil
	}
	if len(b.offs) > 0 {
		if err := b.spill(); err != nil {
			b.Abort()
			return nil, err
		}
	}
	l, err := b.merge()
	if err != nil {
		b.Abort()
		return nil, err
	}
	return l, nil
}

// maxFanIn is the most runs merged at once: more runs are merged in groups first, so the
// merge's read buffers stay under maxFanIn × readBuf whatever the list's size.
const maxFanIn = 64

// span is a run's place in the temporary file.
type span struct{ start, end int64 }

// merge merges the spilled runs into the sorted list, written after them in the same file
// (in passes of at most maxFanIn runs); the space of merged runs is released as it goes.
func (b *Builder) merge() (*List, error) {
	runs := make([]span, len(b.runs))
	start := int64(0)
	for r, end := range b.runs {
		runs[r] = span{start, end}
		start = end
	}
	end := start
	for len(runs) > maxFanIn {
		var next []span
		for i := 0; i < len(runs); i += maxFanIn {
			group := runs[i:min(i+maxFanIn, len(runs))]
			n, _, err := b.mergeRuns(group, end, nil)
			if err != nil {
				return nil, err
			}
			next = append(next, span{end, end + n})
			end += n
		}
		runs = next
	}
	index := make([]int64, 0, b.n/indexEvery+1)
	size, count, err := b.mergeRuns(runs, end, &index)
	if err != nil {
		return nil, err
	}
	if count != b.n {
		return nil, fmt.Errorf("%w: %d records merged, %d added", ErrCorrupt, count, b.n)
	}
	// The descriptor is closed by Close, or by os.File's own cleanup once no List holds it.
	l := &List{n: b.n, hi: b.n, index: index, file: &file{f: b.f, base: end, size: size}}
	b.f = nil
	return l, nil
}

// mergeRuns merges runs into one written at offset at, and frees the runs' blocks. With index
// set, it records the offset (from at) of every indexEvery-th record. It returns the bytes
// and the records written.
func (b *Builder) mergeRuns(runs []span, at int64, index *[]int64) (int64, int64, error) {
	h := &runHeap{}
	for r, sp := range runs {
		rr := &runReader{run: r, br: bufio.NewReaderSize(io.NewSectionReader(b.f, sp.start, sp.end-sp.start), readBuf)}
		ok, err := rr.next()
		if err != nil {
			return 0, 0, err
		}
		if ok {
			h.rs = append(h.rs, rr)
		}
	}
	heap.Init(h)
	w := bufio.NewWriterSize(io.NewOffsetWriter(b.f, at), 1<<20)
	var off, i int64
	var rec []byte
	for h.Len() > 0 {
		rr := h.rs[0]
		if index != nil && i%indexEvery == 0 {
			*index = append(*index, off)
		}
		rec = binary.AppendUvarint(rec[:0], uint64(len(rr.key)))
		rec = append(rec, rr.key...)
		rec = binary.AppendUvarint(rec, uint64(len(rr.data)))
		rec = append(rec, rr.data...)
		if _, err := w.Write(rec); err != nil {
			return 0, 0, fmt.Errorf("listing: write %s: %w", b.opt.Dir, err)
		}
		off += int64(len(rec))
		i++
		ok, err := rr.next()
		if err != nil {
			return 0, 0, err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	if err := w.Flush(); err != nil {
		return 0, 0, fmt.Errorf("listing: write %s: %w", b.opt.Dir, err)
	}
	for _, sp := range runs {
		punchHole(b.f, sp.start, sp.end-sp.start)
	}
	return off, i, nil
}

// runReader reads one sorted run back.
type runReader struct {
	run       int
	br        *bufio.Reader
	key, data []byte
}

func (r *runReader) next() (bool, error) {
	var err error
	r.key, r.data, err = readRecord(r.br, r.key, r.data)
	if err == io.EOF {
		return false, nil
	}
	return err == nil, err
}

// readRecord reads one record from br into key and data (reused).
func readRecord(br *bufio.Reader, key, data []byte) ([]byte, []byte, error) {
	kl, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, nil, err // io.EOF at a clean end
	}
	key, err = readN(br, key, kl)
	if err != nil {
		return nil, nil, err
	}
	dl, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, nil, corrupt(err)
	}
	data, err = readN(br, data, dl)
	return key, data, err
}

func readN(br *bufio.Reader, b []byte, n uint64) ([]byte, error) {
	if n > 1<<30 {
		return nil, fmt.Errorf("%w: record of %d bytes", ErrCorrupt, n)
	}
	b = slices.Grow(b[:0], int(n))[:n]
	if _, err := io.ReadFull(br, b); err != nil {
		return nil, corrupt(err)
	}
	return b, nil
}

func corrupt(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: truncated record", ErrCorrupt)
	}
	return err
}

// runHeap orders the runs by their current key, then by run (equal keys keep their order).
type runHeap struct{ rs []*runReader }

func (h *runHeap) Len() int { return len(h.rs) }
func (h *runHeap) Less(i, j int) bool {
	if c := bytes.Compare(h.rs[i].key, h.rs[j].key); c != 0 {
		return c < 0
	}
	return h.rs[i].run < h.rs[j].run
}
func (h *runHeap) Swap(i, j int) { h.rs[i], h.rs[j] = h.rs[j], h.rs[i] }
func (h *runHeap) Push(x any)    { h.rs = append(h.rs, x.(*runReader)) }
func (h *runHeap) Pop() any {
	r := h.rs[len(h.rs)-1]
	h.rs = h.rs[:len(h.rs)-1]
	return r
}

// file is the sorted list on disk, shared by a List and its slices.
type file struct {
	f          *os.File
	base, size int64
	once       sync.Once
}

func (f *file) close() { f.once.Do(func() { f.f.Close() }) }

// A List is a sorted sequence of records, in memory or in an unlinked temporary file. It is
// safe for concurrent use; Each reads with its own buffer.
type List struct {
	n      int64   // records in the whole list
	lo, hi int64   // this view: records [lo, hi)
	index  []int64 // on disk: offset of record k*indexEvery
	file   *file
	mem    []byte // in memory: the records, in the order they were added
	order  []int  // in memory: the records' offsets in mem, in key order
}

// Len returns the number of records in l.
func (l *List) Len() int64 { return l.hi - l.lo }

// Slice returns the records [lo, hi) of l, sharing its storage.
func (l *List) Slice(lo, hi int64) (*List, error) {
	if lo < 0 || hi < lo || hi > l.Len() {
		return nil, fmt.Errorf("listing: slice [%d, %d) of %d records", lo, hi, l.Len())
	}
	s := *l
	s.lo, s.hi = l.lo+lo, l.lo+hi
	return &s, nil
}

// Close releases the temporary file of l and of every slice of it. Reading it afterwards
// fails.
func (l *List) Close() {
	if l.file != nil {
		l.file.close()
	}
}

// Each calls fn with every record of l in order and its index in l (from 0). key and data are
// valid only during the call. It stops at fn's first error and returns it.
func (l *List) Each(fn func(i int64, key, data []byte) error) error {
	if l.Len() == 0 {
		return nil
	}
	if l.file == nil {
		for j, off := range l.order[l.lo:l.hi] {
			key, data := record(l.mem, off)
			if err := fn(int64(j), key, data); err != nil {
				return err
			}
		}
		return nil
	}
	k := l.lo / indexEvery
	skip := l.lo - k*indexEvery
	start := l.index[k]
	br := bufio.NewReaderSize(io.NewSectionReader(l.file.f, l.file.base+start, l.file.size-start), readBuf)
	var key, data []byte
	for j := int64(0); j < skip+l.Len(); j++ {
		var err error
		key, data, err = readRecord(br, key, data)
		if err != nil {
			return fmt.Errorf("listing: read record %d: %w", l.lo-skip+j, corrupt(err))
		}
		if j < skip {
			continue
		}
		if err := fn(j-skip, key, data); err != nil {
			return err
		}
	}
	return nil
}
