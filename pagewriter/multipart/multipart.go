// Package multipart writes one object as a multipart upload from positional writes that
// arrive in any order: it buffers the bytes into parts of a fixed, offset-determined size,
// uploads a part as soon as every byte in it was delivered, and keeps the first part (the
// header) until Commit, which uploads it last and completes the upload. Memory is bounded by
// the number of buffers; writers block when they are all in use (docs/WRITER.md).
package multipart

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Uploader is the object store's side of one multipart upload, already started.
type Uploader interface {
	// UploadPart uploads part (1-based). Calls come in any order and concurrently; data is
	// valid only during the call.
	UploadPart(ctx context.Context, part int, data []byte) error
	// Complete makes the object appear, made of the uploaded parts in part order.
	Complete(ctx context.Context) error
	// Abort discards the upload and its parts.
	Abort(ctx context.Context) error
}

// Defaults and limits (those of S3, the strictest of the stores).
const (
	DefaultPartSize     = 16 << 20 // the first parts' size
	DefaultMinPartSize  = 5 << 20  // S3's minimum for every part but the last
	DefaultMaxPartSize  = 4 << 30  // part sizes stop doubling here (S3 allows 5 GiB)
	DefaultMaxParts     = 10000    // S3's limit
	DefaultGrowEvery    = 1000     // part sizes double after this many parts
	DefaultBuffers      = 8        // part buffers besides the first part and the straddling one
	DefaultAbortTimeout = time.Minute
)

// Errors of the sink.
var (
	ErrOptions  = errors.New("multipart: invalid options")
	ErrTooLarge = errors.New("multipart: object larger than the parts allow")
	ErrOverlap  = errors.New("multipart: bytes delivered twice")
	ErrMissing  = errors.New("multipart: bytes never delivered")
	ErrClosed   = errors.New("multipart: upload already committed or aborted")
	ErrAborted  = errors.New("multipart: upload aborted")
)

// Options configure a Sink; the zero value is the defaults.
type Options struct {
	// PartSize is the size of parts 1..GrowEvery; later parts double every GrowEvery parts
	// up to MaxPartSize. 0 means DefaultPartSize.
	PartSize int64
	// MinPartSize is the store's minimum part size (every part but the last); PartSize must
	// be at least this. 0 means DefaultMinPartSize.
	MinPartSize int64
	// MaxPartSize caps the doubling. 0 means DefaultMaxPartSize.
	MaxPartSize int64
	// MaxParts is the store's limit on the number of parts. 0 means DefaultMaxParts.
	MaxParts int
	// GrowEvery is the number of parts of each size. 0 means DefaultGrowEvery.
	GrowEvery int
	// Buffers is N >= 2, the number of part buffers the data parts and the tables share
	// (part 1 and the part where the streamed bytes start have their own): memory stays
	// below (N + 2) × part size. 0 means DefaultBuffers.
	Buffers int
	// ScratchDir is where the writer using the sink keeps its scratch files; "" means the
	// system's temporary directory.
	ScratchDir string
	// AbortTimeout bounds Uploader.Abort. 0 means DefaultAbortTimeout.
	AbortTimeout time.Duration
	// Verb names the sink's work in its messages: "" means "upload" ("upload part 3 of
	// NAME: ..."); a local file written by parts says "write".
	Verb string
}

func (o *Options) defaults() {
	set := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	set(&o.PartSize, DefaultPartSize)
	set(&o.MinPartSize, DefaultMinPartSize)
	set(&o.MaxPartSize, DefaultMaxPartSize)
	if o.MaxParts == 0 {
		o.MaxParts = DefaultMaxParts
	}
	if o.GrowEvery == 0 {
		o.GrowEvery = DefaultGrowEvery
	}
	if o.Buffers == 0 {
		o.Buffers = DefaultBuffers
	}
	if o.AbortTimeout == 0 {
		o.AbortTimeout = DefaultAbortTimeout
	}
	if o.Verb == "" {
		o.Verb = "upload"
	}
	if o.ScratchDir == "" {
		o.ScratchDir = os.TempDir()
	}
}

