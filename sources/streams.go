package sources

import (
	"context"
	"io"

	"github.com/mldf/convert/objstore"
)

// DefaultPrefetch is how many inputs in a bucket Streams opens ahead of the one being read.
const DefaultPrefetch = 2

// Streams hands out the byte streams of a list of inputs, in order, through objstore's
// Prefetcher: a local input (a path or file:// URL) is opened when its turn comes (it may be
// a named pipe: cancelling the context ends the wait for its writer); the inputs in buckets
// are opened ahead of their turn, so that reading one overlaps fetching the next.
// Memory: (depth+1) open readers of (readahead+1) blocks each, 24 MiB with the defaults.
// A Streams is not safe for concurrent use; the streams it hands out may be read anywhere.
type Streams struct {
	names []string
	next  int
	pf    *objstore.Prefetcher // over the inputs, in order
}

// OpenStreams starts handing out the streams of names under ctx, with depth inputs in
// buckets opened ahead (depth < 1: DefaultPrefetch). store reads the inputs.
func OpenStreams(ctx context.Context, store *objstore.Client, names []string, depth int) *Streams {
	if depth < 1 {
		depth = DefaultPrefetch
	}
	return &Streams{names: names, pf: store.Prefetch(ctx, names, depth)}
}

// Next returns the stream of the next input and its name, or io.EOF after the last. An
// input that cannot be opened returns its error (naming it); the caller closes each stream.
func (s *Streams) Next() (io.ReadCloser, string, error) {
	if s.next >= len(s.names) {
		return nil, "", io.EOF
	}
	name := s.names[s.next]
	s.next++
	r, err := s.pf.Next()
	if err != nil {
		return nil, name, err
	}
	return r, name, nil
}

// Close stops the opens in flight and closes the streams not handed out.
func (s *Streams) Close() error {
	return s.pf.Close()
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
