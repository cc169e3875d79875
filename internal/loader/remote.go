package loader

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/objstore"
)

// Bucket reads go through a block cache in front of objstore's ranged reads.
const (
	// DefaultCacheBytes is the block cache's default bound.
	DefaultCacheBytes = 256 << 20
	// cacheBlockSize is the unit of the cache and of each ranged GET.
	cacheBlockSize = 1 << 20
	// fetchConcurrency is the number of ranged GETs a prefetch runs at once.
	fetchConcurrency = 16
)

// openRemote opens an object in a bucket: the format's reader reads the tables and payloads through
// a bounded LRU cache of 1 MiB blocks, which Run fills ahead of decoding (prefetch).
func openRemote(ctx context.Context, url string, opt Options, c *objstore.Client, ra *objstore.ReaderAt) (*source, error) {
	capBytes := opt.CacheBytes
	if capBytes == 0 {
		capBytes = DefaultCacheBytes
	}
	bc := newBlockCache(ra, ra.Size(), capBytes, func() error { return errors.Join(ra.Close(), c.Close()) })
	s, err := openCached(url, bc, ra.Size())
	if err != nil {
		return nil, err
	}
	s.readahead = opt.ReadaheadBytes
	if s.readahead == 0 {
		s.readahead = capBytes / 2
	}
	return s, nil
}

// prefetch loads into the cache the blocks holding the payloads of fields of samples idx,
// in file order, with concurrent ranged reads, up to the read-ahead bound. It is a no-op for
// a mapped file.
func (s *source) prefetch(ctx context.Context, idx []int64, fields []int) error {
	if s.cache == nil {
		return nil
	}
	// the rows first (they say where the payloads are), then the payloads
	var rows []int64
	for _, i := range idx {
		if i < 0 || i >= int64(s.numSamples()) {
			continue
		}
		off, n := s.c.rowRange(int(i))
		if n == 0 {
			continue // the rows are in memory
		}
		rows = append(rows, off/cacheBlockSize, (off+n-1)/cacheBlockSize)
	}
	sort.Slice(rows, func(a, b int) bool { return rows[a] < rows[b] })
	if err := s.cache.fetch(ctx, compactInts(rows)); err != nil {
		return err
	}
	var blocks []int64
	for _, i := range idx {
		for _, f := range fields {
			if !s.fields[f].Payload {
				continue
			}
			off, n := s.payloadRange(int(i), f)
			if n == 0 || n > cacheBlockSize*4 {
				continue // empty, or read directly by the reader
			}
			for b := off / cacheBlockSize; b <= (off+n-1)/cacheBlockSize; b++ {
				blocks = append(blocks, b)
			}
		}
	}
	sort.Slice(blocks, func(a, b int) bool { return blocks[a] < blocks[b] })
	blocks = compactInts(blocks)
	if max := int(s.readahead / cacheBlockSize); len(blocks) > max {
		blocks = blocks[:max]
	}
	return s.cache.fetch(ctx, blocks)
}

func compactInts(s []int64) []int64 {
	out := s[:0]
	for k, v := range s {
		if k == 0 || v != s[k-1] {
			out = append(out, v)
		}
	}
	return out
}

// blockCache is an io.ReaderAt over ra that keeps up to capBlocks aligned blocks, least
// recently used evicted first. Concurrent reads of one block share one fetch.
type blockCache struct {
	ra        io.ReaderAt
	size      int64
	closer    func() error
	closeOnce sync.Once
	closeErr  error

	mu        sync.Mutex
	capBlocks int
	lru       *list.List              // of *cacheBlock, most recent at the front
	blocks    map[int64]*list.Element // block index → element
	loading   map[int64]*blockLoad

	hits, misses int64
}

type cacheBlock struct {
	idx  int64
	data []byte
}

type blockLoad struct {
	done chan struct{}
	data []byte
	err  error
}

func newBlockCache(ra io.ReaderAt, size, capBytes int64, closer func() error) *blockCache {
	return &blockCache{ra: ra, size: size, closer: closer, capBlocks: int(max(capBytes/cacheBlockSize, 2)),
		lru: list.New(), blocks: map[int64]*list.Element{}, loading: map[int64]*blockLoad{}}
}

// Close drops the blocks and closes the underlying object and client (once).
func (c *blockCache) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.lru.Init()
		c.blocks = map[int64]*list.Element{}
		c.mu.Unlock()
		c.closeErr = c.closer()
	})
	return c.closeErr
}

// ReadAt reads p at off through the cache; a read of more than 4 blocks bypasses it.
func (c *blockCache) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("blockcache: negative offset %d", off)
	}
	if len(p) > 4*cacheBlockSize {
		return c.ra.ReadAt(p, off)
	}
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		if pos >= c.size {
			return n, io.EOF
		}
		b, err := c.block(context.Background(), pos/cacheBlockSize)
		if err != nil {
			return n, err
		}
		n += copy(p[n:], b[pos%cacheBlockSize:])
	}
	return n, nil
}

// block returns block idx, from the cache or fetched.
func (c *blockCache) block(ctx context.Context, idx int64) ([]byte, error) {
	c.mu.Lock()
	if e, ok := c.blocks[idx]; ok {
		c.lru.MoveToFront(e)
		c.hits++
		b := e.Value.(*cacheBlock).data
		c.mu.Unlock()
		return b, nil
	}
	if ld, ok := c.loading[idx]; ok {
		c.mu.Unlock()
		select {
		case <-ld.done:
			return ld.data, ld.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c.misses++
	ld := &blockLoad{done: make(chan struct{})}
	c.loading[idx] = ld
	c.mu.Unlock()

	start := idx * cacheBlockSize
	buf := make([]byte, min(cacheBlockSize, c.size-start))
	n, err := c.ra.ReadAt(buf, start)
	if n == len(buf) {
		err = nil
	} else if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	ld.data, ld.err = buf, err

	c.mu.Lock()
	delete(c.loading, idx)
	if err == nil {
		c.blocks[idx] = c.lru.PushFront(&cacheBlock{idx: idx, data: buf})
		for c.lru.Len() > c.capBlocks {
			old := c.lru.Remove(c.lru.Back()).(*cacheBlock)
			delete(c.blocks, old.idx)
		}
	}
	c.mu.Unlock()
	close(ld.done)
	return buf, err
}

// fetch loads the blocks (sorted) that are not cached, fetchConcurrency at a time.
func (c *blockCache) fetch(ctx context.Context, blocks []int64) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(fetchConcurrency)
	for _, b := range blocks {
		c.mu.Lock()
		_, ok := c.blocks[b]
		c.mu.Unlock()
		if ok {
			continue
		}
		g.Go(func() error {
			_, err := c.block(gctx, b)
			return err
		})
	}
	return g.Wait()
}

// stats returns the cache's hits and misses.
func (c *blockCache) stats() (hits, misses int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}
