// Package jsonl streams JSON Lines files (plain, gzip or zstd) as samples, one per non-blank
// line, extracting the configured columns by dotted key path. Lines are parsed in parallel
// chunks cut at line boundaries and emitted in line order, with bounded memory.
//
// One reader goroutine decompresses (when needed) and cuts the stream into chunks of whole
// lines (ChunkSize, 4 MiB by default), counting newlines so every chunk knows its first line
// number; Workers goroutines parse chunks; the caller's goroutine emits the samples chunk by
// chunk in order. The samples, their order, keys and errors depend only on the input, never
// on the worker count or the chunk size. A read buffer is handed to the parsers in pieces of
// about 1 MiB and at most ChunkLines lines, so a buffer of tiny lines does not become one
// huge batch of samples. What is in flight, read or parsed, is bounded by a weighted semaphore
// (2 × (Workers + 1) × ChunkSize, or one overlong line): a piece weighs its bytes plus the
// estimated size of its parsed samples, and holds its weight until its last sample is
// emitted. A local uncompressed file is not read but mapped, in windows that play the read
// buffers' part (mmap.go): the lines are parsed where the kernel keeps the file, without a
// copy. Read buffers are recycled, and a piece's samples share a few allocations (one
// slice of samples, one of columns, the value bytes and origins in 256 KiB blocks): memory
// does not grow with the file, and allocations grow with the pieces, not the lines.
//
// Source is also a sources.BatchSource: RunBatches reads and cuts the same pieces on the
// caller's goroutine and hands them out unparsed, and each piece's Decode parses it into the
// consumer's sources.Memory, reusing its slices and blocks. The pipeline decodes them on its
// workers and reuses a chunk's memory once the chunk is written, so a long run allocates
// almost nothing per piece.
//
// Each line is validated completely (RFC 8259 JSON, UTF-8 everywhere, nesting at most 10000)
// in one pass by a small scanner that records where the wanted values lie and skips the
// rest; only the wanted values are decoded (BenchmarkExtract against BenchmarkEncodingJSON:
// about a quarter of the CPU per byte of encoding/json).
//
// Lines up to MaxLineSize (256 MiB by default) are accepted: a 50 MB line is ordinary in
// scraped corpora. A longer line costs at most MaxLineSize + ChunkSize of buffer while it is
// detected, is then skipped without being held, and becomes a per-line ErrLineTooLong; the
// limit exists so that a file with no newline at all (a binary file, a JSON array on one line
// of 10 GB) is an error instead of an out-of-memory kill. Peak memory for a line near the
// limit is about three times its size (the line, the decoded value, the encoder's output).
package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"unsafe"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// Defaults of Options.
const (
	// DefaultMaxLineSize is the longest line accepted (256 MiB). A longer line becomes a
	// per-line ErrLineTooLong error; it is skipped without being held in memory.
	DefaultMaxLineSize = 256 << 20
	// DefaultChunkSize is the size of the line-aligned chunks read at once.
	DefaultChunkSize = 4 << 20
	// DefaultChunkLines is the most lines handed to a parser at once: a 4 MiB chunk of
	// 30-byte lines is cut into pieces of this many lines.
	DefaultChunkLines = 4096
)

// Options tune a Source. The zero value is usable.
type Options struct {
	// Workers is the number of parallel parsers of Run; 0 means GOMAXPROCS. The samples and
	// their order do not depend on it. (With RunBatches the consumer's goroutines parse.)
	Workers int
	// MaxLineSize is the longest line accepted, in bytes; 0 means DefaultMaxLineSize.
	MaxLineSize int
	// ChunkSize is the read unit; 0 means DefaultChunkSize.
	ChunkSize int
	// ChunkLines is the most lines one parse unit holds; 0 means DefaultChunkLines.
	ChunkLines int
	// Store reads the files named by URL (s3://, gs://, az://, azblob://) and expands
	// patterns against bucket listings; nil: a client of the Source's own.
	Store *objstore.Client
	// Prefetch is how many files in a bucket are opened (first blocks fetched) ahead of the
	// one being read; 0 means sources.DefaultPrefetch.
	Prefetch int

	// For tests: read local files as streams, not through a mapping (noMap); the size of a
	// mapping window (0: defaultMapWindow); a func called with "mapped" once a window is
	// mapped, "cut" once its lines are cut, before they are sent, and "end" once a mapped
	// file is read; a func whose error replaces the mapping of the window at offset start.
	noMap     bool
	mapWindow int
	hook      func(event string)
	mapErr    func(start int64) error
}