// Check reports options that cannot work.
func (o Options) Check() error {
	o.defaults()
	switch {
	case o.PartSize < 0, o.MinPartSize < 0, o.MaxPartSize < 0, o.MaxParts < 0, o.GrowEvery < 0, o.Buffers < 0:
		return fmt.Errorf("%w: negative sizes or counts", ErrOptions)
	case o.PartSize < o.MinPartSize:
		return fmt.Errorf("%w: part size %d below the store's minimum %d", ErrOptions, o.PartSize, o.MinPartSize)
	case o.PartSize > o.MaxPartSize:
		return fmt.Errorf("%w: part size %d above the maximum %d", ErrOptions, o.PartSize, o.MaxPartSize)
	case o.Buffers < 2 || o.Buffers > 1<<16:
		return fmt.Errorf("%w: %d buffers (want 2..65536: the finalizer may need one while the part where the data ends waits for the tables)", ErrOptions, o.Buffers)
	}
	return nil
}

// schedule is the part layout: part k (1-based) is base << min((k-1)/grow, top) bytes.
type schedule struct {
	base     int64
	grow     int
	top      int // the last shift
	maxParts int
}

func newSchedule(o Options) schedule {
	s := schedule{base: o.PartSize, grow: o.GrowEvery, maxParts: o.MaxParts}
	for s.base<<(s.top+1) <= o.MaxPartSize && s.top < 40 {
		s.top++
	}
	return s
}

// groupStart is the offset of the first part of group g (g <= top).
func (s schedule) groupStart(g int) int64 {
	return int64(s.grow) * s.base * (1<<g - 1)
}

// bounds returns the offset and size of part k.
func (s schedule) bounds(k int) (start, size int64) {
	g := min((k-1)/s.grow, s.top)
	size = s.base << g
	return s.groupStart(g) + int64(k-1-g*s.grow)*size, size
}

// locate returns the part holding offset off.
func (s schedule) locate(off int64) int {
	g := 0
	for g < s.top && off >= s.groupStart(g+1) {
		g++
	}
	return g*s.grow + int((off-s.groupStart(g))/(s.base<<g)) + 1
}

// MaxSize returns the largest object the schedule allows.
func (s schedule) maxSize() int64 {
	start, size := s.bounds(s.maxParts)
	return start + size
}

// part is one part being filled or uploaded.
type part struct {
	buf     []byte
	ready   chan struct{} // closed once buf is set
	have    int64         // bytes delivered
	size    int64
	counted bool // its buffer is one of the N
	started bool // its upload has started
}

// Sink is one multipart upload written by offset. It implements the page writer's Sink.
type Sink struct {
	u      Uploader
	name   string
	opt    Options
	sched  schedule
	ctx    context.Context
	cancel context.CancelFunc
	stop   func() bool    // stops the AfterFunc that fails the sink when ctx ends
	g      errgroup.Group // the part uploads

	stream   int64 // where the streamed bytes start
	first    int   // the first part in the window (streamed bytes only)
	straddle int   // the part holding bytes on both sides of the stream start, or 0

	mu       sync.Mutex
	cond     *sync.Cond
	parts    map[int]*part
	done     []uint64 // bit k: part k's upload started
	finished []uint64 // bit k: part k's upload finished (or was restored by Resume)
	resumed  int64    // where a resumed sink's writes start again (Resume)
	low      int      // the lowest part >= first not yet complete
	bufs     int      // counted buffers in existence (in use or free)
	free     [][]byte // counted buffers not in use
	held     int64    // bytes of all buffers in existence
	peak     int64
	uploaded int
	err      error
	state    int // 0 open, 1 committing, 2 done

	abortOnce sync.Once
	abortErr  error
}

