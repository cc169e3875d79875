package pagewriter

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"sync"

	"github.com/mldf/convert/internal/procs"
	"github.com/mldf/convert/pagewriter/multipart"
)

// A local output is written around the page cache where the file system allows it
// (O_DIRECT, Linux): the bytes are assembled into aligned parts of directPart bytes, in
// memory, as a bucket upload assembles its parts (package multipart: a part is written as
// soon as every byte of it was delivered, part 1 with the header last), and each part goes
// from its buffer to the disk with one positional write. The kernel neither copies the
// output into its cache nor writes it back later, so a durable run costs less CPU (on this
// project's machine the buffered write path, its copy and ext4's delayed allocation took
// 16-18% of the CPU of a JSONL conversion), the final fsync has only the device's cache to
// flush, and a large output does not push the inputs out of the page cache. See
// docs/WRITER.md §3.2.1.

// directPart is the size of a direct sink's parts; directBuffers the part buffers it
// shares (besides part 1 and the part straddling the stream start): memory stays below
// (directBuffers + 2) × directPart, 32 MiB.
const (
	directPart     = 4 << 20
	directBuffers  = 6
	directMaxAlign = 4096 // the largest alignment a direct sink accepts
)

// directSink is a local file written by parts with direct I/O. It implements Sink and
// vectorWriter (a gather write is one copy into the parts).
type directSink struct {
	mp      *multipart.Sink
	o       *Output
	f       *directFile
	out     string // the temporary file's name, for messages
	restore func() // puts GOMAXPROCS back (see spareProcs)
	once    sync.Once
}

// spareProcs gives the run two spare Go processors while the sink is open (internal/procs):
// a goroutine blocked in a part's pwrite keeps its processor until the runtime's sysmon takes
// it back, up to 10 ms later when the program is busy, and each 4 MiB write takes a few
// milliseconds, so without spare processors a core idles through most writes. The real-text
// JSONL job written durably took 1.10 s with GOMAXPROCS 2, 1.05 with 3 and 1.01 with 4 (7
// alternating runs each, medians; docs/PERFORMANCE.md). The buffered sink has no such waits.
func (s *directSink) spareProcs() { s.restore = procs.Spare(runtime.GOMAXPROCS(0)) }

// release puts back what spareProcs changed, once.
func (s *directSink) release() {
	s.once.Do(func() {
		if s.restore != nil {
			s.restore()
		}
	})
}

// directFile writes a direct sink's parts at their offsets. align is the file's alignment
// for direct I/O (offsets, lengths and buffer addresses), at most directMaxAlign.
type directFile struct {
	fd    int
	name  string
	align int
	sched func(k int) (start, size int64)
	mu    sync.Mutex
	// buffered is set once the file system refused a direct write it had announced (EINVAL):
	// the rest goes through the page cache, and the final fsync makes it durable.
	buffered bool
	bounce   []byte // an aligned block for the unaligned end of a checkpoint's range (flush)
}

// UploadPart writes part k at its offset, padded with its buffer's bytes to the
// alignment: bytes past the end of the output are cut off by Commit's truncate.
func (d *directFile) UploadPart(_ context.Context, k int, data []byte) error {
	start, _ := d.sched(k)
	if n := alignUp(int64(len(data)), int64(d.align)); n <= int64(cap(data)) {
		data = data[:n]
	}
	return d.writeAt(data, start)
}

// Complete and Abort have nothing to do: the output's Commit and Abort publish or remove
// the file.
func (d *directFile) Complete(context.Context) error { return nil }
func (d *directFile) Abort(context.Context) error    { return nil }

// flush writes b, the delivered bytes at off (aligned) for a checkpoint: its aligned part
// from where it lies, its last partial block through a zero-padded copy (the bytes after it
// in b's buffer may be changing; on disk they are cut off, or written again, later).
func (d *directFile) flush(off int64, b []byte) error {
	whole := len(b) &^ (d.align - 1)
	if whole > 0 {
		if err := d.writeAt(b[:whole], off); err != nil {
			return err
		}
	}
	if whole == len(b) {
		return nil
	}
	// Checkpoints run one at a time (Writer.Sync is called by one goroutine): the bounce
	// block is not shared.
	clear(d.bounce[copy(d.bounce, b[whole:]):])
	return d.writeAt(d.bounce, off+int64(whole))
}