// Source is a streaming sources.Source over JSONL files.
type Source struct {
	inputs []sources.Input
	ext    *extractor
	opt    Options
}

var (
	_ sources.Sharder     = (*Source)(nil)
	_ sources.BatchSource = (*Source)(nil)
)

// New returns a Source reading the given files or glob patterns in the order given (the files
// of one pattern in lexical order; a file named twice is read once), extracting cols from
// each line. Every pattern must match at least one file, and every file must open (and
// start a valid gzip or zstd stream when it is compressed): New reports the first that does
// not. A named pipe is accepted as an input and checked only when Run reads it; a device, a
// socket or a directory is refused. The compression is recognised by the first bytes, not the name.
//
// Paths may be URLs (s3://, gs://, az://, azblob://, file://): patterns expand with
// objstore's Client.Expand (brace ranges too, and globs against bucket listings), an object
// is checked to exist (and the credentials to work) here, and its stream is checked when
// Run reads it, with the next files fetched ahead (see sources.Streams).
func New(paths []string, cols []Column, opt Options) (*Source, error) {
	ext, err := newExtractor(cols)
	if err != nil {
		return nil, err
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.MaxLineSize <= 0 {
		opt.MaxLineSize = DefaultMaxLineSize
	}
	if opt.ChunkSize <= 0 {
		opt.ChunkSize = DefaultChunkSize
	}
	if opt.ChunkLines <= 0 {
		opt.ChunkLines = DefaultChunkLines
	}
	if opt.Store == nil {
		opt.Store = objstore.New()
	}
	files, err := expand(opt.Store, paths)
	if err != nil {
		return nil, err
	}
	s := &Source{ext: ext, opt: opt}
	for _, a := range files {
		f := a.URL
		// Fail before the run, not an hour into it, when a file cannot be opened or its
		// compressed stream does not start. OpenCheck opens only what is cheap to read again
		// (a local regular file): a named pipe is read once, in Run, and an object is not
		// fetched twice (Expand found it, so it exists and may be read).
		rc, err := opt.Store.OpenCheck(context.Background(), f)
		if err != nil {
			return nil, fmt.Errorf("jsonl: %w", err)
		}
		if rc != nil {
			_, closeFn, err := open(f, rc)
			if err != nil {
				return nil, err
			}
			closeFn()
		}
		s.inputs = append(s.inputs, sources.Input{Path: f, Size: a.Size})
	}
	return s, nil
}

// expand expands each pattern with objstore's Client.Expand (braces, then globs against the
// directory or the bucket listing; literal names must exist), in the order given; a file
// named by two patterns is read once.
func expand(store *objstore.Client, paths []string) ([]objstore.Attrs, error) {
	if len(paths) == 0 {
		return nil, ErrNoFiles
	}
	var out []objstore.Attrs
	seen := map[string]bool{}
	for _, p := range paths {
		found, err := store.Expand(context.Background(), []string{p})
		if errors.Is(err, objstore.ErrPattern) {
			return nil, fmt.Errorf("%w: %w", ErrNoFiles, err)
		}
		if err != nil {
			return nil, fmt.Errorf("jsonl: %w", err)
		}
		for _, a := range found {
			k, err := objstore.Key(a.URL) // one file however its name is spelled
			if err != nil {
				k = a.URL
			}
			if !seen[k] {
				seen[k] = true
				out = append(out, a)
			}
		}
	}
	return out, nil
}

// Inputs implements sources.Lister: the files the source reads, in order, with their sizes
// on disk.
func (s *Source) Inputs() sources.InputList { return sources.Inputs(s.inputs) }

// Range implements sources.Sharder: a source over files lo..hi-1 of s (a contiguous slice
// of Inputs, for sharded runs), with the same columns and options. Its samples are indexed from 0; origins still
// name each file and line.
func (s *Source) Range(lo, hi int) (sources.Source, error) {
	if lo < 0 || hi < lo || hi > len(s.inputs) {
		return nil, fmt.Errorf("%w: [%d, %d) of %d files", ErrRange, lo, hi, len(s.inputs))
	}
	return &Source{inputs: s.inputs[lo:hi:hi], ext: s.ext, opt: s.opt}, nil
}

// Len returns -1: the number of lines is not known before reading them.
func (s *Source) Len() int64 { return -1 }

// chunk is a run of whole lines of one file, parsed by one worker.
type chunk struct {
	file    string
	data    []byte
	blk     *block // the read buffer data lies in, recycled after its last piece is parsed
	line    int64  // number of the first line of data (1-based)
	lines   int    // newlines in data (the last line of a file may have none)
	tooLong bool   // data is empty: line `line` exceeded the limit and was skipped
	tail    bool   // data's last line has no newline (the file's last line)
	err     error  // set by parse: blk is a mapping and the file shrank under data
	weight  int64
	samples []sample.Sample // the parsed lines; on entry to parse, an empty slice to reuse
	done    chan struct{}
	src     *Source
	pool    *bufPool // where blk's buffer goes back
}

// Decode implements sources.Batch: it parses the piece's lines into m, reusing m's buffers
// (RunBatches hands out pieces as batches), and releases the piece's read buffer.
func (c *chunk) Decode(m *sources.Memory) {
	sc, ok := m.Scratch.(*scanner)
	if !ok {
		sc = &scanner{}
		m.Scratch = sc
	}
	c.src.parse(sc, c, m, true)
	c.blk.release(c.pool)
	c.blk = nil
}

// block is a read buffer, or a window mapping a file, shared by the pieces cut from it. refs
// counts the pieces not yet parsed, plus one for the reader while it is cutting.
type block struct {
	buf     []byte
	refs    atomic.Int32
	mapped  bool            // buf is a mapping (mmap.go), unmapped with the last reference
	cleanup runtime.Cleanup // unmaps buf if the pieces are dropped unparsed (a cancelled run)
}

// release drops one reference and recycles the buffer, or unmaps the window, with the last.
func (b *block) release(pool *bufPool) {
	if b == nil || b.refs.Add(-1) != 0 {
		return
	}
	if b.mapped {
		b.cleanup.Stop()
		unmap(b.buf)
		return
	}
	pool.put(b.buf)
}

// sampleCost estimates the heap bytes of one parsed line beyond its values' bytes: the
// sample, its columns and its origin string ("file:line").
func (s *Source) sampleCost(file string) int64 {
	return int64(unsafe.Sizeof(sample.Sample{})) + int64(len(s.ext.cols))*int64(unsafe.Sizeof(sample.Column{})) +
		int64(len(file)) + 12
}

// Run reads the files in order and emits one sample per non-blank line. Read and
// decompression errors (a gzip or zstd checksum mismatch, a truncated stream, a mapped file
// that shrank: ErrChanged) stop the run, naming the file; per-line problems are reported
// through Sample.Err. An input may be a named pipe: cancelling ctx ends the wait for its
// writer.
func (s *Source) Run(ctx context.Context, emit func(sample.Sample) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	budget := int64(2 * (s.opt.Workers + 1) * s.opt.ChunkSize)
	sem := semaphore.NewWeighted(budget)
	work := make(chan *chunk)
	order := make(chan *chunk, 2*(s.opt.Workers+1)+64)
	pool := &bufPool{size: s.opt.ChunkSize, free: make(chan []byte, 2*(s.opt.Workers+1))}

	g.Go(func() error {
		defer close(order)
		defer close(work)
		return s.read(gctx, pool, func(c *chunk) error {
			c.weight = min(int64(len(c.data))+int64(c.lines+1)*s.sampleCost(c.file), budget)
			if err := sem.Acquire(gctx, c.weight); err != nil {
				return err
			}
			c.done = make(chan struct{})
			select {
			case order <- c:
			case <-gctx.Done():
				sem.Release(c.weight)
				return gctx.Err()
			}
			select {
			case work <- c:
			case <-gctx.Done():
				return gctx.Err()
			}
			return nil
		})
	})
	// Emitted samples are copied by the callee, so a piece's slice of samples is reused
	// for a later piece once emitted (samplePool): no allocation, no clearing, per piece.
	samplePool := make(chan []sample.Sample, 2*(s.opt.Workers+1))
	for range s.opt.Workers {
		g.Go(func() error {
			sc := &scanner{}
			for c := range work {
				var m sources.Memory
				select {
				case m.Samples = <-samplePool:
				default:
				}
				s.parse(sc, c, &m, false)
				c.samples = m.Samples
				c.blk.release(pool)
				c.blk = nil
				if c.err != nil {
					return c.err // a mapped file shrank: stop the run
				}
				close(c.done)
			}
			return nil
		})
	}

	var index int64
	emitErr := func() error {
		for c := range order {
			select {
			case <-c.done:
			case <-gctx.Done():
				return nil // the group's error explains
			}
			for i := range c.samples {
				c.samples[i].Index = index
				index++
				if err := emit(c.samples[i]); err != nil {
					return err
				}
				c.samples[i] = sample.Sample{}
			}
			select {
			case samplePool <- c.samples[:0]:
			default:
			}
			c.samples = nil
			sem.Release(c.weight)
		}
		return nil
	}()
	if emitErr != nil {
		cancel()
		_ = g.Wait()
		return emitErr
	}
	return g.Wait()
}

// RunBatches implements sources.BatchSource: it reads the files in order on the caller's
// goroutine and emits their pieces of lines (at most ChunkLines lines, about 1 MiB) unparsed;
// each piece's Decode parses it into the consumer's memory, with the samples, keys, origins
// and errors Run would emit. What is in flight is up to the consumer: emit blocks it. A piece
// of a mapped file that shrank under it decodes to a sample whose error wraps ErrChanged
// (naming the line), and RunBatches returns that error at its next piece; a piece decoded
// after RunBatches returned can only report it through its sample.
func (s *Source) RunBatches(ctx context.Context, emit func(sources.Batch) error) error {
	pool := &bufPool{size: s.opt.ChunkSize, free: make(chan []byte, 2*(s.opt.Workers+1))}
	return s.read(ctx, pool, func(c *chunk) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return emit(c)
	})
}

