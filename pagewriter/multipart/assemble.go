package multipart

import (
	"context"
	"errors"
	"fmt"
	"io"

	"golang.org/x/sync/errgroup"
)

// Copier is a started multipart upload that can also make a part a copy of a byte range of
// another object, server-side where the store offers it (objstore.Upload: S3 UploadPartCopy,
// Azure Put Block From URL).
type Copier interface {
	Uploader
	// CopyPart makes part (1-based) the size bytes at off of the object src.
	CopyPart(ctx context.Context, part int, src string, off, size int64) error
}

// Assembler sizes (S3's rules, the strictest of the stores: every part but the last at
// least 5 MiB, at most 5 GiB).
const (
	DefaultCopyPart = 4 << 30 // a server-side copy part is at most this
	DefaultInFlight = 4       // parts uploaded or copied at once
	assembleRead    = 1 << 20 // the buffer of ranges read through the client
)

// ErrAssemble reports a misuse of an Assembler (bytes written out of order, Complete
// before the first part exists).
var ErrAssemble = errors.New("multipart: assembler misuse")

// Assembler builds one object as a multipart upload from bytes and ranges of other objects,
// in output order: a merge's or an append's output in a bucket. Bytes are cut into parts of
// DefaultPartSize; a range copied with Copy becomes server-side copy parts of at most
// DefaultCopyPart, except what must join the pending bytes so that every part but the last
// is at least DefaultMinPartSize (those bytes are read through the source's io.ReaderAt).
// Part 1, which holds the object's first bytes (a header), is kept until Complete, which
// patches it and uploads it last: nothing appears before, and an upload that fails or is
// aborted leaves no object. The part layout depends only on the sequence of calls, so the
// same calls make the same parts and the same bytes.
type Assembler struct {
	outer  context.Context // the caller's: part 1, Complete, Abort
	ctx    context.Context // the parts': canceled by the first failure
	u      Copier
	g      *errgroup.Group
	part   int    // the next part number
	buf    []byte // pending bytes, not yet a part
	first  []byte // part 1
	off    int64  // output offset of the next byte
	read   []byte // buffer of ranges read through the client
	server int64  // bytes copied server-side
	parts  []int64
	done   bool
}

// NewAssembler returns an assembler writing through u, an upload already started. ctx
// bounds every part; when it ends, the parts in flight fail and Wait reports it.
func NewAssembler(ctx context.Context, u Copier) *Assembler {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(DefaultInFlight)
	return &Assembler{outer: ctx, ctx: gctx, u: u, g: g, part: 1, buf: make([]byte, 0, DefaultPartSize)}
}

// Offset returns the output offset of the next byte.
func (a *Assembler) Offset() int64 { return a.off }

// ServerCopied returns the bytes copied server-side so far (CopyPart).
func (a *Assembler) ServerCopied() int64 { return a.server }

// PartSizes returns the sizes of the parts made so far (part 1 first), the pending bytes
// not included.
func (a *Assembler) PartSizes() []int64 { return append([]int64(nil), a.parts...) }

// WriteAt appends p at off, which is at or after Offset: the bytes between are zero. It
// implements io.WriterAt for a writer whose writes come in increasing offset order.
func (a *Assembler) WriteAt(p []byte, off int64) (int, error) {
	if off < a.off {
		return 0, fmt.Errorf("%w: bytes at %d, after %d", ErrAssemble, off, a.off)
	}
	if err := a.Zeros(off - a.off); err != nil {
		return 0, err
	}
	a.bytes(p)
	return len(p), nil
}

func (a *Assembler) bytes(b []byte) {
	for len(b) > 0 {
		k := min(len(b), DefaultPartSize-len(a.buf))
		a.buf = append(a.buf, b[:k]...)
		b, a.off = b[k:], a.off+int64(k)
		if len(a.buf) == DefaultPartSize {
			a.flush()
		}
	}
}