// New returns a sink writing the object name (for messages) through u. stream is where the
// bytes written while the run goes start (pagewriter.SinkLayout): the bytes before it come
// only from the finalizer. When ctx ends (SIGINT), the sink fails: the uploads in flight are
// cancelled and writers waiting for a buffer return; the caller then aborts.
func New(ctx context.Context, u Uploader, name string, stream int64, opt Options) (*Sink, error) {
	if opt.Verb == "" {
		opt.Verb = "upload"
	}
	if err := opt.Check(); err != nil {
		return nil, fmt.Errorf("%s %s: %w", opt.Verb, name, err)
	}
	opt.defaults()
	s := &Sink{u: u, name: name, opt: opt, sched: newSchedule(opt), parts: map[int]*part{}, stream: stream}
	s.done = make([]uint64, (opt.MaxParts+2+63)/64)
	s.finished = make([]uint64, len(s.done))
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.cond = sync.NewCond(&s.mu)
	s.stop = context.AfterFunc(s.ctx, func() {
		s.fail(fmt.Errorf("%s %s: %w", opt.Verb, name, context.Cause(s.ctx)))
	})
	s.first = 2
	if stream > 0 {
		if stream >= s.sched.maxSize() {
			s.stop()
			s.cancel()
			return nil, fmt.Errorf("%s %s: %w", opt.Verb, name, ErrTooLarge)
		}
		k := s.sched.locate(stream)
		start, _ := s.sched.bounds(k)
		switch {
		case k == 1:
		case start < stream:
			s.straddle, s.first = k, k+1
		default:
			s.first = k
		}
	}
	s.low = s.first
	return s, nil
}

// Name returns the object's name.
func (s *Sink) Name() string { return s.name }

// ScratchDir returns Options.ScratchDir.
func (s *Sink) ScratchDir() string { return s.opt.ScratchDir }

// Stats describe the sink's memory and parts.
type Stats struct {
	Uploaded   int   // parts whose upload finished (part 1 excluded)
	PeakBuffer int64 // the most bytes of part buffers held at once
}

// Stats returns the sink's statistics so far.
func (s *Sink) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Uploaded: s.uploaded, PeakBuffer: s.peak}
}

// Bound returns the memory bound of the part buffers for an object of size bytes:
// (Buffers + 2) × the largest part size it uses.
func (s *Sink) Bound(size int64) int64 {
	_, big := s.sched.bounds(s.sched.locate(max(size-1, 0)))
	return int64(s.opt.Buffers+2) * big
}

// WriteAt copies p into the parts it covers, waiting for a buffer where none is free.
func (s *Sink) WriteAt(p []byte, off int64) (int, error) {
	done := 0
	err := s.deliver(off, int64(len(p)), func(buf []byte, at int64, n int64) {
		copy(buf[at:at+n], p[done:])
		done += int(n)
	})
	return done, err
}

// WriteVec writes bufs one after another from off, as WriteAt would write their join, with
// one copy (a gather write).
func (s *Sink) WriteVec(bufs [][]byte, off int64) (int, error) {
	var n int64
	for _, b := range bufs {
		n += int64(len(b))
	}
	i, j, done := 0, 0, 0 // bufs[i][j:] is next
	err := s.deliver(off, n, func(buf []byte, at, c int64) {
		dst := buf[at : at+c]
		for len(dst) > 0 {
			k := copy(dst, bufs[i][j:])
			dst, j, done = dst[k:], j+k, done+k
			if j == len(bufs[i]) {
				i, j = i+1, 0
			}
		}
	})
	return done, err
}

// Zero declares [off, off+n) zero bytes.
func (s *Sink) Zero(off, n int64) error { return s.deliver(off, n, nil) }

// deliver hands [off, off+n) part by part to fill (which copies the bytes into the part's
// buffer at at; nil for zeros, which deliver clears) and counts them.
func (s *Sink) deliver(off, n int64, fill func(buf []byte, at, n int64)) error {
	if off < 0 || n < 0 || off+n > s.sched.maxSize() {
		return fmt.Errorf("%s %s: %w: [%d, %d)", s.opt.Verb, s.name, ErrTooLarge, off, off+n)
	}
	for n > 0 {
		k := s.sched.locate(off)
		start, size := s.sched.bounds(k)
		c := min(n, start+size-off)
		q, err := s.acquire(k, size)
		if err != nil {
			return err
		}
		if fill != nil {
			fill(q.buf, off-start, c)
		} else {
			clear(q.buf[off-start : off-start+c])
		}
		if err := s.count(k, q, c); err != nil {
			return err
		}
		off, n = off+c, n-c
	}
	return nil
}