// read cuts the files, in order, into pieces of whole lines and passes them to send.
func (s *Source) read(ctx context.Context, pool *bufPool, send func(*chunk) error) error {
	names := make([]string, len(s.inputs))
	for i, in := range s.inputs {
		names[i] = in.Path
	}
	streams := sources.OpenStreams(ctx, s.opt.Store, names, s.opt.Prefetch)
	defer streams.Close()
	for range s.inputs {
		rc, name, err := streams.Next()
		if err != nil {
			return fmt.Errorf("jsonl: %w", err)
		}
		if err := s.readInput(ctx, name, rc, pool, func(c *chunk) error {
			c.src, c.pool = s, pool
			return send(c)
		}); err != nil {
			return err
		}
	}
	return pool.faultErr() // a mapped file that shrank under a piece decoded by now
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// skipBOM returns r without a leading UTF-8 byte order mark, read before any chunk so that a
// read size smaller than the mark cannot split it.
func skipBOM(r io.Reader) (io.Reader, error) {
	var head [3]byte
	k, err := io.ReadFull(r, head[:])
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		err = nil
	case err != nil:
		return nil, err
	}
	if k == len(bom) && bytes.Equal(head[:], bom) {
		return r, nil
	}
	return io.MultiReader(bytes.NewReader(head[:k]), r), nil
}

