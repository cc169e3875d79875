package pagewriter

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mldf/convert/pagewriter/multipart"
	"golang.org/x/sync/errgroup"
)

// A Sink receives the bytes of one output by offset and publishes them as a whole. Every
// byte of [0, size) reaches it exactly once before Commit: as data by WriteAt, or as zeros by
// Zero. So a sink knows a byte range is final once every byte of it was delivered, whatever
// order the writers ran in (docs/WRITER.md, "Sinks").
type Sink interface {
	// WriteAt writes p at off. Calls run concurrently, on disjoint ranges.
	WriteAt(p []byte, off int64) (int, error)
	// Zero declares that [off, off+n) holds zeros and will not be written.
	Zero(off, n int64) error
	// Commit publishes the output of size bytes: it appears at the target, or on error
	// nothing does (and the sink is aborted).
	Commit(size int64) error
	// Abort discards the output. It is safe at any time, more than once, and after Commit
	// (when it does nothing).
	Abort() error
	// Name names the target in messages (a path or a URL).
	Name() string
	// ScratchDir is where the writer keeps its spill files.
	ScratchDir() string
}

// SinkLayout tells a sink, as it opens, which bytes come while the run goes: those at and
// after Stream (the data region), each batch's range in increasing offset order and batches
// in parallel. The bytes before Stream, and the tables, come from the finalizer, in
// increasing offset order except the header.
type SinkLayout struct {
	Stream int64
}

// A SinkOpener opens the sink of one output once the container's layout is known:
// LocalFile, Multipart.
type SinkOpener func(SinkLayout) (Sink, error)

// FileOptions configure a local file sink.
type FileOptions struct {
	// Wrap, when set, wraps the output file (role "output"; fault injection in tests).
	Wrap WrapFunc
	// Preallocate reserves disk space ahead of the writes (fallocate, 64 MiB at a time), so a
	// full disk shows early. Off by default: it did not speed up writes on ext4 here.
	Preallocate bool
	// Named uses a named temporary file even where O_TMPFILE works (tests).
	Named bool
	// NoDirect writes through the page cache even where the file system takes direct
	// writes (O_DIRECT, Linux; see directSink), which are used by default when neither
	// Wrap nor Preallocate is set. The write-behind below is the buffered sink's.
	NoDirect bool
	// NoWriteBehind turns off the write-behind: by default, every writeBehindStep bytes
	// written, the sink asks the kernel to start writing the file's dirty pages to disk
	// (sync_file_range SYNC_FILE_RANGE_WRITE, Linux), and every syncBehindStep bytes it
	// makes them durable (fdatasync), both on a goroutine of its own that no writer waits
	// for, so the disk and its cache flushes work while the run computes and the final
	// fsync has little left to do.
	NoWriteBehind bool
	// Partial makes the temporary file a named one that survives a crash,
	// ".BASE.partial" beside the target (a resumable run, see Partial), reopened when it
	// exists and cut to Keep bytes (0: started empty).
	Partial bool
	Keep    int64
	// syncData replaces fdatasync in the write-behind (tests).
	syncData func(fd uintptr) error
}

// LocalFile opens path as a sink: an Output (a temporary file beside path, renamed onto it
// by Commit), written by parts with direct I/O where the file system takes it (see
// FileOptions.NoDirect), else through the page cache. The spill files go beside it.
func LocalFile(path string, opt FileOptions) SinkOpener {
	return func(l SinkLayout) (Sink, error) {
		var o *Output
		var err error
		if opt.Partial {
			o, err = createPartialOutput(path, opt.Wrap, opt.Keep)
		} else {
			o, err = createOutput(path, opt.Wrap, opt.Named)
		}
		if err != nil {
			return nil, err
		}
		if !opt.NoDirect && opt.Wrap == nil && !opt.Preallocate {
			ds, err := newDirectSink(o, l, opt.Keep)
			if err != nil {
				if opt.Partial {
					o.af.Keep(o.File.Close) // the next run may resume from it
				} else {
					o.Abort()
				}
				return nil, err
			}
			if ds != nil {
				return ds, nil
			}
		}
		s := &fileSink{o: o, pre: opt.Preallocate, behind: !opt.NoWriteBehind}
		if s.behind {
			sync := opt.syncData
			if sync == nil {
				sync = syncData
			}
			s.startBehind(sync)
		}
		return s, nil
	}
}

// preallocStep is how far ahead of the highest write disk space is reserved.
const preallocStep = 64 << 20

// writeBehindStep is the volume of writes after which the write-behind starts the writeback
// of the file's dirty pages; syncBehindStep the volume after which it makes them durable.
// On this project's machine (a virtio disk) the final fsync of a 456 MB output spent
// 0.25-0.4 s in the device's cache flush, after the data had been written back; syncing
// every 32 MiB on the way took a 500 MB JSONL run from 1.20-1.26 s to 1.01-1.07 s.
const (
	writeBehindStep = 8 << 20
	syncBehindStep  = 32 << 20
)

// fileSink is a local file: positional writes to an Output; Zero does nothing (the file is
// new, so an unwritten byte reads as zero).
type fileSink struct {
	o        *Output
	pre      bool
	reserved atomic.Int64 // end of the preallocated space
	noPre    atomic.Bool
	behind   bool
	dirty    atomic.Int64 // bytes written since the last write-behind
	total    atomic.Int64 // bytes written
	iovs     sync.Pool    // pwritev's lists of buffers, reused
	// The write-behind runs on a goroutine of g, so that no writer waits for it: kick (one
	// slot) asks it to work, quit stops it. behindErr is its first fdatasync error, read
	// after g.Wait: fsync reports a write-back error once per open file, so an error the
	// write-behind saw must fail the commit itself.
	kick, quit chan struct{}
	stop       sync.Once
	g          errgroup.Group
	behindErr  error
}

