package mldf

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
)

// Positional reads (a file that could not be mapped, an object in a bucket) go through a
// small cache of aligned blocks, so that the scans of Verify and Describe (rows, allocation
// entries, payloads and gaps, each in file order) cost one read per block rather than one per
// value, and memory stays at cacheBlocks × cacheBlock whatever the file's size.
const (
	cacheBlock  = 1 << 20
	cacheBlocks = 8
)

// raBacking reads through an io.ReaderAt. bytes returns a fresh buffer per call.
type raBacking struct {
	ra     io.ReaderAt
	size   uint64
	closer io.Closer // nil: nothing to close

	mu     sync.Mutex
	blocks []cacheEntry
	tick   uint64
}

type cacheEntry struct {
	idx  uint64 // block number
	b    []byte
	used uint64
}

func newRABacking(ra io.ReaderAt, size uint64, closer io.Closer) *raBacking {
	return &raBacking{ra: ra, size: size, closer: closer}
}

func (rb *raBacking) zeroCopy() bool { return false }

func (rb *raBacking) close() error {
	rb.mu.Lock()
	rb.blocks = nil
	rb.mu.Unlock()
	if rb.closer == nil {
		return nil
	}
	return rb.closer.Close()
}

// readFull reads exactly len(p) bytes at off.
func (rb *raBacking) readFull(p []byte, off uint64) error {
	n, err := rb.ra.ReadAt(p, int64(off))
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return err
}

func (rb *raBacking) bytes(off, n uint64) ([]byte, error) {
	end := off + n
	if end < off || end > rb.size || n > math.MaxInt || off > math.MaxInt64 {
		return nil, io.ErrUnexpectedEOF
	}
	buf := make([]byte, n)
	if n == 0 {
		return buf, nil
	}
	if n > cacheBlock {
		if err := rb.readFull(buf, off); err != nil {
			return nil, err
		}
		return buf, nil
	}
	for done := uint64(0); done < n; {
		pos := off + done
		blk, err := rb.block(pos / cacheBlock)
		if err != nil {
			return nil, err
		}
		done += uint64(copy(buf[done:], blk[pos%cacheBlock:]))
	}
	return buf, nil
}

// block returns block idx, from the cache or read (outside the lock: concurrent readers of
// different blocks do not wait for each other).
func (rb *raBacking) block(idx uint64) ([]byte, error) {
	rb.mu.Lock()
	rb.tick++
	for i := range rb.blocks {
		if rb.blocks[i].idx == idx {
			rb.blocks[i].used = rb.tick
			b := rb.blocks[i].b
			rb.mu.Unlock()
			return b, nil
		}
	}
	rb.mu.Unlock()

	start := idx * cacheBlock
	b := make([]byte, min(cacheBlock, rb.size-start))
	if err := rb.readFull(b, start); err != nil {
		return nil, err
	}

	rb.mu.Lock()
	defer rb.mu.Unlock()
	rb.tick++
	e := cacheEntry{idx: idx, b: b, used: rb.tick}
	if len(rb.blocks) < cacheBlocks {
		rb.blocks = append(rb.blocks, e)
		return b, nil
	}
	lru := 0
	for i := range rb.blocks {
		if rb.blocks[i].used < rb.blocks[lru].used {
			lru = i
		}
	}
	rb.blocks[lru] = e
	return b, nil
}

// OpenReaderAt returns a Reader over the size bytes of an MLDF file that ra reads, such as
// an object in a bucket (objstore.ReaderAt) or a file that is not to be mapped; name is used
// in errors. Nothing is read in proportion to the file: the tables and payloads are read when
// used, through a cache of 8 blocks of 1 MiB, so Verify and Describe scan a file of any size
// in bounded memory. Payloads are copies. When ra is an io.Closer, Close closes it.
//
// Accessors that return no error (Row, Meta, AllocEntry, Describe) report a failed read with
// zero bytes and remember the error: check Err after them.
func OpenReaderAt(name string, ra io.ReaderAt, size int64) (*Reader, error) {
	if size < 0 {
		return nil, fmt.Errorf("%s: %w: negative size %d", name, ErrUnsupported, size)
	}
	closer, _ := ra.(io.Closer)
	src := newRABacking(ra, uint64(size), closer)
	r, err := newReader(name, src, uint64(size))
	if err != nil {
		// The caller keeps ra on failure.
		return nil, err
	}
	return r, nil
}

// Err returns the first read error met by an accessor that returns no error (Row, Meta,
// AllocEntry, AllocTable, Describe) on a Reader over positional reads, or nil. A mapped
// file never has one.
func (r *Reader) Err() error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return r.ioErr
}

// latch records a read error of an accessor that cannot return it.
func (r *Reader) latch(err error) {
	r.errMu.Lock()
	if r.ioErr == nil {
		r.ioErr = err
	}
	r.errMu.Unlock()
}

// table returns n bytes at off of the table starting at ptr: a slice of inPlace when the
// table is held in memory, else a positional read (zero bytes, and the error latched, when
// it fails).
func (r *Reader) table(inPlace []byte, ptr uint64, off, n int, what string) []byte {
	if inPlace != nil || r.src.zeroCopy() {
		end := off + n
		return inPlace[off:end:end]
	}
	b, err := r.src.bytes(ptr+uint64(off), uint64(n))
	if err != nil {
		r.latch(fmt.Errorf("%s: reading the %s at %d: %w", r.name, what, ptr+uint64(off), err))
		return make([]byte, n)
	}
	return b
}