// open returns the decompressed stream of f, the stream of path, chosen by its first bytes
// (gzip 1f 8b, zstd 28 b5 2f fd), not by its name. The returned func closes f.
func open(path string, f io.ReadCloser) (io.Reader, func(), error) {
	br := bufio.NewReaderSize(f, 256<<10)
	magic, _ := br.Peek(4)
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("jsonl: %s: gzip: %w", path, err)
		}
		return zr, func() { zr.Close(); f.Close() }, nil
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("jsonl: %s: zstd: %w", path, err)
		}
		return zr, func() { zr.Close(); f.Close() }, nil
	}
	return br, func() { f.Close() }, nil
}

// bufPool recycles the chunk buffers of one run. A chunk's values are copied out while it
// is parsed, so its buffer is free again as soon as the parse ends. It also keeps the first
// error a parser met on a mapped file that shrank, which stops the reader, and the reader's
// scratch.
type bufPool struct {
	size  int
	free  chan []byte
	fault atomic.Pointer[error]
	cuts  []piece
}

// faultErr returns the error of a mapped file that shrank under a parser, if any.
func (p *bufPool) faultErr() error {
	if e := p.fault.Load(); e != nil {
		return *e
	}
	return nil
}

func (p *bufPool) setFault(err error) { p.fault.CompareAndSwap(nil, &err) }

