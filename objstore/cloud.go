package objstore

import (
	"context"
	"io"
	"strings"

	"gocloud.dev/blob"
)

// cloudStore is a bucket reached through gocloud.dev/blob; native holds what gocloud does
// not offer (conditional reads, multipart uploads), through each driver's own client.
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
}

func (s *cloudStore) close() error { return s.b.Close() }

func (s *cloudStore) bucketExists(ctx context.Context) (bool, error) { return s.b.IsAccessible(ctx) }

func (s *cloudStore) stat(ctx context.Context, key string) (Attrs, error) {
	ba, err := s.b.Attributes(ctx, key)
	if err != nil {
		return Attrs{}, err
	}
	a := Attrs{Size: ba.Size, ETag: ba.ETag, ModTime: ba.ModTime}
	s.native.version(ba, &a)
	return a, nil
}

// list reads the listing a page at a time, retrying each page from its token.
func (s *cloudStore) list(ctx context.Context, prefix string, retry retrier, fn func(Attrs) error) error {
	opts := &blob.ListOptions{Prefix: prefix}
	token := blob.FirstPageToken
	for {
		var page []*blob.ListObject
		var next []byte
		if err := retry(func(a *attempt) error {
			var err error
			page, next, err = s.b.ListPage(a.ctx, token, 1000, opts)
			return err
		}); err != nil {
			return err
		}
		for _, o := range page {
			if o.IsDir || strings.HasSuffix(o.Key, "/") { // "directory" marker objects
				continue
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
	r, err := s.b.NewRangeReader(ctx, key, off, n, opts)
	if err != nil {
		return nil, err
	}
	if err := s.native.checkRead(r, a); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (s *cloudStore) put(ctx context.Context, key string, r io.Reader, _ int64) error {
	// Cancelling the writer's context before Close aborts the write: no object appears.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.b.NewWriter(wctx, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		cancel()
		w.Close()
		return err
	}
	return w.Close()
}

func (s *cloudStore) remove(ctx context.Context, key string) error { return s.b.Delete(ctx, key) }

func (s *cloudStore) createUpload(ctx context.Context, key string) (multipart, error) {
	return s.native.createUpload(ctx, key)
}

func (s *cloudStore) listIncomplete(ctx context.Context, prefix string) ([]Incomplete, error) {
	return s.native.listIncomplete(ctx, prefix)
}

func (s *cloudStore) abortIncomplete(ctx context.Context, key, id string) error {
	return s.native.abortIncomplete(ctx, key, id)
}
