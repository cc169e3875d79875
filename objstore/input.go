package objstore

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mldf/convert/internal/inputfile"
)

// The calls in this file open a conversion's inputs, local or in a bucket, so that sources
// need not ask which. A local input keeps the local rules (internal/inputfile): a named pipe
// is never waited on in open(2) (a stream waits for its writer in Go's poller, stopped by
// the context; random access refuses it), a path longer than PATH_MAX is refused before any
// system call, and the error is the operating system's own, naming the path (as a local
// input's errors have always read); an object in a bucket gets this package's *Error.

// OpenStream opens the input raw names for one pass from start to end: a local regular file
// or named pipe (a file:// URL too) through inputfile.OpenStream, an object through Open.
func (c *Client) OpenStream(ctx context.Context, raw string) (io.ReadCloser, error) {
	if p, ok := inputPath(raw); ok {
		rc, _, err := inputfile.OpenStream(ctx, p)
		return rc, err
	}
	r, err := c.Open(ctx, raw)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// OpenRegularStream is OpenStream for an input that must be a regular file: a local one is
// opened through inputfile.OpenRegular (a named pipe is refused, never waited on), an object
// is streamed through Open.
func (c *Client) OpenRegularStream(ctx context.Context, raw string) (io.ReadCloser, error) {
	if p, ok := inputPath(raw); ok {
		f, _, err := inputfile.OpenRegular(p)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	r, err := c.Open(ctx, raw)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// OpenRegular opens the input raw names for random access: a local regular file (a
// file:// URL too) through inputfile.OpenRegular, an object through OpenReaderAt (each
// ReadAt one ranged GET under ctx).
func (c *Client) OpenRegular(ctx context.Context, raw string) (*ReaderAt, error) {
	p, ok := inputPath(raw)
	if !ok {
		return c.OpenReaderAt(ctx, raw)
	}
	f, st, err := inputfile.OpenRegular(p)
	if err != nil {
		return nil, err
	}
	return &ReaderAt{c: c, ctx: ctx, raw: raw, l: Location{Scheme: SchemeFile, Key: p}, f: f,
		a: Attrs{URL: raw, Size: st.Size(), ModTime: st.ModTime()}}, nil
}

// OpenCheck opens the input raw names for a look before the run (its first record, whether
// its compressed stream starts) when a second read by the run costs little: a local regular
// file (a file:// URL too). It returns nil and no error, opening nothing, for an input that
// is read once: a named pipe (reading would consume it) or an object in a bucket (the run
// fetches it, with its retries). A local file that is neither is an error naming raw
// (inputfile.ErrNotStream), as is one that cannot be statted (the operating system's error).
func (c *Client) OpenCheck(ctx context.Context, raw string) (io.ReadCloser, error) {
	p, ok := inputPath(raw)
	if !ok {
		return nil, nil
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if m := st.Mode(); !m.IsRegular() {
		if m&fs.ModeNamedPipe != 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: %s is %s", inputfile.ErrNotStream, raw, inputfile.Kind(m))
	}
	rc, _, err := inputfile.OpenStream(ctx, p)
	return rc, err
}

// StatInput returns the attributes of an input read whole by the run (an audio clip): a
// local file through os.Stat, refused unless it is a regular file (inputfile.CheckRegular;
// the operating system's error naming the path), an object through Stat. Attrs.Fetch tells
// whether the run reads it through the client (an object) or may open the path itself.
func (c *Client) StatInput(ctx context.Context, raw string) (Attrs, error) {
	p, ok := inputPath(raw)
	if !ok {
		a, err := c.Stat(ctx, raw)
		a.Fetch = true
		return a, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return Attrs{}, err
	}
	if err := inputfile.CheckRegular(p, st.Mode()); err != nil {
		return Attrs{}, err
	}
	return Attrs{URL: raw, Size: st.Size(), ModTime: st.ModTime()}, nil
}

// Resolve returns name as seen from the directory dir (a recipe's folder): a relative local
// path is joined to dir; an absolute path and anything written with a scheme (a bucket's
// URL, a file:// URL, a malformed URL) is returned unchanged.
func Resolve(dir, name string) string {
	if name == "" || filepath.IsAbs(name) {
		return name
	}
	if _, _, scheme := splitScheme(name); scheme {
		return name
	}
	return filepath.Join(dir, name)
}

// inputPath returns the local path of an input that is not a store's URL: a file:// URL's
// path, else the name as written (also one Parse refuses, such as a name that is not UTF-8:
// the operating system has the last word on a local name, and its error names it).
func inputPath(raw string) (string, bool) {
	if IsURL(raw) {
		return "", false
	}
	if l, err := Parse(raw); err == nil {
		return l.Key, true
	}
	return raw, true
}