func (p *bufPool) get() []byte {
	select {
	case b := <-p.free:
		return b
	default:
		return make([]byte, p.size)
	}
}

func (p *bufPool) put(b []byte) {
	if cap(b) != p.size {
		return
	}
	select {
	case p.free <- b[:p.size]:
	default:
	}
}

// readFile cuts path's stream into chunks of whole lines and passes them to send in order.
//
// A line longer than a read buffer is collected in buffers of the read size (segs), not in
// one buffer grown by doubling (which allocates about twice the line, and three times at
// the step that copies it): once its end is found it is joined into one buffer of its size
// (with the rest of the last read); once it is over MaxLineSize it is dropped and the rest of
// it streamed past. So an overlong line costs at most MaxLineSize + ChunkSize of buffers, as
// docs/RECIPES.md says, whatever its length.
func (s *Source) readFile(ctx context.Context, path string, f io.ReadCloser, pool *bufPool, send func(*chunk) error) error {
	r, closeFn, err := open(path, f)
	if err != nil {
		return err
	}
	defer closeFn()
	if r, err = skipBOM(r); err != nil {
		return fmt.Errorf("jsonl: %s: read error in line 1: %w", path, err)
	}
	return s.readLines(ctx, path, r, 1, pool, send)
}

// readLines is readFile after the stream's start: r's lines, the first numbered line.
func (s *Source) readLines(ctx context.Context, path string, r io.Reader, line int64, pool *bufPool, send func(*chunk) error) error {
	var err error
	chunkSize, maxLine := s.opt.ChunkSize, s.opt.MaxLineSize
	// newBuf returns a buffer holding carry (less than a read buffer) at its start, with
	// room to read after it.
	newBuf := func(carry []byte) ([]byte, int) {
		var b []byte
		if len(carry) <= chunkSize/2 {
			b = pool.get()
		} else {
			b = make([]byte, len(carry)+chunkSize)
		}
		return b, copy(b, carry)
	}
	var (
		segs     [][]byte // full buffers holding the start of the current line, in order
		segBytes int      // bytes in segs
	)
	dropSegs := func() {
		for _, sg := range segs {
			pool.put(sg)
		}
		segs, segBytes = nil, 0
	}
	defer dropSegs()
	buf, n := newBuf(nil) // segs, then buf[:n], are the start of the current line
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, rerr := readFull(r, buf[n:])
		n += m
		eof := rerr == io.EOF
		if rerr != nil && !eof {
			return fmt.Errorf("jsonl: %s: read error after line %d: %w", path, line-1, rerr)
		}
		data := buf[:n]
		i := bytes.LastIndexByte(data, '\n')
		if i < 0 && segBytes+n > maxLine {
			// The line is over the limit: drop what is held and skip the rest of it
			// without holding it.
			dropSegs()
			found, rest := false, 0
			if !eof {
				if found, rest, err = discardLine(r, buf); err != nil {
					return fmt.Errorf("jsonl: %s: read error in line %d: %w", path, line, err)
				}
			}
			if err := send(&chunk{file: path, line: line, tooLong: true}); err != nil {
				pool.put(buf)
				return err
			}
			if !found {
				pool.put(buf)
				return nil
			}
			line++
			n = rest // discardLine left the rest of its last read at buf's start
			continue
		}
		if i < 0 && !eof {
			// The line goes on past this buffer: keep it and read into a fresh one.
			segs, segBytes = append(segs, data), segBytes+n
			buf, n = pool.get(), 0
			continue
		}
		if j := bytes.IndexByte(data, '\n'); len(segs) > 0 && j >= 0 && segBytes+j > maxLine {
			// The end of an overlong line is in data: drop it, keep what follows.
			dropSegs()
			if err := send(&chunk{file: path, line: line, tooLong: true}); err != nil {
				pool.put(buf)
				return err
			}
			line++
			n = copy(buf, data[j+1:])
			if eof && n == 0 {
				pool.put(buf)
				return nil
			}
			if !eof {
				continue
			}
			data, i = buf[:n], bytes.LastIndexByte(buf[:n], '\n')
		}
		if len(segs) > 0 {
			// The end of a long line is in data: join it to its start.
			whole := make([]byte, 0, segBytes+n)
			for _, sg := range segs {
				whole = append(whole, sg...)
			}
			whole = append(whole, data...)
			if i >= 0 {
				i += segBytes
			}
			dropSegs()
			pool.put(buf)
			buf, data, n = whole, whole, len(whole)
		}
		if eof {
			if n == 0 {
				pool.put(buf)
				return nil
			}
			_, err := s.sendLines(path, &block{buf: buf}, data, line, pool, send)
			return err
		}
		nb, nn := newBuf(data[i+1:])
		if line, err = s.sendLines(path, &block{buf: buf}, data[:i+1], line, pool, send); err != nil {
			return err
		}
		buf, n = nb, nn
	}
}

