package objstore

import (
	"bytes"
	"context"

	"github.com/mldf/convert/internal/atomicfile"
)

// WriteFile writes data as the whole object raw names; the object appears complete or not
// at all (a local file is written beside and renamed). Transient failures are retried.
func (c *Client) WriteFile(ctx context.Context, raw string, data []byte) error {
	w, err := c.Create(ctx, raw)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// Writer writes one object as a stream; the object appears only at Close (for reports,
// ".done" records, rejects). It buffers up to one part (8 MiB): a smaller object is one
// retried PUT at Close, a larger one a multipart upload whose parts are uploaded, each
// retried, as they fill. A local path is written to a temporary file beside it and renamed
// at Close. A Writer is not safe for concurrent use.
type Writer struct {
	c   *Client
	ctx context.Context
	raw string
	l   Location
	s   store

	f    *atomicfile.File // local: the temporary file
	buf  []byte
	up   *Upload
	part int
	err  error // sticky
	done bool
}

// Create starts writing the object raw names. Nothing appears there before Close; Abort
// (or a failed Close) leaves whatever was there before untouched.
func (c *Client) Create(ctx context.Context, raw string) (*Writer, error) {
	l, s, err := c.parseObject(ctx, "create", raw)
	if err != nil {
		return nil, err
	}
	w := &Writer{c: c, ctx: ctx, raw: raw, l: l, s: s}
	if l.IsLocal() {
		if w.f, err = createTemp(l.Key); err != nil {
			return nil, c.wrap(ctx, "create", raw, err)
		}
	}
	return w, nil
}

// Write implements io.Writer.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.done {
		return 0, newErr("write", w.raw, ErrClosed, "writer closed")
	}
	if w.f != nil {
		n, err := w.f.Write(p)
		if err != nil {
			w.err = w.c.wrap(w.ctx, "write", w.raw, err)
			return n, w.err
		}
		return n, nil
	}
	size := w.c.cfg.writeBufSize
	n := len(p)
	for len(p) > 0 {
		if w.buf == nil {
			w.buf = make([]byte, 0, size)
		}
		k := min(len(p), size-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == size {
			if err := w.flush(); err != nil {
				w.err = err
				return n - len(p), err
			}
		}
	}
	return n, nil
}

// flush uploads the full buffer as the next part.
func (w *Writer) flush() error {
	if w.up == nil {
		up, err := w.c.NewUpload(w.ctx, w.raw)
		if err != nil {
			return err
		}
		w.up = up
	}
	w.part++
	if err := w.up.UploadPart(w.ctx, w.part, w.buf); err != nil {
		return err
	}
	w.buf = w.buf[:0]
	return nil
}

// Close makes the object appear with the bytes written. On failure nothing appears and
// the upload or temporary file is removed.
func (w *Writer) Close() error {
	if w.done {
		return w.err
	}
	if w.err != nil {
		w.Abort()
		return w.err
	}
	w.done = true
	if w.f != nil {
		if err := w.f.Commit(); err != nil {
			w.err = w.c.wrap(w.ctx, "write", w.raw, err)
		}
		return w.err
	}
	if w.up == nil {
		w.err = w.c.do(w.ctx, "write", w.raw, 1, func(at *attempt) error {
			return w.s.put(at.ctx, w.l.Key, &touchReader{bytes.NewReader(w.buf), at.touch}, int64(len(w.buf)))
		})
		w.err = w.c.refine(w.ctx, w.s, w.err)
		return w.err
	}
	if len(w.buf) > 0 {
		w.part++
		w.err = w.up.UploadPart(w.ctx, w.part, w.buf)
	}
	if w.err == nil {
		w.err = w.up.Complete(w.ctx)
	}
	if w.err != nil {
		w.up.Abort(context.WithoutCancel(w.ctx))
	}
	return w.err
}

// Abort discards what was written: nothing appears at the URL.
func (w *Writer) Abort() error {
	if w.done && w.err == nil {
		return nil
	}
	w.done = true
	if w.err == nil {
		w.err = newErr("write", w.raw, ErrClosed, "aborted")
	}
	if w.f != nil {
		w.f.Abort()
		return nil
	}
	if w.up != nil {
		return w.up.Abort(context.WithoutCancel(w.ctx))
	}
	return nil
}