// alignedBlock returns n bytes at an address aligned to n (a power of two).
func alignedBlock(n int) []byte {
	b := make([]byte, 2*n)
	k := alignPad(b, n)
	return b[k : k+n : k+n]
}

// syncTo makes every streamed byte below cursor durable: the parts held in memory write
// their bytes below it in place, then fdatasync.
func (s *directSink) syncTo(cursor int64) error {
	if err := s.mp.Flush(cursor, s.f.flush); err != nil {
		return err
	}
	if err := s.o.File.Sync(); err != nil {
		return &fs.PathError{Op: "sync", Path: s.out, Err: err}
	}
	return nil
}

func (s *directSink) WriteAt(p []byte, off int64) (int, error) { return s.mp.WriteAt(p, off) }
func (s *directSink) Zero(off, n int64) error                  { return s.mp.Zero(off, n) }
func (s *directSink) vectored() bool                           { return true }
func (s *directSink) writev(bufs [][]byte, off int64) (int, error) {
	return s.mp.WriteVec(bufs, off)
}

// Commit writes the parts still held (part 1, with the header, last), cuts the file to size
// (the last part was padded to the alignment) and publishes it (fsync, rename).
func (s *directSink) Commit(size int64) error {
	defer s.release()
	if err := s.mp.Commit(size); err != nil {
		s.o.Abort()
		return err
	}
	if err := s.o.Truncate(size); err != nil {
		s.o.Abort()
		return fmt.Errorf("size %s: %w", s.out, err)
	}
	return s.o.Commit()
}

func (s *directSink) Abort() error {
	defer s.release()
	s.mp.Abort()
	return s.o.Abort()
}

// suspend stops the sink and keeps its file for a resumed run (Writer.Suspend).
func (s *directSink) suspend() error {
	defer s.release()
	s.mp.Detach()
	return s.o.af.Keep(s.o.File.Close)
}

func (s *directSink) Name() string       { return s.o.Target() }
func (s *directSink) ScratchDir() string { return dirOf(s.o.Target()) }

// directOptions are the part layout of a direct sink: constant parts (no doubling), as many
// as a 16 TiB file needs.
func directOptions(dir string) multipart.Options {
	return multipart.Options{PartSize: directPart, MinPartSize: directMaxAlign, MaxPartSize: directPart,
		MaxParts: 1 << 22, GrowEvery: 1 << 22, Buffers: directBuffers, ScratchDir: dir, Verb: "write"}
}

// newDirectSink makes o, a new or reopened output whose bytes below keep (a resumed run's
// checkpoint, else 0) are in place, a direct sink for layout l; o's descriptor gets
// O_DIRECT. It returns nil, nil when direct I/O does not suit the file (its file system
// has none, or an alignment the layout's stream start does not meet): the caller writes
// through the page cache.
func newDirectSink(o *Output, l SinkLayout, keep int64) (*directSink, error) {
	fd := int(o.Fd())
	align, ok := directAlign(fd)
	if !ok || align > directMaxAlign || l.Stream%int64(align) != 0 {
		return nil, nil
	}
	f := &directFile{fd: fd, name: o.TempPath(), align: align, bounce: alignedBlock(align)}
	s := &directSink{o: o, f: f, out: o.TempPath()}
	opt := directOptions(dirOf(o.Target()))
	var err error
	if keep > 0 {
		s.mp, err = multipart.ResumeTo(context.Background(), f, o.Target(), l.Stream, opt, keep)
	} else {
		s.mp, err = multipart.New(context.Background(), f, o.Target(), l.Stream, opt)
	}
	if err != nil {
		return nil, err
	}
	f.sched = s.mp.PartBounds
	if keep > 0 {
		// The bytes below keep that the parts held in memory need again, read through
		// the page cache before the descriptor turns direct: part 1's and the straddling
		// part's streamed bytes, then those of the part keep lies in.
		r := io.NewSectionReader(o.osFile(), 0, keep)
		err = redeliver(s.mp, r, l.Stream, min(keep, s.mp.FirstStart()))
		if err == nil {
			err = redeliver(s.mp, r, s.mp.ResumeOffset(), keep)
		}
		if err != nil {
			s.mp.Detach()
			return nil, fmt.Errorf("resume %s: %w", s.out, err)
		}
	}
	if !setDirect(fd, true) {
		s.mp.Detach()
		return nil, nil
	}
	s.spareProcs()
	return s, nil
}
