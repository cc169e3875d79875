package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	mpart "github.com/mldf/convert/pagewriter/multipart"
)

// Upload is a multipart upload to one object. Parts are numbered from 1 to MaxParts; they
// may be uploaded in any order and concurrently; every part but the last must be at least
// MinPartSize bytes. The object appears only at Complete, with the parts' bytes in part
// order; Abort (or a Complete never made) leaves no object.
//
// How each store does it (docs/STORAGE.md): S3 multipart uploads (UploadPart,
// UploadPartCopy); Azure staged blocks committed as a block list; GCS temporary objects
// composed at Complete; local files in a directory beside the target, concatenated and
// renamed at Complete.
type Upload struct {
	c   *Client
	raw string
	l   Location
	s   store
	mp  multipart

	mu    sync.Mutex
	sizes map[int]int64
	state uploadState
}

type uploadState int

const (
	uploadOpen uploadState = iota
	uploadCompleting
	uploadDone
	uploadAborted
)

// maxBufferedCopy bounds a CopyPart that must pass through memory (a source in another
// kind of store than an S3 destination).
const maxBufferedCopy = 64 << 20

// NewUpload starts a multipart upload to the object raw names.
func (c *Client) NewUpload(ctx context.Context, raw string) (*Upload, error) {
	l, s, err := c.parseObject(ctx, "create upload", raw)
	if err != nil {
		return nil, err
	}
	var mp multipart
	if err := c.do(ctx, "create upload", raw, 1, func(at *attempt) error {
		var err error
		mp, err = s.createUpload(at.ctx, l.Key)
		return err
	}); err != nil {
		return nil, c.refine(ctx, s, err)
	}
	return &Upload{c: c, raw: raw, l: l, s: s, mp: mp, sizes: map[int]int64{}}, nil
}

// URL returns the URL of the object the upload creates.
func (u *Upload) URL() string { return u.raw }

// ID returns the store's upload ID (what ListIncomplete shows).
func (u *Upload) ID() string { return u.mp.id() }