// Zeros appends n zero bytes.
func (a *Assembler) Zeros(n int64) error {
	if n < 0 {
		return fmt.Errorf("%w: %d zero bytes", ErrAssemble, n)
	}
	var z [64 << 10]byte
	for n > 0 {
		k := min(n, int64(len(z)))
		a.bytes(z[:k])
		n -= k
	}
	return nil
}

// Through appends [off, off+n) of r (name is for messages), read through r.
func (a *Assembler) Through(r io.ReaderAt, name string, off, n int64) error {
	if a.read == nil {
		a.read = make([]byte, assembleRead)
	}
	for n > 0 {
		b := a.read[:min(n, int64(len(a.read)))]
		if _, err := r.ReadAt(b, off); err != nil {
			return fmt.Errorf("read %s at %d: %w", name, off, err)
		}
		a.bytes(b)
		off, n = off+int64(len(b)), n-int64(len(b))
	}
	return nil
}

// Copy appends [off, off+n) of the object src (r reads the same bytes): copied server-side
// in parts of DefaultMinPartSize to DefaultCopyPart bytes, except what must join the
// pending bytes so that every part but the last is at least DefaultMinPartSize, which is
// read through r.
func (a *Assembler) Copy(r io.ReaderAt, src string, off, n int64) error {
	if len(a.buf) > 0 && len(a.buf) < DefaultMinPartSize {
		k := min(n, int64(DefaultMinPartSize-len(a.buf)))
		if err := a.Through(r, src, off, k); err != nil {
			return err
		}
		off, n = off+k, n-k
	}
	if n < DefaultMinPartSize {
		return a.Through(r, src, off, n)
	}
	a.flush()
	pieces := (n + DefaultCopyPart - 1) / DefaultCopyPart
	for i := range pieces {
		size := n / pieces
		if i == pieces-1 {
			size = n - size*(pieces-1)
		}
		num, from := a.part, off
		a.part++
		a.parts = append(a.parts, size)
		a.g.Go(func() error { return a.u.CopyPart(a.ctx, num, src, from, size) })
		a.server += size
		off += size
		a.off += size
	}
	return nil
}

// flush makes the pending bytes the next part: part 1 is kept, others are uploaded.
func (a *Assembler) flush() {
	if len(a.buf) == 0 {
		return
	}
	b := a.buf
	a.buf = make([]byte, 0, DefaultPartSize)
	n := a.part
	a.part++
	a.parts = append(a.parts, int64(len(b)))
	if n == 1 {
		a.first = b
		return
	}
	a.g.Go(func() error { return a.u.UploadPart(a.ctx, n, b) })
}

// Wait makes the pending bytes the last part and waits for every part but part 1: it
// returns the first failure. Write nothing after it but Complete.
func (a *Assembler) Wait() error {
	a.flush()
	return a.g.Wait()
}

// Complete lets patch change part 1 (the object's first bytes, at most DefaultPartSize:
// the header to fill in now that the rest is known; nil: no change), uploads it and
// completes the upload: the object appears. Call it after a successful Wait. After a
// failure, call Abort.
func (a *Assembler) Complete(patch func(first []byte)) error {
	if a.first == nil || a.done {
		return fmt.Errorf("%w: complete without part 1, or twice", ErrAssemble)
	}
	if patch != nil {
		patch(a.first)
	}
	if err := a.u.UploadPart(a.outer, 1, a.first); err != nil {
		return err
	}
	if err := a.u.Complete(a.outer); err != nil {
		return err
	}
	a.done = true
	return nil
}

// Abort waits for the parts in flight and aborts the upload (within DefaultAbortTimeout,
// even when the caller's context has ended). It does nothing after Complete.
func (a *Assembler) Abort() error {
	a.g.Wait()
	if a.done {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(a.outer), DefaultAbortTimeout)
	defer cancel()
	return a.u.Abort(ctx)
}
