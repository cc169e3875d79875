package objstore

import (
	"context"
	"fmt"
	"io"
	"strings"

	"gocloud.dev/blob"

	"github.com/mldf/convert/internal/quote"
	mpart "github.com/mldf/convert/pagewriter/multipart"
)

// cloudStore is a bucket reached through gocloud.dev/blob; native holds what gocloud does
// not offer (conditional reads, multipart uploads), through each driver's own client.
//
// Every method is a boundary with the storage libraries, which parse the servers' replies:
// a panic inside them (gocloud's s3blob dereferences a listing entry's LastModified, which a
// broken server or proxy may leave out) becomes an error of kind ErrBadReply through guard.
// Our own code runs outside guard, so its bugs still crash loudly.
type cloudStore struct {
	b      *blob.Bucket
	native native
}

// native is the part of a cloud store written against its own SDK.
type native interface {
	// readIf makes a ranged read fail when the object is no longer a (its ETag or
	// generation), through gocloud's BeforeRead hook.
	readIf(a Attrs) func(as func(any) bool) error
	// checkRead compares the version the read returned with a.
	checkRead(r *blob.Reader, a Attrs) error
	// version fills in what stat cannot get from gocloud's Attributes (GCS generation).
	version(ba *blob.Attributes, a *Attrs)
	createUpload(ctx context.Context, key string) (multipart, error)
	listIncomplete(ctx context.Context, prefix string) ([]Incomplete, error)
	abortIncomplete(ctx context.Context, key, id string) error
	resumeUpload(ctx context.Context, key, id string) (multipart, []mpart.Part, error)
}

// sizer is a native client that can tell a reply without an object size from a size of 0
// (gocloud reports both as 0).
type sizer interface {
	// statSized reports whether a stat reply carried the object's size (Content-Length).
	statSized(ba *blob.Attributes) bool
	// rangeSize returns the object's size from the reply of a ranged read (Content-Range, or
	// Content-Length of a reply that ignored the range), or false when the reply does not say.
	rangeSize(r *blob.Reader) (int64, bool)
	// listedSized reports whether a listing entry carried the object's size.
	listedSized(o *blob.ListObject) bool
}

// guard runs fn, a call into a storage library that parses a server's reply, and turns a
// panic inside it into an error of kind ErrBadReply (not retried: a server that sends such a
// reply is likely to send it again).
func guard(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &kindError{ErrBadReply, "the storage library failed on the server's reply: " + quote.S(fmt.Sprint(r))}
		}
	}()
	return fn()
}

// guarded is guard for a call that returns a value.
func guarded[T any](fn func() (T, error)) (v T, err error) {
	err = guard(func() error {
		var err error
		v, err = fn()
		return err
	})
	return v, err
}

// errNoSize is a reply that does not say how large an object is: the object must not be
// taken as empty.
func errNoSize(what string) error {
	return &kindError{ErrBadReply, "the server gave no size for the object (" + what + ")"}
}

func (s *cloudStore) close() error { return guard(s.b.Close) }

func (s *cloudStore) bucketExists(ctx context.Context) (bool, error) {
	return guarded(func() (bool, error) { return s.b.IsAccessible(ctx) })
}

func (s *cloudStore) stat(ctx context.Context, key string) (Attrs, error) {
	ba, err := guarded(func() (*blob.Attributes, error) { return s.b.Attributes(ctx, key) })
	if err != nil {
		return Attrs{}, err
	}
	a := Attrs{Size: ba.Size, ETag: ba.ETag, ModTime: ba.ModTime}
	s.native.version(ba, &a)
	if sz, ok := s.native.(sizer); ok && !sz.statSized(ba) {
		// Some proxies answer a HEAD without Content-Length: ask for the first byte, whose
		// reply says the object's size in its Content-Range.
		if a.Size, err = s.sizeByRange(ctx, key, a, sz); err != nil {
			return Attrs{}, err
		}
	}
	return a, nil
}

// sizeByRange learns an object's size from a ranged read of its first byte (of version a).
func (s *cloudStore) sizeByRange(ctx context.Context, key string, a Attrs, sz sizer) (int64, error) {
	r, err := s.openRange(ctx, key, a, 0, 1)
	if err != nil {
		if status(err) == 416 { // no first byte: the object is empty
			return 0, nil
		}
		return 0, err
	}
	defer r.Close()
	n, ok := sz.rangeSize(r.(*blob.Reader))
	if !ok {
		return 0, errNoSize("no Content-Length in the HEAD reply, no Content-Range in a ranged GET")
	}
	return n, nil
}