func (u *Upload) begin(op string, part int, size int64) error {
	if part < 1 || part > MaxParts {
		return errorf(op, u.raw, ErrPart, "part number %d outside 1..%d", part, MaxParts)
	}
	if size > MaxPartSize {
		return errorf(op, u.raw, ErrPart, "part %d is %d bytes, over the %d limit", part, size, int64(MaxPartSize))
	}
	if size <= 0 {
		return errorf(op, u.raw, ErrPart, "part %d is empty", part)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.state != uploadOpen {
		return errorf(op, u.raw, ErrClosed, "upload already completed or aborted")
	}
	return nil
}

func (u *Upload) record(part int, size int64) {
	u.mu.Lock()
	u.sizes[part] = size
	u.mu.Unlock()
}

// UploadPart uploads data as part number part (1-based), retrying transient failures.
// Parts may arrive in any order and concurrently; uploading a part number again replaces
// it. data is not retained after UploadPart returns.
func (u *Upload) UploadPart(ctx context.Context, part int, data []byte) error {
	op := fmt.Sprintf("upload part %d of", part)
	if err := u.begin(op, part, int64(len(data))); err != nil {
		return err
	}
	if err := u.c.do(ctx, op, u.raw, 1, func(at *attempt) error {
		return u.mp.uploadPart(at.ctx, part, &touchReader{bytes.NewReader(data), at.touch}, int64(len(data)))
	}); err != nil {
		return err
	}
	u.record(part, int64(len(data)))
	return nil
}

// CopyPart makes part number part a copy of size bytes at off of the object src (a URL),
// server-side where the store offers it: S3 UploadPartCopy (from any S3 bucket of the
// client), Azure Put Block From URL (when the credentials can sign a read URL for the
// source), a local copy_file_range. GCS has no ranged server-side copy: the range passes
// through this client (a whole-object copy is done server-side). A source in another kind
// of store also passes through the client, streamed (local, GCS) or, for S3 and Azure
// destinations, buffered up to 64 MiB. The source must not change meanwhile (its ETag is
// checked).
func (u *Upload) CopyPart(ctx context.Context, part int, src string, off, size int64) error {
	op := fmt.Sprintf("copy part %d of", part)
	if err := u.begin(op, part, size); err != nil {
		return err
	}
	sl, ss, err := u.c.parseObject(ctx, op, src)
	if err != nil {
		return err
	}
	sa, err := u.c.stat(ctx, op, src, sl, ss)
	if err != nil {
		return err
	}
	if off < 0 || off+size > sa.Size {
		return errorf(op, u.raw, ErrPart, "range [%d, %d) outside %s (%d bytes)", off, off+size, src, sa.Size)
	}
	err = u.c.do(ctx, op, u.raw, 10, func(at *attempt) error {
		return u.mp.copyPart(at.ctx, part, sl, ss, sa, off, size)
	})
	if errors.Is(err, errNoServerCopy) {
		err = u.copyThrough(ctx, op, part, src, sl, ss, sa, off, size)
	}
	if err != nil {
		return err
	}
	u.record(part, size)
	return nil
}

// copyThrough copies a range through the client: streamed into stores whose parts are
// written as streams, buffered (bounded) for the others.
func (u *Upload) copyThrough(ctx context.Context, op string, part int, src string, sl Location, ss store, sa Attrs, off, size int64) error {
	if sm, ok := u.mp.(streamingPart); ok {
		return u.c.do(ctx, op, u.raw, 10, func(at *attempt) error {
			sec := &rangeStream{ctx: at.ctx, c: u.c, raw: src, s: ss, key: sl.Key, a: sa, off: off, end: off + size, touch: at.touch}
			return sm.streamPart(at.ctx, part, sec, size)
		})
	}
	if size > maxBufferedCopy {
		return errorf(op, u.raw, ErrUnsupported, "no server-side copy from %s here, and %d bytes is over the %d that may pass through memory", src, size, maxBufferedCopy)
	}
	buf := make([]byte, size)
	if err := u.c.readRange(ctx, src, ss, sl.Key, sa, off, buf); err != nil {
		return err
	}
	return u.c.do(ctx, op, u.raw, 1, func(at *attempt) error {
		return u.mp.uploadPart(at.ctx, part, &touchReader{bytes.NewReader(buf), at.touch}, size)
	})
}

// streamingPart is a multipart upload whose parts can be written from a stream (each
// block of which the client has already retried).
type streamingPart interface {
	streamPart(ctx context.Context, n int, r io.Reader, size int64) error
}

// rangeStream reads [off, end) of an object in client-sized blocks, each retried and
// resumed.
type rangeStream struct {
	ctx      context.Context
	c        *Client
	raw, key string
	s        store
	a        Attrs
	off, end int64
	buf      []byte
	pos      int
	touch    func()
}

func (r *rangeStream) Read(p []byte) (int, error) {
	if r.pos == len(r.buf) {
		if r.off >= r.end {
			return 0, io.EOF
		}
		n := int(min(int64(r.c.cfg.blockSize), r.end-r.off))
		if cap(r.buf) < n {
			r.buf = make([]byte, n)
		}
		r.buf, r.pos = r.buf[:n], 0
		if err := r.c.readRange(r.ctx, r.raw, r.s, r.key, r.a, r.off, r.buf); err != nil {
			return 0, err
		}
		r.off += int64(n)
	}
	n := copy(p, r.buf[r.pos:])
	r.pos += n
	r.touch()
	return n, nil
}

// Complete assembles the parts into the object, which appears now. Parts must be numbered
// 1..N with no gap and every part but the last at least MinPartSize. An upload with no
// part creates an empty object. After a failed Complete, call Abort.
func (u *Upload) Complete(ctx context.Context) error {
	const op = "complete upload"
	u.mu.Lock()
	if u.state != uploadOpen {
		u.mu.Unlock()
		return errorf(op, u.raw, ErrClosed, "upload already completed or aborted")
	}
	n := len(u.sizes)
	sizes := make([]int64, n)
	var total int64
	for i := range n {
		s, ok := u.sizes[i+1]
		if !ok {
			u.mu.Unlock()
			return errorf(op, u.raw, ErrPart, "part %d is missing (%d parts uploaded)", i+1, n)
		}
		if s < MinPartSize && i+1 < n {
			u.mu.Unlock()
			return errorf(op, u.raw, ErrPart, "part %d is %d bytes; every part but the last must be at least %d", i+1, s, MinPartSize)
		}
		sizes[i], total = s, total+s
	}
	u.state = uploadCompleting
	u.mu.Unlock()

	var err error
	if n == 0 {
		// No store assembles zero parts: drop the upload and write an empty object.
		if err = u.c.do(ctx, op, u.raw, 1, func(at *attempt) error { return ignoreNotFound(u.mp.abort(at.ctx)) }); err == nil {
			err = u.c.do(ctx, op, u.raw, 1, func(at *attempt) error { return u.s.put(at.ctx, u.l.Key, bytes.NewReader(nil), 0) })
		}
	} else {
		tries := 0
		err = u.c.do(ctx, op, u.raw, 10, func(at *attempt) error {
			tries++
			err := u.mp.complete(at.ctx, sizes)
			if err != nil && tries > 1 && classify(err).kind == ErrNotFound {
				// An earlier attempt's answer was lost, and it may have succeeded.
				if ok, cerr := u.mp.completed(at.ctx, total); cerr == nil && ok {
					return nil
				}
			}
			return err
		})
	}
	u.mu.Lock()
	if err != nil {
		u.state = uploadOpen // Abort may follow
	} else {
		u.state = uploadDone
	}
	u.mu.Unlock()
	return err
}

// Abort abandons the upload: its parts are deleted and no object appears. Abort after a
// successful Complete does nothing (so it can be deferred); aborting twice is harmless.
func (u *Upload) Abort(ctx context.Context) error {
	u.mu.Lock()
	if u.state == uploadDone || u.state == uploadAborted {
		u.mu.Unlock()
		return nil
	}
	u.state = uploadAborted
	u.mu.Unlock()
	return u.c.do(ctx, "abort upload", u.raw, 1, func(at *attempt) error { return ignoreNotFound(u.mp.abort(at.ctx)) })
}

// ListIncomplete lists the multipart uploads under prefix (a URL or local path prefix)
// that were started and neither completed nor aborted: those of runs that were killed.
func (c *Client) ListIncomplete(ctx context.Context, prefix string) ([]Incomplete, error) {
	l, s, err := c.parse(ctx, "list incomplete uploads", prefix)
	if err != nil {
		return nil, err
	}
	var out []Incomplete
	if err := c.do(ctx, "list incomplete uploads", prefix, 1, func(at *attempt) error {
		var err error
		out, err = s.listIncomplete(at.ctx, l.Key)
		return err
	}); err != nil {
		return nil, c.refine(ctx, s, err)
	}
	for i := range out {
		out[i].URL = l.WithKey(out[i].URL).String()
	}
	return out, nil
}

// AbortIncomplete aborts every incomplete multipart upload to exactly the object raw names
// (run it before starting a new upload there, or from a cleanup command) and returns how
// many it aborted. Uploads started less than olderThan ago are left alone (0: abort all),
// so that a run does not abort another's upload in progress.
func (c *Client) AbortIncomplete(ctx context.Context, raw string, olderThan time.Duration) (int, error) {
	const op = "abort incomplete uploads"
	l, s, err := c.parseObject(ctx, op, raw)
	if err != nil {
		return 0, err
	}
	var all []Incomplete
	if err := c.do(ctx, op, raw, 1, func(at *attempt) error {
		var err error
		all, err = s.listIncomplete(at.ctx, l.Key)
		return err
	}); err != nil {
		return 0, c.refine(ctx, s, err)
	}
	n := 0
	for _, inc := range all {
		if inc.URL != l.Key || olderThan > 0 && !inc.Initiated.IsZero() && time.Since(inc.Initiated) < olderThan {
			continue
		}
		if err := c.do(ctx, op, raw, 1, func(at *attempt) error {
			return ignoreNotFound(s.abortIncomplete(at.ctx, inc.URL, inc.ID))
		}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// ResumeUpload reattaches to the incomplete multipart upload id (Upload.ID, stored by a
// process that was killed) to the object raw names, and returns it with the parts the store
// holds, in part order (S3 ListParts; Azure: the blob's uncommitted blocks of that upload;
// GCS and local: its temporary part objects or files). The Upload goes on as one from
// NewUpload: parts may be uploaded, uploading a part number again replaces it, and Complete
// assembles parts 1..N of the listed and the new ones. A part listed but not wanted (one
// uploaded after the caller's last checkpoint) is dropped with Forget or uploaded again.
// ErrNotFound: the store has no such upload (completed, aborted or expired).
func (c *Client) ResumeUpload(ctx context.Context, raw, id string) (*Upload, []mpart.Part, error) {
	const op = "resume upload"
	l, s, err := c.parseObject(ctx, op, raw)
	if err != nil {
		return nil, nil, err
	}
	var mp multipart
	var parts []mpart.Part
	if err := c.do(ctx, op, raw, 1, func(at *attempt) error {
		var err error
		mp, parts, err = s.resumeUpload(at.ctx, l.Key, id)
		return err
	}); err != nil {
		return nil, nil, c.refine(ctx, s, err)
	}
	slices.SortFunc(parts, func(a, b mpart.Part) int { return a.Number - b.Number })
	u := &Upload{c: c, raw: raw, l: l, s: s, mp: mp, sizes: map[int]int64{}}
	for _, p := range parts {
		if p.Number < 1 || p.Number > MaxParts {
			return nil, nil, errorf(op, raw, ErrBadReply, "the store lists part %d, outside 1..%d", p.Number, MaxParts)
		}
		u.sizes[p.Number] = p.Size
	}
	return u, parts, nil
}

// Forget drops the parts numbered above n from what Complete assembles (multipart.Forgetter):
// the parts a resumed upload lists beyond the caller's checkpoint. Call it before uploading
// parts again.
func (u *Upload) Forget(n int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for k := range u.sizes {
		if k > n {
			delete(u.sizes, k)
		}
	}
}
