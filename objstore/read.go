package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/internal/inputfile"
)

// readRange fills buf from the object's bytes at off, with ranged GETs. When a body dies
// mid-stream the next attempt asks only for the bytes not yet delivered; every attempt
// requires the version in a (ETag or generation), so a changed object fails with
// ErrChanged instead of splicing two versions.
func (c *Client) readRange(ctx context.Context, raw string, s store, key string, a Attrs, off int64, buf []byte) error {
	got := 0
	return c.do(ctx, "read", raw, 1, func(at *attempt) error {
		if got == len(buf) {
			return nil
		}
		rc, err := s.openRange(at.ctx, key, a, off+int64(got), int64(len(buf)-got))
		if err != nil {
			return err
		}
		defer rc.Close()
		for got < len(buf) {
			n, err := rc.Read(buf[got:])
			got += n
			if n > 0 {
				at.touch()
			}
			if err == io.EOF {
				if got < len(buf) {
					return io.ErrUnexpectedEOF
				}
				break
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// ReaderAt reads an object at any offset: each ReadAt is one ranged GET (retried, resumed),
// for Parquet footers and indexed tar members. For a local path it is the file itself. It
// is safe for concurrent use.
type ReaderAt struct {
	c   *Client
	ctx context.Context
	raw string
	s   store
	l   Location
	a   Attrs
	f   *os.File // local paths
}

// OpenReaderAt stats the object and returns a ReaderAt over the version it found: a
// later read of a changed object fails with ErrChanged. ReadAt uses ctx (io.ReaderAt takes
// none); cancel it or Close to stop.
func (c *Client) OpenReaderAt(ctx context.Context, raw string) (*ReaderAt, error) {
	l, s, err := c.parseObject(ctx, "open", raw)
	if err != nil {
		return nil, err
	}
	if l.IsLocal() {
		// Checked before opening: opening a FIFO would block until a writer comes.
		if fi, err := os.Stat(l.Key); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
			return nil, newErr("open", raw, ErrBadURL, inputfile.Kind(fi.Mode())+", not a regular file (random access needs one)")
		}
		f, a, err := openLocal(ctx, c, raw, l)
		if err != nil {
			return nil, err
		}
		if !a.regular {
			f.Close()
			return nil, newErr("open", raw, ErrBadURL, "not a regular file (random access needs one)")
		}
		return &ReaderAt{c: c, ctx: ctx, raw: raw, l: l, a: a.Attrs, f: f}, nil
	}
	a, err := c.stat(ctx, "open", raw, l, s)
	if err != nil {
		return nil, err
	}
	return &ReaderAt{c: c, ctx: ctx, raw: raw, s: s, l: l, a: a}, nil
}

// ReadAt implements io.ReaderAt.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if r.f != nil {
		return r.f.ReadAt(p, off)
	}
	if off < 0 {
		return 0, newErr("read", r.raw, ErrBadURL, "negative offset")
	}
	if off >= r.a.Size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), r.a.Size-off))
	if err := r.c.readRange(r.ctx, r.raw, r.s, r.l.Key, r.a, off, p[:n]); err != nil {
		return 0, err
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Size returns the object's size.
func (r *ReaderAt) Size() int64 { return r.a.Size }

// Attrs returns the attributes found at open.
func (r *ReaderAt) Attrs() Attrs { return r.a }

// Close releases the reader (closes the local file).
func (r *ReaderAt) Close() error {
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}

type localAttrs struct {
	Attrs
	regular bool
}

func openLocal(ctx context.Context, c *Client, raw string, l Location) (*os.File, localAttrs, error) {
	f, err := os.Open(l.Key)
	if err != nil {
		return nil, localAttrs{}, c.wrap(ctx, "open", raw, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, localAttrs{}, c.wrap(ctx, "open", raw, err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, localAttrs{}, newErr("open", raw, ErrBadURL, "is a directory")
	}
	return f, localAttrs{Attrs{URL: raw, Size: fi.Size(), ModTime: fi.ModTime()}, fi.Mode().IsRegular()}, nil
}

// Reader streams an object from start to end: it fetches blocks of the client's block size
// with ranged GETs, readahead of them concurrently ahead of the one being read, so it holds
// at most (readahead+1) blocks. Each block is retried and resumed on its own. For a local
// path it reads the file directly (the kernel reads ahead), which may also be a pipe.
//
// A Reader is not safe for concurrent use. Close stops its fetches and waits for them.
type Reader struct {
	c    *Client
	raw  string
	s    store
	key  string
	a    Attrs
	f    *os.File
	lr   io.ReadCloser // a local stream opened by a Prefetcher (a file or a named pipe)
	ctx  context.Context
	stop context.CancelFunc
	g    errgroup.Group

	next    int64    // offset of the next block to schedule
	pending []*block // scheduled, in order; pending[0] is the one being read
	pos     int      // read position in pending[0]
	free    [][]byte // buffers to reuse
	err     error    // sticky
	once    sync.Once
}

type block struct {
	buf  []byte
	err  error
	done chan struct{}
}

// Open stats the object and starts fetching its first blocks. The fetches run under ctx
// until Close.
func (c *Client) Open(ctx context.Context, raw string) (*Reader, error) {
	return c.open(ctx, ctx, raw)
}

// open stats under octx; the reader's fetches run under a context derived from rctx.
func (c *Client) open(octx, rctx context.Context, raw string) (*Reader, error) {
	l, s, err := c.parseObject(octx, "open", raw)
	if err != nil {
		return nil, err
	}
	r := &Reader{c: c, raw: raw, s: s, key: l.Key}
	if l.IsLocal() {
		f, a, err := openLocal(octx, c, raw, l)
		if err != nil {
			return nil, err
		}
		r.f, r.a = f, a.Attrs
		return r, nil
	}
	if r.a, err = c.stat(octx, "open", raw, l, s); err != nil {
		return nil, err
	}
	r.ctx, r.stop = context.WithCancel(rctx)
	r.schedule()
	return r, nil
}

// schedule starts fetches until readahead+1 blocks are scheduled or the object is covered.
func (r *Reader) schedule() {
	for len(r.pending) < r.c.cfg.readahead+1 && r.next < r.a.Size {
		n := int(min(int64(r.c.cfg.blockSize), r.a.Size-r.next))
		var buf []byte
		if k := len(r.free); k > 0 && cap(r.free[k-1]) >= n {
			buf, r.free = r.free[k-1][:n], r.free[:k-1]
		} else {
			buf = make([]byte, n)
		}
		b := &block{buf: buf, done: make(chan struct{})}
		off := r.next
		r.next += int64(n)
		r.pending = append(r.pending, b)
		r.g.Go(func() error {
			defer close(b.done)
			b.err = r.c.readRange(r.ctx, r.raw, r.s, r.key, r.a, off, b.buf)
			return nil
		})
	}
}

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	if r.f != nil {
		return r.f.Read(p)
	}
	if r.lr != nil {
		return r.lr.Read(p)
	}
	if r.err != nil {
		return 0, r.err
	}
	for {
		if len(r.pending) == 0 {
			return 0, io.EOF
		}
		b := r.pending[0]
		select {
		case <-b.done:
		case <-r.ctx.Done():
			r.err = r.c.wrap(r.ctx, "read", r.raw, context.Cause(r.ctx))
			return 0, r.err
		}
		if b.err != nil {
			r.err = b.err
			return 0, r.err
		}
		if r.pos < len(b.buf) {
			n := copy(p, b.buf[r.pos:])
			r.pos += n
			return n, nil
		}
		r.free = append(r.free, b.buf)
		r.pending, r.pos = r.pending[1:], 0
		r.schedule()
	}
}

// Size returns the object's size.
func (r *Reader) Size() int64 { return r.a.Size }

// Attrs returns the attributes found at open.
func (r *Reader) Attrs() Attrs { return r.a }

// URL returns the URL the reader was opened with.
func (r *Reader) URL() string { return r.raw }

// Close stops the fetches in flight, waits for them and releases the buffers. Reading
// after Close fails with ErrClosed.
func (r *Reader) Close() error {
	var err error
	r.once.Do(func() {
		if r.f != nil {
			err = r.f.Close()
			return
		}
		if r.lr != nil {
			err = r.lr.Close()
			return
		}
		r.stop()
		r.g.Wait()
		r.pending, r.free = nil, nil
		r.err = newErr("read", r.raw, ErrClosed, "reader closed")
	})
	return err
}

// File returns the local file the Reader streams when it is a regular file, or nil (an
// object in a bucket, a named pipe): a capability of the opened object, for a caller that can
// use the file directly as an optimisation (a memory map, positional reads, which do not move
// the stream). The Reader keeps ownership: Close closes it.
func (r *Reader) File() *os.File {
	f := r.f
	if r.lr != nil {
		f, _ = r.lr.(*os.File)
	}
	if f == nil {
		return nil
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	return f
}

// File returns the local file a ReaderAt reads, or nil for an object in a bucket: a
// capability of the opened object, for a caller that can use a file directly as an
// optimisation (copy_file_range, a memory map). The ReaderAt keeps ownership: Close closes
// it.
func (r *ReaderAt) File() *os.File { return r.f }

// ReadFile reads the whole object raw names, which must be at most max bytes (a completion
// record, a report): a larger one is an ErrTooLarge naming its size. A local path must be a
// regular file: a named pipe is refused, never waited on.
func (c *Client) ReadFile(ctx context.Context, raw string, max int64) ([]byte, error) {
	r, err := c.OpenReaderAt(ctx, raw)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.Size() > max {
		return nil, newErr("read", raw, ErrTooLarge, fmt.Sprintf("%d bytes, more than the %d expected", r.Size(), max))
	}
	b := make([]byte, r.Size())
	if _, err := r.ReadAt(b, 0); err != nil && !(errors.Is(err, io.EOF) && len(b) == 0) {
		return nil, c.wrap(ctx, "read", raw, err)
	}
	return b, nil
}