// acquire returns part k with its buffer, creating it when the window and the budget allow
// and waiting otherwise.
func (s *Sink) acquire(k int, size int64) (*part, error) {
	s.mu.Lock()
	for {
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return nil, err
		}
		if q := s.parts[k]; q != nil {
			started := q.started
			s.mu.Unlock()
			if started {
				return nil, s.fail(fmt.Errorf("%s %s: %w: part %d was complete", s.opt.Verb, s.name, ErrOverlap, k))
			}
			<-q.ready
			return q, nil
		}
		if s.isDone(k) {
			s.mu.Unlock()
			return nil, s.fail(fmt.Errorf("%s %s: %w: part %d was complete", s.opt.Verb, s.name, ErrOverlap, k))
		}
		q := &part{size: size, ready: make(chan struct{})}
		var reuse []byte
		switch {
		case k == 1 || k == s.straddle:
		case k < s.first || k < s.low+s.opt.Buffers:
			for len(s.free) > 0 && reuse == nil {
				b := s.free[len(s.free)-1]
				s.free = s.free[:len(s.free)-1]
				if int64(cap(b)) >= size {
					reuse = b
				} else {
					s.bufs--
					s.held -= int64(cap(b))
				}
			}
			if reuse == nil && s.bufs >= s.opt.Buffers {
				s.cond.Wait()
				continue
			}
			if reuse == nil {
				s.bufs++
			}
			q.counted = true
		default:
			s.cond.Wait()
			continue
		}
		if reuse == nil {
			s.held += size
			s.peak = max(s.peak, s.held)
		}
		s.parts[k] = q
		s.mu.Unlock()
		if reuse != nil {
			// Not cleared: every byte of a part is delivered before it is sent, zeros
			// by Zero, which writes them.
			q.buf = reuse[:size]
		} else {
			q.buf = make([]byte, size)
		}
		close(q.ready)
		return q, nil
	}
}

// count adds n delivered bytes to part k and starts its upload when it is complete.
func (s *Sink) count(k int, q *part, n int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	q.have += n
	if q.have > q.size {
		return s.failLocked(fmt.Errorf("%s %s: %w: part %d got %d bytes for %d", s.opt.Verb, s.name, ErrOverlap, k, q.have, q.size))
	}
	if q.have == q.size && k != 1 {
		s.startLocked(k, q, q.size)
	}
	return nil
}

func (s *Sink) isDone(k int) bool { return s.done[k/64]&(1<<(k%64)) != 0 }

// startLocked starts the upload of the first n bytes of part k.
func (s *Sink) startLocked(k int, q *part, n int64) {
	q.started = true
	s.done[k/64] |= 1 << (k % 64)
	for s.low <= s.opt.MaxParts && s.isDone(s.low) {
		s.low++
	}
	s.cond.Broadcast()
	data := q.buf[:n]
	s.g.Go(func() error {
		err := s.u.UploadPart(s.ctx, k, data)
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			s.failLocked(fmt.Errorf("%s part %d of %s: %w", s.opt.Verb, k, s.name, err))
		} else {
			s.finished[k/64] |= 1 << (k % 64)
		}
		delete(s.parts, k)
		if q.counted {
			s.free = append(s.free, q.buf[:0])
		} else {
			s.held -= int64(cap(q.buf))
		}
		q.buf = nil
		s.uploaded++
		s.cond.Broadcast()
		return nil
	})
}

func (s *Sink) fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failLocked(err)
}

// failLocked records the first error, cancels the uploads and wakes every waiting writer.
func (s *Sink) failLocked(err error) error {
	if s.err == nil {
		s.err = err
		s.stop()
		s.cancel()
	}
	s.cond.Broadcast()
	return s.err
}

