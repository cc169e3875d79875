package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"unsafe"
)

// A local uncompressed file is read through a memory mapping, not with read calls, on the
// systems that have them (mmap_unix.go): the parsers read the lines where the kernel keeps
// the file, without the copy into read buffers (that copy was 3-9% of the CPU of a real-text
// conversion; the run takes about 3-4% less, docs/PERFORMANCE.md).
//
// The file is mapped in windows of defaultMapWindow bytes. A window starts at the page
// holding the first byte not yet sent; the lines wholly inside it are cut into pieces as read
// buffers are (sendLines), and the incomplete line at its end starts the next window. A window
// is a block: it is unmapped when its last piece is parsed, so what is mapped at once is
// bounded like the read buffers (by Run's budget, or by the consumer of RunBatches), whatever
// the file size. A line longer than a window grows it, up to MaxLineSize and a page; a longer
// one is a tooLong piece, and the rest of it is skipped, as the read path does. The byte order
// mark, the last line without a newline and the line numbers are as on the read path. The
// kernel is asked to read each window and the next ahead (prefetch). When a window cannot be
// mapped, the rest of the file is read with read calls; so is a resumed run's first file.
//
// A mapped file that shrinks while it is read (truncated by another process) raises a fault
// on the pages past its new end. The reader and the parsers read mapped bytes with
// debug.SetPanicOnFault set, so the fault becomes an error, not a crash: ErrChanged naming
// the file and the line. One seen by a parser also stops the reader (bufPool.fault).

// ErrChanged means that a file shrank while it was read through a mapping.
var ErrChanged = errors.New("the file changed while it was read (truncated?)")

// defaultMapWindow is the size of a mapping window, beyond the page it starts in. The CPU
// time of the real-text conversion did not measurably differ between windows of 8, 16 and
// 32 MiB; its peak RSS (mapped pages count) did: 95, 110 and 142 MB (read path: 98 MB).
const defaultMapWindow = 8 << 20

