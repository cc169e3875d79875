package appendfile

import (
	"context"
	"fmt"
	"os"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pagewriter"
)

// sink is where the result goes: a local file renamed over the target, or a multipart
// upload. Writes come in increasing offset order; the bytes between them are zero.
type sink interface {
	// write puts b at off.
	write(b []byte, off int64) error
	// region puts the base's [src, src+n) at dst.
	region(src, dst, n int64) error
	// finish puts the signature and header (the file's first bytes) in place and publishes
	// the result.
	finish(header []byte) error
	abort()
	// copied returns the bytes copied by copy_file_range and by the object store.
	copied() (ranged, server int64)
}

// localSink is a temporary file beside the target (internal/atomicfile).
type localSink struct {
	o      *atomicfile.File
	b      *file
	ranged int64
}

func newLocalSink(b *file, out string, size int64) (*localSink, error) {
	perm := os.FileMode(0o644)
	if fi, err := b.f.Stat(); err == nil {
		perm = fi.Mode().Perm()
	}
	if lp, ok := objstore.TargetOf(out).Path(); ok {
		out = lp
	}
	o, err := atomicfile.Create(out, perm)
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	// Size the file: the gaps stay holes (zero bytes).
	if err := o.Truncate(size); err != nil {
		o.Abort()
		return nil, fmt.Errorf("append: size %s: %w", out, err)
	}
	return &localSink{o: o, b: b}, nil
}

func (s *localSink) write(b []byte, off int64) error {
	if _, err := s.o.WriteAt(b, off); err != nil {
		return fmt.Errorf("append: write %s: %w", s.o.Target(), err)
	}
	return nil
}

func (s *localSink) region(src, dst, n int64) error {
	done, ok, err := pagewriter.CopyFileRange(int(s.b.f.Fd()), src, int(s.o.Fd()), dst, n)
	if err != nil {
		return err
	}
	s.ranged = done
	if !ok {
		return copyRW(context.Background(), s.b.f, s.o.File, src+done, dst+done, n-done)
	}
	return nil
}

func (s *localSink) finish(header []byte) error {
	if err := s.write(header, 0); err != nil {
		return err
	}
	if err := s.o.Commit(); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	return nil
}

func (s *localSink) abort()                         { s.o.Abort() }
func (s *localSink) copied() (ranged, server int64) { return s.ranged, 0 }

// Part sizes of the multipart upload (the stores' limits, as merge uses them).
const (
	objMinPart  = 5 << 20  // every part but the last is at least this
	objBufPart  = 16 << 20 // parts made of bytes are cut at this size
	objMaxCopy  = 4 << 30  // a server-side copy part is at most this
	objInFlight = 4        // parts uploading at once
)

// objectSink builds the result as a multipart upload: part 1 (it holds the header) is kept
// until finish, which patches the header in and uploads it last; the base's data region is
// copied server-side, topped up through the client where a part would be under the minimum.
type objectSink struct {
	outer  context.Context // the append's
	ctx    context.Context // the parts' (canceled by the first failure and by Wait)
	up     *objstore.Upload
	g      *errgroup.Group
	b      *file
	part   int
	buf    []byte
	first  []byte
	off    int64
	server int64
}

func newObjectSink(ctx context.Context, store *objstore.Client, b *file, out string) (*objectSink, error) {
	up, err := store.NewUpload(ctx, out)
	if err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(objInFlight)
	return &objectSink{outer: ctx, ctx: gctx, up: up, g: g, b: b, part: 1, buf: make([]byte, 0, objBufPart)}, nil
}

func (s *objectSink) write(b []byte, off int64) error {
	if off < s.off {
		return fmt.Errorf("append: internal error: bytes at %d, after %d", off, s.off)
	}
	if err := s.zeros(off - s.off); err != nil {
		return err
	}
	for len(b) > 0 {
		k := min(len(b), objBufPart-len(s.buf))
		s.buf = append(s.buf, b[:k]...)
		b, s.off = b[k:], s.off+int64(k)
		if len(s.buf) == objBufPart {
			s.flush()
		}
	}
	return nil
}

func (s *objectSink) zeros(n int64) error {
	var z [64 << 10]byte
	for n > 0 {
		k := min(n, int64(len(z)))
		if err := s.write(z[:k], s.off); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// through appends the base's [src, src+n), read through the client.
func (s *objectSink) through(src, n int64) error {
	buf := make([]byte, min(n, chunk))
	for n > 0 {
		b := buf[:min(n, int64(len(buf)))]
		if _, err := s.b.ra.ReadAt(b, src); err != nil {
			return fmt.Errorf("append: read %s at %d: %w", s.b.path, src, err)
		}
		if err := s.write(b, s.off); err != nil {
			return err
		}
		src, n = src+int64(len(b)), n-int64(len(b))
	}
	return nil
}

func (s *objectSink) flush() {
	if len(s.buf) == 0 {
		return
	}
	b := s.buf
	s.buf = make([]byte, 0, objBufPart)
	n := s.part
	s.part++
	if n == 1 {
		s.first = b
		return
	}
	s.g.Go(func() error { return s.up.UploadPart(s.ctx, n, b) })
}

func (s *objectSink) region(src, dst, n int64) error {
	if err := s.zeros(dst - s.off); err != nil {
		return err
	}
	if len(s.buf) > 0 && len(s.buf) < objMinPart {
		k := min(n, int64(objMinPart-len(s.buf)))
		if err := s.through(src, k); err != nil {
			return err
		}
		src, n = src+k, n-k
	}
	if n < objMinPart {
		return s.through(src, n)
	}
	s.flush()
	pieces := (n + objMaxCopy - 1) / objMaxCopy
	for i := range pieces {
		size := n / pieces
		if i == pieces-1 {
			size = n - size*(pieces-1)
		}
		num, from := s.part, src
		s.part++
		s.g.Go(func() error { return s.up.CopyPart(s.ctx, num, s.b.path, from, size) })
		s.server += size
		src += size
		s.off += size
	}
	return nil
}

func (s *objectSink) finish(header []byte) error {
	s.flush()
	if err := s.g.Wait(); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	copy(s.first, header)
	if err := s.up.UploadPart(s.outer, 1, s.first); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	if err := s.up.Complete(s.outer); err != nil {
		return fmt.Errorf("append: %w", err)
	}
	return nil
}

func (s *objectSink) abort() {
	s.g.Wait()
	actx, cancel := context.WithTimeout(context.WithoutCancel(s.outer), time.Minute)
	s.up.Abort(actx)
	cancel()
}

func (s *objectSink) copied() (ranged, server int64) { return 0, s.server }