// Commit uploads the parts still held (the last one, the straddling one), waits for every
// upload, uploads part 1 and completes the upload: the object of size bytes appears. It
// fails, and aborts the upload, unless every byte of [0, size) was delivered exactly once.
func (s *Sink) Commit(size int64) error {
	s.mu.Lock()
	if s.state != 0 {
		s.mu.Unlock()
		return ErrClosed
	}
	s.state = 1
	err := s.err
	var head []byte
	if err == nil {
		head, err = s.finalLocked(size)
		if err != nil {
			s.failLocked(err)
		}
	}
	s.mu.Unlock()
	s.g.Wait()
	if err == nil {
		s.mu.Lock()
		err = s.err
		s.mu.Unlock()
	}
	if err == nil {
		if err = s.u.UploadPart(s.ctx, 1, head); err != nil {
			err = fmt.Errorf("%s part 1 of %s: %w", s.opt.Verb, s.name, err)
		}
	}
	if err == nil {
		if err = s.u.Complete(s.ctx); err != nil {
			err = fmt.Errorf("complete the upload of %s: %w", s.name, err)
		}
	}
	s.mu.Lock()
	s.state = 2
	s.free, s.parts = nil, nil
	s.mu.Unlock()
	if err != nil {
		s.abortUpload()
		return err
	}
	s.stop()
	s.cancel()
	return nil
}

// finalLocked checks that [0, size) was delivered, starts the uploads of the parts still
// held and returns part 1's bytes.
func (s *Sink) finalLocked(size int64) ([]byte, error) {
	if size < 0 || size > s.sched.maxSize() {
		return nil, fmt.Errorf("%s %s: %w: %d bytes", s.opt.Verb, s.name, ErrTooLarge, size)
	}
	last := 1
	if size > 0 {
		last = s.sched.locate(size - 1)
	}
	var head []byte
	for k, q := range s.parts {
		start, _ := s.sched.bounds(k)
		want := min(q.size, size-start)
		if k > last || q.have != want {
			return nil, fmt.Errorf("%s %s: %w: part %d (offset %d) has %d of its %d bytes", s.opt.Verb, s.name, ErrMissing, k, start, q.have, max(want, 0))
		}
		if k == 1 {
			<-q.ready
			head = q.buf[:want]
			continue
		}
		if !q.started {
			s.startLocked(k, q, want)
		}
	}
	if head == nil && size > 0 {
		return nil, fmt.Errorf("%s %s: %w: part 1", s.opt.Verb, s.name, ErrMissing)
	}
	for k := 2; k <= last; k++ {
		if !s.isDone(k) {
			start, _ := s.sched.bounds(k)
			return nil, fmt.Errorf("%s %s: %w: part %d (offset %d)", s.opt.Verb, s.name, ErrMissing, k, start)
		}
	}
	if head == nil {
		head = []byte{}
	}
	return head, nil
}

// Abort cancels the uploads in flight, waits for them and aborts the upload (once). It is
// safe at any time and more than once; after Commit it does nothing (a failed Commit has
// aborted already), and during Commit it makes Commit fail and abort.
func (s *Sink) Abort() error {
	s.mu.Lock()
	state := s.state
	if state != 2 {
		s.failLocked(fmt.Errorf("%s %s: %w", s.opt.Verb, s.name, ErrAborted))
	}
	if state == 0 {
		s.state = 2
	}
	s.mu.Unlock()
	if state == 0 {
		return s.abortUpload()
	}
	return nil
}

// abortUpload aborts the upload exactly once.
func (s *Sink) abortUpload() error {
	s.abortOnce.Do(func() {
		s.stop()
		s.cancel()
		s.g.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), s.opt.AbortTimeout)
		defer cancel()
		if err := s.u.Abort(ctx); err != nil {
			s.abortErr = fmt.Errorf("abort the upload of %s: %w", s.name, err)
		}
		s.mu.Lock()
		s.free, s.parts = nil, nil
		s.mu.Unlock()
	})
	return s.abortErr
}
