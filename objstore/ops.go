package objstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/mldf/convert/internal/atomicfile"
	"iter"
	"os"
	"path/filepath"
)

// Stat returns the attributes of the object raw names, retrying transient failures. It is
// the check to run on an input before any work: a bad URL, a missing bucket, a missing
// object and refused credentials each give one *Error naming raw.
func (c *Client) Stat(ctx context.Context, raw string) (Attrs, error) {
	l, s, err := c.parseObject(ctx, "stat", raw)
	if err != nil {
		return Attrs{}, err
	}
	a, err := c.stat(ctx, "stat", raw, l, s)
	return a, err
}

func (c *Client) stat(ctx context.Context, op, raw string, l Location, s store) (Attrs, error) {
	var a Attrs
	err := c.do(ctx, op, raw, 1, func(at *attempt) error {
		var err error
		a, err = s.stat(at.ctx, l.Key)
		return err
	})
	if err != nil {
		return Attrs{}, c.refine(ctx, s, err)
	}
	a.URL = raw
	return a, nil
}

// refine tells a missing bucket from a missing object: S3 answers a HEAD of a key in a
// bucket that does not exist with a bare 404.
func (c *Client) refine(ctx context.Context, s store, err error) error {
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrNotFound || e.Detail == "no such bucket" {
		return err
	}
	if _, ok := s.(localStore); ok {
		return err
	}
	if ok, berr := s.bucketExists(ctx); berr == nil && !ok {
		e.Detail = "no such bucket"
	} else if berr == nil && e.Detail != "no such multipart upload" {
		e.Detail = "no such object"
	}
	return err
}

// CheckWrite checks, before any work, that an object can be written at raw: for a local
// path, that its directory exists and takes a new file and that raw is not a directory;
// for a bucket, that the bucket exists and the credentials are accepted, and on S3 that
// they may write there (a multipart upload is started and aborted: nothing appears).
func (c *Client) CheckWrite(ctx context.Context, raw string) error {
	const op = "check write"
	l, s, err := c.parseObject(ctx, op, raw)
	if err != nil {
		return err
	}
	if l.IsLocal() {
		if fi, err := os.Stat(l.Key); err == nil && !fi.Mode().IsRegular() {
			return newErr(op, raw, ErrBadURL, "exists and is not a regular file")
		}
		// The probe is the write's own temporary file, discarded: unnamed where the system
		// has O_TMPFILE, so a process killed right here leaves nothing behind.
		f, err := atomicfile.Create(l.Key, 0o644)
		if err != nil {
			return c.wrap(ctx, op, raw, err)
		}
		f.Abort()
		return nil
	}
	var ok bool
	if err := c.do(ctx, op, raw, 1, func(at *attempt) error {
		var err error
		ok, err = s.bucketExists(at.ctx)
		return err
	}); err != nil {
		return err
	}
	if !ok {
		return newErr(op, raw, ErrNotFound, "no such bucket")
	}
	if l.Scheme == SchemeS3 {
		var mp multipart
		if err := c.do(ctx, op, raw, 1, func(at *attempt) error {
			var err error
			mp, err = s.createUpload(at.ctx, l.Key)
			return err
		}); err != nil {
			return err
		}
		return c.do(ctx, op, raw, 1, func(at *attempt) error { return ignoreNotFound(mp.abort(at.ctx)) })
	}
	return nil
}

// List returns the objects whose URL starts with prefix (a URL or a local path, typically
// ending in "/"), in key order. Local paths are walked recursively, each directory's
// entries in name order. The iteration stops at the first error, which it yields.
func (c *Client) List(ctx context.Context, prefix string) iter.Seq2[Attrs, error] {
	return func(yield func(Attrs, error) bool) {
		l, err := Parse(prefix)
		if err != nil {
			err.(*Error).Op = "list"
			yield(Attrs{}, err)
			return
		}
		if err := c.list(ctx, prefix, l, func(a Attrs) error {
			if !yield(a, nil) {
				return errStop
			}
			return nil
		}); err != nil && !errors.Is(err, errStop) {
			yield(Attrs{}, err)
		}
	}
}

var errStop = errors.New("stop")

// list calls fn for each object under l.Key (URLs spelled like l).
func (c *Client) list(ctx context.Context, raw string, l Location, fn func(Attrs) error) error {
	s, err := c.store(ctx, "list", l)
	if err != nil {
		return err
	}
	var fnErr error
	retry := func(fn func(*attempt) error) error { return c.do(ctx, "list", raw, 1, fn) }
	err = s.list(ctx, l.Key, retry, func(a Attrs) error {
		a.URL = l.WithKey(a.URL).String()
		if err := fn(a); err != nil {
			fnErr = err
			return err
		}
		return nil
	})
	if err == nil {
		return nil
	}
	if fnErr != nil {
		return fnErr
	}
	return c.refine(ctx, s, c.wrap(ctx, "list", raw, err))
}

// MakeParents makes the directories a local path needs before it is written (like
// os.MkdirAll of its directory); for a bucket URL it does nothing: keys need no directories.
func (c *Client) MakeParents(ctx context.Context, raw string) error {
	l, err := Parse(raw)
	if err != nil {
		err.(*Error).Op = "create"
		return err
	}
	if !l.IsLocal() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(l.Key), 0o755); err != nil {
		return c.wrap(ctx, "create", raw, err)
	}
	return nil
}

// Remove deletes the object raw names. A missing object is not an error.
func (c *Client) Remove(ctx context.Context, raw string) error {
	l, s, err := c.parseObject(ctx, "remove", raw)
	if err != nil {
		return err
	}
	return c.do(ctx, "remove", raw, 1, func(at *attempt) error { return ignoreNotFound(s.remove(at.ctx, l.Key)) })
}

func ignoreNotFound(err error) error {
	if err != nil && classify(err).kind == ErrNotFound {
		return nil
	}
	return err
}

func errorf(op, url string, kind error, format string, a ...any) *Error {
	return newErr(op, url, kind, fmt.Sprintf(format, a...))
}