// mapInput returns the file to map for the input stream rc: the local regular file it reads
// (objstore.Reader.File), when it is not empty and does not start with a gzip or zstd magic
// number. It returns nil for any other input, which is then read as a stream. rc keeps the
// file: closing rc closes it.
func (s *Source) mapInput(rc io.Reader) (*os.File, int64) {
	if !canMap || s.opt.noMap {
		return nil, 0
	}
	fr, ok := rc.(interface{ File() *os.File })
	if !ok {
		return nil, 0
	}
	f := fr.File()
	if f == nil {
		return nil, 0
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() <= 0 {
		return nil, 0
	}
	var magic [4]byte
	n, _ := f.ReadAt(magic[:], 0)
	if m := magic[:n]; len(m) >= 2 && m[0] == 0x1f && m[1] == 0x8b || bytes.Equal(m, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		return nil, 0
	}
	return f, st.Size()
}

// readInput cuts the input name, whose stream rc is, into pieces of whole lines and passes
// them to send in order: through a mapping when mapInput takes it, else from rc. When a window
// cannot be mapped (mmap fails), the rest of the file is read with read calls.
func (s *Source) readInput(ctx context.Context, name string, rc io.ReadCloser, pool *bufPool, send func(*chunk) error) error {
	f, size := s.mapInput(rc)
	if f == nil {
		return s.readFile(ctx, name, rc, pool, send)
	}
	defer rc.Close()
	r := &mapReader{s: s, f: f, path: name, size: size, pool: pool, send: send, line: 1}
	err := r.run(ctx)
	if err == nil && s.opt.hook != nil {
		s.opt.hook("end")
	}
	if errors.Is(err, errNoMap) {
		// Nothing from r.off on was sent; no byte order mark or compression is left there.
		return s.readLines(ctx, name, io.NewSectionReader(f, r.off, math.MaxInt64-r.off), r.line, pool, send)
	}
	return err
}

// errNoMap means that a window could not be mapped.
var errNoMap = errors.New("jsonl: cannot map")

// mapReader cuts one mapped file into pieces.
type mapReader struct {
	s     *Source
	f     *os.File
	path  string
	size  int64 // the file's size, as last seen
	pool  *bufPool
	send  func(*chunk) error
	off   int64 // the first byte not yet sent
	line  int64 // its line number
	ahead int64 // the end of what prefetch was asked for
}

func (r *mapReader) changed() error {
	return fmt.Errorf("jsonl: %s: read error after line %d: %w", r.path, r.line-1, ErrChanged)
}

// mapAt maps n bytes of the file from start, a multiple of the page size.
func (r *mapReader) mapAt(start int64, n int64) ([]byte, error) {
	if int64(int(n)) != n {
		return nil, fmt.Errorf("jsonl: %s: a window of %d bytes cannot be mapped", r.path, n)
	}
	var mem []byte
	var err error
	if r.s.opt.mapErr != nil {
		err = r.s.opt.mapErr(start)
	}
	if err == nil {
		mem, err = mapRange(r.f, start, int(n))
	}
	if err != nil {
		return nil, errNoMap
	}
	// Ask for the window and as much again ahead, each byte once (see prefetch).
	if end := start + 2*n; end > r.ahead {
		from := max(start, r.ahead)
		prefetch(r.f, from, end-from)
		r.ahead = end
	}
	return mem, nil
}

// restat updates the size from the file: a file that grew is read on (as a stream would
// be); one that shrank is ErrChanged.
func (r *mapReader) restat() error {
	st, err := r.f.Stat()
	if err != nil {
		return fmt.Errorf("jsonl: %s: read error after line %d: %w", r.path, r.line-1, err)
	}
	if st.Size() < r.size {
		return r.changed()
	}
	r.size = st.Size()
	return nil
}

func (r *mapReader) run(ctx context.Context) error {
	s := r.s
	page := int64(os.Getpagesize())
	win := int64(s.opt.mapWindow)
	if win <= 0 {
		win = defaultMapWindow
	}
	maxLine := int64(s.opt.MaxLineSize)
	if r.size >= 3 {
		var head [3]byte
		if n, _ := r.f.ReadAt(head[:], 0); n == 3 && bytes.Equal(head[:], bom) {
			r.off = 3
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.pool.faultErr(); err != nil {
			return err
		}
		if r.off >= r.size {
			if err := r.restat(); err != nil || r.off >= r.size {
				return err
			}
		}
		start := r.off &^ (page - 1)
		lead := r.off - start // bytes of the window before off
		dataLen := min(win, r.size-r.off)
		known := int64(0) // bytes from off known to hold no newline
		for {
			mem, err := r.mapAt(start, lead+dataLen)
			if err != nil {
				return err
			}
			if s.opt.hook != nil {
				s.opt.hook("mapped")
			}
			data := mem[lead:]
			last, first := -1, -1 // the last newline in data; the first, when known > 0
			if err := guard(mem, func() {
				if last = bytes.LastIndexByte(data[known:], '\n'); last >= 0 {
					last += int(known)
					if known > 0 {
						first = int(known) + bytes.IndexByte(data[known:], '\n')
					}
				}
			}); err != nil {
				unmap(mem)
				return r.changed()
			}
			if err := r.restat(); err != nil {
				unmap(mem)
				return err
			}
			atEnd := r.off+dataLen >= r.size
			switch {
			case first > int(maxLine):
				// The line that did not fit a window ends past the limit: drop it.
				unmap(mem)
				if err := r.tooLong(); err != nil {
					return err
				}
				r.off += int64(first) + 1
				r.line++
			case last >= 0 || atEnd && dataLen <= maxLine:
				// Whole lines (and at the end, the last line without a newline).
				end := last + 1
				if atEnd {
					end = len(data)
				}
				blk := &block{buf: mem, mapped: true}
				blk.cleanup = runtime.AddCleanup(blk, unmap, mem)
				line, err := r.s.sendLines(r.path, blk, data[:end], r.line, r.pool, r.send)
				if err != nil {
					return err
				}
				r.off, r.line = r.off+int64(end), line
			case atEnd || dataLen > maxLine:
				// No newline within the limit: the line is too long; skip the rest of it.
				unmap(mem)
				found, err := r.skipLine(ctx, r.off+dataLen, page, win)
				if err != nil {
					return err
				}
				if err := r.tooLong(); err != nil {
					return err
				}
				if found < 0 {
					return nil
				}
				r.off, r.line = found+1, r.line+1
			default:
				// The line goes on past the window: map a larger one.
				unmap(mem)
				known = dataLen
				dataLen = min(2*dataLen, maxLine+1, r.size-r.off)
				continue
			}
			break
		}
	}
}

// tooLong sends the piece of an overlong line.
func (r *mapReader) tooLong() error {
	if err := r.pool.faultErr(); err != nil {
		return err
	}
	return r.send(&chunk{file: r.path, line: r.line, tooLong: true})
}

// skipLine finds the first newline from pos on, mapping windows of the file in turn and
// unmapping each once searched; it returns its offset, or -1 when the file ends first.
func (r *mapReader) skipLine(ctx context.Context, pos, page, win int64) (int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return -1, err
		}
		if pos >= r.size {
			if err := r.restat(); err != nil {
				return -1, err
			}
			if pos >= r.size {
				return -1, nil
			}
		}
		start := pos &^ (page - 1)
		n := min(pos-start+win, r.size-start)
		mem, err := r.mapAt(start, n)
		if err != nil {
			return -1, err
		}
		k := -1
		err = guard(mem, func() { k = bytes.IndexByte(mem[pos-start:], '\n') })
		unmap(mem)
		if err != nil {
			return -1, fmt.Errorf("jsonl: %s: read error in line %d: %w", r.path, r.line, ErrChanged)
		}
		if k >= 0 {
			return pos + int64(k), nil
		}
		pos = start + n
	}
}

// guard runs fn, which reads the mapping mem, turning a fault on mem (the file shrank under
// it) into ErrChanged. Any other panic goes on.
func guard(mem []byte, fn func()) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if p := recover(); p != nil {
			if !faultIn(p, mem) {
				panic(p)
			}
			err = ErrChanged
		}
	}()
	fn()
	return nil
}

// faultIn reports whether p, a recovered panic, is a memory fault (with SetPanicOnFault) at an
// address of the mapping mem.
func faultIn(p any, mem []byte) bool {
	re, ok := p.(interface {
		error
		Addr() uintptr
	})
	if !ok || len(mem) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	page := uintptr(os.Getpagesize())
	hi := lo + (uintptr(len(mem))+page-1)&^(page-1)
	a := re.Addr()
	return a >= lo && a < hi
}