// sendLines sends data, whole lines of path starting at line (the last one may lack its
// newline at the end of the file) lying in blk, as pieces of at most ChunkLines lines, in
// order. blk's buffer is recycled (or unmapped) once every piece is parsed. It returns the
// number of the line after data.
func (s *Source) sendLines(path string, blk *block, data []byte, line int64, pool *bufPool, send func(*chunk) error) (int64, error) {
	blk.refs.Store(1) // the reader's own reference, while it cuts
	defer blk.release(pool)
	var cuts []piece
	if blk.mapped {
		// The cuts are found before any piece is sent, so that only this reads the mapping
		// on this goroutine.
		if err := guard(blk.buf, func() { cuts = s.cut(data, pool.cuts[:0]) }); err != nil {
			return line, fmt.Errorf("jsonl: %s: read error after line %d: %w", path, line-1, err)
		}
		if s.opt.hook != nil {
			s.opt.hook("cut")
		}
	} else {
		cuts = s.cut(data, pool.cuts[:0])
	}
	pool.cuts = cuts[:0]
	start := 0
	for _, p := range cuts {
		if err := pool.faultErr(); err != nil {
			return line, err
		}
		blk.refs.Add(1)
		if err := send(&chunk{file: path, data: data[start:p.end], blk: blk, line: line, lines: p.lines, tail: p.tail}); err != nil {
			return line, err
		}
		start, line = p.end, line+int64(p.lines)
	}
	return line, nil
}