// list reads the listing a page at a time, retrying each page from its token.
func (s *cloudStore) list(ctx context.Context, prefix string, retry retrier, fn func(Attrs) error) error {
	opts := &blob.ListOptions{Prefix: prefix}
	token := blob.FirstPageToken
	sz, _ := s.native.(sizer)
	for {
		var page []*blob.ListObject
		var next []byte
		if err := retry(func(a *attempt) error {
			return guard(func() error {
				var err error
				page, next, err = s.b.ListPage(a.ctx, token, 1000, opts)
				return err
			})
		}); err != nil {
			return err
		}
		for _, o := range page {
			if o.IsDir || strings.HasSuffix(o.Key, "/") { // "directory" marker objects
				continue
			}
			if sz != nil && !sz.listedSized(o) {
				return errNoSize("no <Size> for " + quote.Q(o.Key) + " in a listing")
			}
			if err := fn(Attrs{URL: o.Key, Size: o.Size, ModTime: o.ModTime}); err != nil {
				return err
			}
		}
		if len(next) == 0 {
			return nil
		}
		token = next
	}
}

func (s *cloudStore) openRange(ctx context.Context, key string, a Attrs, off, n int64) (io.ReadCloser, error) {
	var opts *blob.ReaderOptions
	if a.ETag != "" || a.gen != 0 {
		opts = &blob.ReaderOptions{BeforeRead: s.native.readIf(a)}
	}
	r, err := guarded(func() (*blob.Reader, error) { return s.b.NewRangeReader(ctx, key, off, n, opts) })
	if err != nil {
		return nil, err
	}
	if err := guard(func() error { return s.native.checkRead(r, a) }); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (s *cloudStore) put(ctx context.Context, key string, r io.Reader, _ int64) error {
	// Cancelling the writer's context before Close aborts the write: no object appears.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := guarded(func() (*blob.Writer, error) {
		return s.b.NewWriter(wctx, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	})
	if err != nil {
		return err
	}
	if err := guard(func() error { _, err := io.Copy(w, r); return err }); err != nil {
		cancel()
		w.Close()
		return err
	}
	return guard(w.Close)
}

func (s *cloudStore) remove(ctx context.Context, key string) error {
	return guard(func() error { return s.b.Delete(ctx, key) })
}

func (s *cloudStore) createUpload(ctx context.Context, key string) (multipart, error) {
	mp, err := guarded(func() (multipart, error) { return s.native.createUpload(ctx, key) })
	if err != nil {
		return nil, err
	}
	if _, ok := mp.(streamingPart); ok {
		return guardedStreamingUpload{guardedUpload{mp}}, nil
	}
	return guardedUpload{mp}, nil
}

func (s *cloudStore) listIncomplete(ctx context.Context, prefix string) ([]Incomplete, error) {
	return guarded(func() ([]Incomplete, error) { return s.native.listIncomplete(ctx, prefix) })
}

func (s *cloudStore) abortIncomplete(ctx context.Context, key, id string) error {
	return guard(func() error { return s.native.abortIncomplete(ctx, key, id) })
}

func (s *cloudStore) resumeUpload(ctx context.Context, key, id string) (multipart, []mpart.Part, error) {
	var parts []mpart.Part
	mp, err := guarded(func() (multipart, error) {
		mp, ps, err := s.native.resumeUpload(ctx, key, id)
		parts = ps
		return mp, err
	})
	if err != nil {
		return nil, nil, err
	}
	if _, ok := mp.(streamingPart); ok {
		return guardedStreamingUpload{guardedUpload{mp}}, parts, nil
	}
	return guardedUpload{mp}, parts, nil
}

// guardedUpload runs a cloud store's multipart calls under guard.
type guardedUpload struct{ mp multipart }

func (u guardedUpload) id() string { return u.mp.id() }

func (u guardedUpload) uploadPart(ctx context.Context, n int, body io.ReadSeeker, size int64) error {
	return guard(func() error { return u.mp.uploadPart(ctx, n, body, size) })
}

func (u guardedUpload) copyPart(ctx context.Context, n int, src Location, ss store, sa Attrs, off, size int64) error {
	return guard(func() error { return u.mp.copyPart(ctx, n, src, ss, sa, off, size) })
}

func (u guardedUpload) complete(ctx context.Context, sizes []int64) error {
	return guard(func() error { return u.mp.complete(ctx, sizes) })
}

func (u guardedUpload) completed(ctx context.Context, total int64) (bool, error) {
	return guarded(func() (bool, error) { return u.mp.completed(ctx, total) })
}

func (u guardedUpload) abort(ctx context.Context) error {
	return guard(func() error { return u.mp.abort(ctx) })
}

// guardedStreamingUpload is guardedUpload for an upload whose parts can be streamed.
type guardedStreamingUpload struct{ guardedUpload }

func (u guardedStreamingUpload) streamPart(ctx context.Context, n int, r io.Reader, size int64) error {
	return guard(func() error { return u.mp.(streamingPart).streamPart(ctx, n, r, size) })
}
