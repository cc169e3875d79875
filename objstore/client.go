package objstore

import (
	"context"
	"sync"
	"time"
)

// Defaults of the client's options.
const (
	DefaultBlockSize    = 4 << 20 // bytes per ranged GET of a streaming read
	DefaultReadahead    = 1       // blocks fetched ahead of the one being read
	DefaultAttempts     = 8       // tries of one request before giving up
	DefaultBackoff      = 200 * time.Millisecond
	DefaultMaxBackoff   = 15 * time.Second
	DefaultStallTimeout = 30 * time.Second // no byte moved for this long: the attempt is retried
	// MinPartSize is the smallest part of a multipart upload other than the last (S3's rule,
	// applied to every store so that an upload that works on one works on all).
	MinPartSize = 5 << 20
	// MaxPartSize is the largest part (S3's limit).
	MaxPartSize = 5 << 30
	// MaxParts is the highest part number.
	MaxParts = 10000
)

// An Option configures a Client.
type Option func(*config)

type config struct {
	blockSize    int
	readahead    int
	attempts     int
	backoff      time.Duration
	maxBackoff   time.Duration
	stall        time.Duration
	writeBufSize int

	noPartChecksums bool
}

// WithoutPartChecksums uploads S3 parts without a CRC32 (as AWS_REQUEST_CHECKSUM_CALCULATION=
// when_required does) for this client only. Uploads that mix uploaded parts with
// server-side copies (a merge) use it: some S3-compatible servers (versitygw v1.8) report a
// copied part's checksum as the source object's composite checksum, which Complete then
// refuses. The copied bytes never leave the server; uploaded ones are still covered by the
// request signature (SigV4) and, over HTTPS, by TLS.
func WithoutPartChecksums() Option {
	return func(c *config) { c.noPartChecksums = true }
}

// WithBlockSize sets the size of each ranged GET of a streaming read (default 4 MiB). A
// streaming reader holds at most (readahead+1) blocks.
func WithBlockSize(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.blockSize = n
		}
	}
}

// WithReadahead sets how many blocks a streaming reader fetches ahead of the one being
// read, concurrently (default 1; 0 reads one block at a time).
func WithReadahead(n int) Option {
	return func(c *config) {
		if n >= 0 {
			c.readahead = n
		}
	}
}

// WithRetry sets the retry policy: attempts per request (at least 1), and the exponential
// backoff between them (full jitter: a random wait up to base·2^n, capped at max).
func WithRetry(attempts int, base, max time.Duration) Option {
	return func(c *config) {
		c.attempts = max1(attempts)
		if base > 0 {
			c.backoff = base
		}
		if max > 0 {
			c.maxBackoff = max
		}
	}
}

// WithStallTimeout sets how long a request may go without moving a byte before it is
// cancelled and retried (default 30 s; copies and Complete get ten times as long).
func WithStallTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.stall = d
		}
	}
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

// Client reaches objects named by URL. It opens each bucket once, on first use, and is safe
// for concurrent use. Close it when done.
type Client struct {
	cfg config

	mu     sync.Mutex
	stores map[string]store // by Location.bucketID
	s3env  *s3Env           // the AWS configuration, loaded on first use of s3://
	closed bool
}

// New returns a Client. It reads no credentials until a bucket is first used.
func New(opts ...Option) *Client {
	c := &Client{cfg: config{
		blockSize:    DefaultBlockSize,
		readahead:    DefaultReadahead,
		attempts:     DefaultAttempts,
		backoff:      DefaultBackoff,
		maxBackoff:   DefaultMaxBackoff,
		stall:        DefaultStallTimeout,
		writeBufSize: 8 << 20,
	}, stores: map[string]store{}}
	for _, o := range opts {
		o(&c.cfg)
	}
	return c
}

// Close releases the buckets the client opened. Readers, writers and uploads of the client
// must be closed first.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var first error
	for id, s := range c.stores {
		if err := s.close(); err != nil && first == nil {
			first = err
		}
		delete(c.stores, id)
	}
	return first
}

// store returns the store of l's bucket, opening it on first use.
func (c *Client) store(ctx context.Context, op string, l Location) (store, error) {
	if l.IsLocal() {
		return localStore{}, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, newErr(op, l.String(), ErrClosed, "client closed")
	}
	if s, ok := c.stores[l.bucketID()]; ok {
		return s, nil
	}
	var s store
	var err error
	switch l.Scheme {
	case SchemeS3:
		s, err = c.openS3(ctx, l.Bucket)
	case SchemeGCS:
		s, err = openGCS(ctx, l.Bucket)
	case SchemeAzure:
		s, err = openAzure(ctx, l.Bucket)
	}
	if err != nil {
		e := c.wrap(ctx, op, l.String(), err)
		if e.Kind == nil {
			e.Kind = ErrConfig
		}
		return nil, e
	}
	c.stores[l.bucketID()] = s
	return s, nil
}

// parse parses raw and opens its store.
func (c *Client) parse(ctx context.Context, op, raw string) (Location, store, error) {
	l, err := Parse(raw)
	if err != nil {
		err.(*Error).Op = op
		return Location{}, nil, err
	}
	s, err := c.store(ctx, op, l)
	return l, s, err
}

// parseObject is parse for a URL that must name an object.
func (c *Client) parseObject(ctx context.Context, op, raw string) (Location, store, error) {
	l, err := Parse(raw)
	if err != nil {
		err.(*Error).Op = op
		return Location{}, nil, err
	}
	if err := l.objectKey(op); err != nil {
		return Location{}, nil, err
	}
	s, err := c.store(ctx, op, l)
	return l, s, err
}
