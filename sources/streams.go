package sources

import (
	"context"
	"io"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/objstore"
)

// IsURL reports whether name is an object in a bucket (s3://, gs://, az://, azblob://)
// rather than a local path or file:// URL. A malformed URL counts as one: opening it fails
// with an error naming it.
func IsURL(name string) bool { return objstore.IsURL(name) }

// LocalPath returns the path a local input names: name itself, or a file:// URL's path.
func LocalPath(name string) string {
	if l, err := objstore.Parse(name); err == nil && l.IsLocal() {
		return l.Key
	}
	return name
}

// DefaultPrefetch is how many inputs in a bucket Streams opens ahead of the one being read.
const DefaultPrefetch = 2

// Streams hands out the byte streams of a list of inputs, in order. A local input (a path
// or file:// URL) is opened when its turn comes (it may be a named pipe: cancelling the
// context ends the wait for its writer); the inputs in buckets are opened ahead of their
// turn through objstore's Prefetcher, so that reading one overlaps fetching the next.
// Memory: (depth+1) open readers of (readahead+1) blocks each, 24 MiB with the defaults.
// A Streams is not safe for concurrent use; the streams it hands out may be read anywhere.
type Streams struct {
	ctx   context.Context
	names []string
	next  int
	pf    *objstore.Prefetcher // over the inputs in buckets, in order; nil when none
}

// OpenStreams starts handing out the streams of names under ctx, with depth inputs in
// buckets opened ahead (depth < 1: DefaultPrefetch). store reads the inputs in buckets.
func OpenStreams(ctx context.Context, store *objstore.Client, names []string, depth int) *Streams {
	if depth < 1 {
		depth = DefaultPrefetch
	}
	s := &Streams{ctx: ctx, names: names}
	var urls []string
	for _, n := range names {
		if IsURL(n) {
			urls = append(urls, n)
		}
	}
	if len(urls) > 0 {
		s.pf = store.Prefetch(ctx, urls, depth)
	}
	return s
}

// Next returns the stream of the next input and its name, or io.EOF after the last. An
// input that cannot be opened returns its error (naming it); the caller closes each stream.
func (s *Streams) Next() (io.ReadCloser, string, error) {
	if s.next >= len(s.names) {
		return nil, "", io.EOF
	}
	name := s.names[s.next]
	s.next++
	if IsURL(name) {
		r, err := s.pf.Next()
		if err != nil {
			return nil, name, err
		}
		return r, name, nil
	}
	f, _, err := inputfile.OpenStream(s.ctx, LocalPath(name))
	if err != nil {
		return nil, name, err
	}
	return f, name, nil
}

// Close stops the opens in flight and closes the streams not handed out.
func (s *Streams) Close() error {
	if s.pf != nil {
		return s.pf.Close()
	}
	return nil
}

// FetchInOrder reads the whole objects urls names, in order, with depth of them fetched
// ahead of the one handed over (depth < 1: DefaultPrefetch), and calls fn with each one's
// bytes, or with the error that kept it from being read (naming its URL). It stops at fn's
// first error and returns it. Memory: depth+1 objects (each read in blocks of the store's
// block size) plus the one fn holds.
func FetchInOrder(ctx context.Context, store *objstore.Client, urls []string, depth int, fn func(i int, b []byte, err error) error) error {
	if depth < 1 {
		depth = DefaultPrefetch
	}
	pf := store.Prefetch(ctx, urls, depth)
	defer pf.Close()
	for i := range urls {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := pf.Next()
		var b []byte
		if err == nil {
			b = make([]byte, 0, r.Size())
			b, err = readAllInto(r, b)
			r.Close()
		}
		if err := fn(i, b, err); err != nil {
			return err
		}
	}
	return nil
}

// readAllInto is io.ReadAll into b's capacity first.
func readAllInto(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}
