package objstore

import (
	"context"
	"io"

	"github.com/mldf/convert/internal/inputfile"

	"golang.org/x/sync/errgroup"
)

// Prefetcher opens the inputs of a list ahead of the one being read: while the caller
// reads input i, inputs i+1..i+depth are being stat'ed and their first blocks fetched, so
// a worker does not wait on the network when bandwidth allows. Memory is bounded by
// (depth+1) readers of (readahead+1) blocks each. A local input (a path or file:// URL) is
// opened when its turn comes, as OpenStream opens it: it may be a named pipe, whose writer
// is waited for only then (cancelling the context ends the wait), and an error opening it
// is the operating system's, naming the path.
//
// Next hands readers over in list order; the caller closes each. Close stops the opens in
// flight and closes the readers not handed over. A Prefetcher is not safe for concurrent
// use.
type Prefetcher struct {
	c     *Client
	ctx   context.Context // the readers' parent
	octx  context.Context // the opens'; cancelled by Close
	stop  context.CancelFunc
	g     errgroup.Group
	urls  []string
	depth int
	next  int     // index of the next URL to open
	slots []*slot // opening or opened, in order
}

type slot struct {
	local bool   // a local input, opened by Next
	path  string // its path
	r     *Reader
	err   error
	done  chan struct{}
}

// Prefetch starts opening urls, depth of them ahead of the one being read (depth < 1
// means 1). The readers' fetches run under ctx.
func (c *Client) Prefetch(ctx context.Context, urls []string, depth int) *Prefetcher {
	octx, stop := context.WithCancel(ctx)
	p := &Prefetcher{c: c, ctx: ctx, octx: octx, stop: stop, urls: urls, depth: max1(depth)}
	p.fill(p.depth + 1)
	return p
}

func (p *Prefetcher) fill(window int) {
	for len(p.slots) < window && p.next < len(p.urls) {
		s := &slot{done: make(chan struct{})}
		u := p.urls[p.next]
		p.next++
		p.slots = append(p.slots, s)
		if path, ok := inputPath(u); ok {
			s.local, s.path, s.r = true, path, &Reader{c: p.c, raw: u}
			close(s.done)
			continue
		}
		p.g.Go(func() error {
			defer close(s.done)
			s.r, s.err = p.c.open(p.octx, p.ctx, u)
			return nil
		})
	}
}

// Next returns the reader of the next URL, in list order, or io.EOF after the last. An
// input that could not be opened returns its error; the following ones are still served.
func (p *Prefetcher) Next() (*Reader, error) {
	if len(p.slots) == 0 {
		return nil, io.EOF
	}
	s := p.slots[0]
	p.slots = p.slots[1:]
	p.fill(p.depth) // the caller holds this one: depth more are opened ahead
	if s.local {
		rc, _, err := inputfile.OpenStream(p.ctx, s.path)
		if err != nil {
			return nil, err
		}
		s.r.lr = rc
		return s.r, nil
	}
	select {
	case <-s.done:
	case <-p.octx.Done():
		<-s.done
		if s.r != nil {
			s.r.Close()
		}
		return nil, p.c.wrap(p.octx, "open", "", context.Cause(p.octx))
	}
	return s.r, s.err
}

// Close cancels the opens in flight, waits for them and closes every reader not handed
// over by Next.
func (p *Prefetcher) Close() error {
	p.stop()
	p.g.Wait()
	for _, s := range p.slots {
		if s.r != nil && !s.local { // a local input is not opened before its turn
			s.r.Close()
		}
	}
	p.slots = nil
	p.next = len(p.urls)
	return nil
}