// piece is where sendLines cuts data: the end of a piece, its newlines, and whether its last
// line has none.
type piece struct {
	end   int
	lines int
	tail  bool
}

// cut appends to cuts the pieces data is cut into: each ends at the first newline after
// pieceBytes, and holds at most ChunkLines lines.
func (s *Source) cut(data []byte, cuts []piece) []piece {
	limit := s.opt.ChunkLines
	start := 0
	for start < len(data) {
		rest := data[start:]
		end := len(rest)
		if end > pieceBytes {
			if k := bytes.IndexByte(rest[pieceBytes:], '\n'); k >= 0 {
				end = pieceBytes + k + 1
			}
		}
		nl := bytes.Count(rest[:end], []byte{'\n'})
		if nl > limit {
			end, nl = cutLines(rest, limit)
		}
		cuts = append(cuts, piece{end: start + end, lines: nl, tail: rest[end-1] != '\n'})
		start += end
	}
	return cuts
}

// pieceBytes is about the most bytes of lines one parse unit holds: a chunk is cut into
// pieces of about this size (or of ChunkLines lines, if fewer), so the lines are counted in
// one pass and not one by one. Each piece costs a hand-over to a worker, a claim and a
// write of its tables; 1 MiB took 10% less wall time than 256 KiB on real text (long
// lines, 2 workers; 2 MiB gained nothing more) for 15 MB more peak RSS.
const pieceBytes = 1 << 20

// cutLines returns the length of the first k lines of data (k ≥ 1; data holds more than k
// newlines) and k.
func cutLines(data []byte, k int) (int, int) {
	end := 0
	for range k {
		end += bytes.IndexByte(data[end:], '\n') + 1
	}
	return end, k
}

// readFull reads until b is full or the stream ends; it returns io.EOF only at a clean end
// (unlike io.ReadFull, whose io.ErrUnexpectedEOF would hide a truncated gzip stream).
func readFull(r io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// discardLine reads r into buf up to and including the next newline, and moves what follows
// the newline in the last read to the start of buf. It returns whether a newline was found
// before EOF and the length of what follows it.
func discardLine(r io.Reader, buf []byte) (bool, int, error) {
	for {
		n, err := r.Read(buf)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return true, copy(buf, buf[i+1:n]), nil
		}
		if err == io.EOF {
			return false, 0, nil
		}
		if err != nil {
			return false, 0, err
		}
	}
}