// startBehind starts the write-behind goroutine; stopBehind stops it and waits for it.
func (s *fileSink) startBehind(syncData func(uintptr) error) {
	s.kick, s.quit = make(chan struct{}, 1), make(chan struct{})
	fd := s.o.Fd()
	s.g.Go(func() error {
		var synced int64
		for {
			select {
			case <-s.kick:
			case <-s.quit:
				return nil
			}
			startWriteback(fd)
			if t := s.total.Load(); t-synced >= syncBehindStep && s.behindErr == nil {
				synced = t
				s.behindErr = syncData(fd)
			}
		}
	})
}

func (s *fileSink) stopBehind() error {
	if s.quit == nil {
		return nil
	}
	s.stop.Do(func() { close(s.quit) })
	s.g.Wait()
	return s.behindErr
}

func (s *fileSink) WriteAt(p []byte, off int64) (int, error) {
	if s.pre && !s.noPre.Load() {
		if err := s.reserve(off + int64(len(p))); err != nil {
			return 0, err
		}
	}
	n, err := s.o.WriteAt(p, off)
	s.wrote(n)
	return n, err
}

// vectored implements vectorWriter: the file takes gather writes where the system has
// pwritev and the file is not wrapped (a wrapper sees every byte through WriteAt).
func (s *fileSink) vectored() bool { return haveWritev && s.o.File == File(s.o.osFile()) }

// writev implements vectorWriter with pwritev.
func (s *fileSink) writev(bufs [][]byte, off int64) (int, error) {
	var size int64
	for _, b := range bufs {
		size += int64(len(b))
	}
	if s.pre && !s.noPre.Load() {
		if err := s.reserve(off + size); err != nil {
			return 0, err
		}
	}
	n, err := pwritev(s.o.osFile(), bufs, off, &s.iovs)
	s.wrote(n)
	if err != nil {
		err = &fs.PathError{Op: "write", Path: s.o.TempPath(), Err: err}
	}
	return n, err
}

// wrote counts n bytes written for the write-behind.
func (s *fileSink) wrote(n int) {
	if !s.behind {
		return
	}
	s.total.Add(int64(n))
	if s.dirty.Add(int64(n)) >= writeBehindStep && s.dirty.Swap(0) >= writeBehindStep {
		// The writeback is of the whole file (writers work on disjoint ranges in any order);
		// a kick already waiting stands for this one too.
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

// reserve preallocates up to a step beyond end when end passes the reserved space; of
// concurrent writers, the one that moves the mark reserves the space.
func (s *fileSink) reserve(end int64) error {
	for {
		r := s.reserved.Load()
		if end <= r {
			return nil
		}
		to := alignUp(end, preallocStep) + preallocStep
		if !s.reserved.CompareAndSwap(r, to) {
			continue
		}
		ok, err := preallocate(s.o.Fd(), r, to-r)
		if err != nil {
			return fmt.Errorf("reserve space in %s: %w", s.o.TempPath(), err)
		}
		if !ok {
			s.noPre.Store(true)
		}
		return nil
	}
}

func (s *fileSink) Zero(off, n int64) error { return nil }

func (s *fileSink) Commit(size int64) error {
	if err := s.stopBehind(); err != nil {
		s.o.Abort()
		return fmt.Errorf("write %s: %w", s.o.TempPath(), err)
	}
	if err := s.o.Truncate(size); err != nil {
		s.o.Abort()
		return fmt.Errorf("size %s: %w", s.o.TempPath(), err)
	}
	return s.o.Commit()
}

func (s *fileSink) Abort() error {
	s.stopBehind()
	return s.o.Abort()
}

func (s *fileSink) Name() string       { return s.o.Target() }
func (s *fileSink) ScratchDir() string { return dirOf(s.o.Target()) }

// copyToSink copies n bytes of src from 0 to dst at off: in the kernel (copy_file_range)
// into an unwrapped local file, else through a buffer.
func copyToSink(dst Sink, src *Spill, off, n int64) error {
	var done int64
	if fs, ok := dst.(*fileSink); ok {
		out, ok1 := fs.o.File.(*os.File)
		in, ok2 := src.File.(*os.File)
		if ok1 && ok2 {
			var err error
			if done, _, err = CopyFileRange(int(in.Fd()), 0, int(out.Fd()), off, n); err != nil {
				return err
			}
		}
	}
	buf := make([]byte, min(n-done, 4*copyBuf))
	for done < n {
		b := buf[:min(int64(len(buf)), n-done)]
		if _, err := src.ReadAt(b, done); err != nil {
			return fmt.Errorf("read data scratch at %d: %w", done, err)
		}
		if _, err := dst.WriteAt(b, off+done); err != nil {
			return err
		}
		done += int64(len(b))
	}
	return nil
}

// Multipart opens a multipart upload as a sink: start begins the upload (it is called only
// when the writer opens the sink, after the container was checked), and name (the object's
// URL) is used in messages. When ctx ends (the run's context: SIGINT, SIGTERM) the sink
// fails, waking writers that wait for a buffer, and the run aborts the upload. See package
// multipart for the part sizes and the memory bound.
func Multipart(ctx context.Context, name string, start func() (multipart.Uploader, error), opt multipart.Options) SinkOpener {
	return func(l SinkLayout) (Sink, error) {
		if err := opt.Check(); err != nil {
			return nil, fmt.Errorf("upload %s: %w", name, err)
		}
		u, err := start()
		if err != nil {
			return nil, fmt.Errorf("start the upload of %s: %w", name, err)
		}
		s, err := multipart.New(ctx, u, name, l.Stream, opt)
		if err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			u.Abort(ctx)
			return nil, err
		}
		return s, nil
	}
}