// parse turns a chunk's lines into samples, set as m.Samples (whose slice it reuses). The
// samples share one slice of columns and the arena's blocks, which hold the values' bytes and
// the origins: a few allocations per chunk, not per line. With reuse, the columns and the
// blocks are m's, reused from an earlier parse (the caller is done with its samples), and
// none at all are allocated once they have grown; without, they are new (Run emits samples
// whose memory is never reused).
func (s *Source) parse(sc *scanner, c *chunk, m *sources.Memory, reuse bool) {
	samples := m.Samples[:0]
	defer func() { m.Samples = samples }()
	if c.tooLong {
		samples = append(samples, s.errSample(c.file, c.line, 0, "", fmt.Errorf("%w: longer than the limit of %d bytes", ErrLineTooLong, s.opt.MaxLineSize)))
		return
	}
	data := c.data
	n := c.lines + 1 // the last line may lack its newline
	arena := arena{block: min(arenaBlock, len(data))}
	if cap(samples) < n {
		samples = make([]sample.Sample, 0, n)
	}
	var cols []sample.Column
	if reuse {
		arena.reuse = &m.Blocks
		if cap(m.Columns) < n*len(s.ext.cols) {
			m.Columns = make([]sample.Column, 0, n*len(s.ext.cols))
		}
		cols = m.Columns[:0]
	} else {
		cols = make([]sample.Column, 0, n*len(s.ext.cols))
	}
	ln := c.line
	if c.blk != nil && c.blk.mapped {
		// The lines are a mapping of the file: if it shrank, reading them faults. The fault
		// ends the piece with an error for the line it is in (and stops the run).
		old := debug.SetPanicOnFault(true)
		defer func() {
			debug.SetPanicOnFault(old)
			sc.b = nil // the scanner keeps nothing of the mapping
			if p := recover(); p != nil {
				if !faultIn(p, c.blk.buf) {
					panic(p)
				}
				samples = append(samples, s.errSample(c.file, ln, 0, "", ErrChanged))
				c.err = fmt.Errorf("jsonl: %s: read error in line %d: %w", c.file, ln, ErrChanged)
				if c.pool != nil {
					c.pool.setFault(c.err)
				}
				c.data = nil
			}
		}()
	}
	var num lineNum // ln as decimal text
	num.set(ln)
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		var line []byte
		if i < 0 {
			line, data = data, nil
		} else {
			line, data = data[:i], data[i+1:]
		}
		n := int64(len(line)) + 1
		if blank(line) {
			ln++
			num.inc()
			continue
		}
		if len(line) > s.opt.MaxLineSize {
			samples = append(samples, s.errSample(c.file, ln, n, "", fmt.Errorf("%w: %d bytes, longer than the limit of %d", ErrLineTooLong, len(line), s.opt.MaxLineSize)))
			ln++
			num.inc()
			continue
		}
		at := len(cols)
		var key string
		var err error
		cols, key, err = s.ext.extract(sc, line, &arena, cols)
		if err != nil {
			cols = cols[:at]
			samples = append(samples, s.errSample(c.file, ln, n, key, err))
			ln++
			num.inc()
			continue
		}
		// The origin ("file:line") is written into the arena like a value: a string over
		// bytes that stay as they are while the samples live.
		digits := num.text()
		o := arena.space(len(c.file) + 1 + len(digits))
		o = append(append(append(o, c.file...), ':'), digits...)
		o = arena.commit(o)
		origin := unsafe.String(unsafe.SliceData(o), len(o))
		samples = append(samples, sample.Sample{Key: origin, Origin: origin, Values: cols[at:len(cols):len(cols)], InputBytes: n})
		ln++
		num.inc()
	}
	if reuse {
		m.Columns = cols[:0]
	}
	c.data = nil
}

// lineNum is a positive line number as decimal text, counted up in place: a piece's origins
// are written without formatting a number per line.
type lineNum struct {
	buf   [20]byte
	start int // the digits are buf[start:]
}

func (d *lineNum) set(v int64) {
	d.start = len(d.buf) - len(strconv.AppendInt(d.buf[:0], v, 10))
	strconv.AppendInt(d.buf[:d.start], v, 10)
}

func (d *lineNum) inc() {
	for i := len(d.buf) - 1; i >= d.start; i-- {
		if d.buf[i] < '9' {
			d.buf[i]++
			return
		}
		d.buf[i] = '0'
	}
	d.start--
	d.buf[d.start] = '1'
}

func (d *lineNum) text() []byte { return d.buf[d.start:] }

func (s *Source) errSample(file string, line, n int64, key string, err error) sample.Sample {
	origin := file + ":" + strconv.FormatInt(line, 10)
	return sample.Sample{Key: origin, Origin: origin, InputBytes: n,
		Err: &LineError{File: file, Line: line, Key: key, Err: err}}
}

func blank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}
