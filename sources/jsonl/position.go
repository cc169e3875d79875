package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// The source continues a run from a line (docs/RESUME.md): each batch RunBatches hands out
// records the place after its last line, as a token naming the file and the line number,
// and Resume skips to it by counting newlines, parsing nothing before it.
var (
	_ sources.Resumer         = (*Source)(nil)
	_ sources.PositionedBatch = (*chunk)(nil)
)

// position is the token of a place in the inputs: the file (as Inputs names it) and the
// number (1-based) of the line that comes next in it.
type position struct {
	File string `json:"file"`
	Line int64  `json:"line"`
}

// After implements sources.PositionedBatch. Call it before the batch is decoded (its lines'
// buffer is recycled then).
func (c *chunk) After() []byte {
	next := c.line + int64(c.lines)
	if c.tooLong || c.tail {
		next++ // an overlong line, or a file's last line without a newline: read too
	}
	b, _ := json.Marshal(position{File: c.file, Line: next})
	return b
}

// Resume implements sources.Resumer: a source over the lines from the token's place on,
// in the token's file and the files after it. samples is not needed (the token says where).
// A token naming no input of s is refused with sources.ErrPosition.
func (s *Source) Resume(_ int64, token []byte) (sources.Source, error) {
	var p position
	if err := json.Unmarshal(token, &p); err != nil || p.Line < 1 {
		return nil, fmt.Errorf("%w: %q", sources.ErrPosition, token)
	}
	for i, in := range s.inputs {
		if in.Path == p.File {
			return &resumed{s: &Source{inputs: s.inputs[i:], ext: s.ext, opt: s.opt}, skip: p.Line - 1}, nil
		}
	}
	return nil, fmt.Errorf("%w: file %q is not an input", sources.ErrPosition, p.File)
}

// resumed is a Source over the lines of s after the first skip lines of its first file.
type resumed struct {
	s    *Source
	skip int64
}

var _ sources.BatchSource = (*resumed)(nil)

func (r *resumed) Len() int64 { return -1 }

// Run emits the samples of RunBatches' batches, each decoded into memory of its own (the
// consumer may keep the samples).
func (r *resumed) Run(ctx context.Context, emit func(sample.Sample) error) error {
	var index int64
	return r.RunBatches(ctx, func(b sources.Batch) error {
		var m sources.Memory
		b.Decode(&m)
		for _, smp := range m.Samples {
			smp.Index = index
			index++
			if err := emit(smp); err != nil {
				return err
			}
		}
		return nil
	})
}

// RunBatches is Source.RunBatches from the place: the first file's stream is read past its
// first skip lines, and its batches' line numbers (so origins and tokens) count them.
func (r *resumed) RunBatches(ctx context.Context, emit func(sources.Batch) error) error {
	s := r.s
	pool := &bufPool{size: s.opt.ChunkSize, free: make(chan []byte, 2*(s.opt.Workers+1))}
	names := make([]string, len(s.inputs))
	for i, in := range s.inputs {
		names[i] = in.Path
	}
	streams := sources.OpenStreams(ctx, s.opt.Store, names, s.opt.Prefetch)
	defer streams.Close()
	for i := range s.inputs {
		rc, name, err := streams.Next()
		if err != nil {
			return fmt.Errorf("jsonl: %w", err)
		}
		var skipped int64
		if i == 0 && r.skip > 0 {
			if rc, err = skipLines(name, rc, r.skip); err != nil {
				return err
			}
			skipped = r.skip
		}
		send := func(c *chunk) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			c.src, c.pool, c.line = s, pool, c.line+skipped
			return emit(c)
		}
		read := s.readInput
		if skipped > 0 {
			read = s.readFile // the rest of a stream: skipLines read its start
		}
		if err := read(ctx, name, rc, pool, send); err != nil {
			return err
		}
	}
	return pool.faultErr() // a mapped file that shrank under a piece decoded by now
}

// skipLines returns the rest of path's stream f after its first n lines, decompressed (and
// its byte order mark dropped) as readFile reads it. A rest that readFile would take for the
// start of a file (a compression magic number or a byte order mark) is refused with
// sources.ErrPosition: the caller then re-reads the file from its start.
func skipLines(path string, f io.ReadCloser, n int64) (io.ReadCloser, error) {
	r, closeFn, err := open(path, f)
	if err != nil {
		return nil, err
	}
	if r, err = skipBOM(r); err != nil {
		closeFn()
		return nil, fmt.Errorf("jsonl: %s: read error in line 1: %w", path, err)
	}
	br := bufio.NewReaderSize(r, 1<<20)
	for n > 0 {
		b, _ := br.Peek(br.Buffered())
		if len(b) == 0 {
			if _, err := br.Peek(1); err == io.EOF {
				break // the file ended first: nothing of it is left
			} else if err != nil {
				closeFn()
				return nil, fmt.Errorf("jsonl: %s: read error before line %d: %w", path, n+1, err)
			}
			continue
		}
		k := int64(bytes.Count(b, []byte{'\n'}))
		if k < n {
			br.Discard(len(b))
			n -= k
			continue
		}
		end := 0
		for ; n > 0; n-- {
			end += bytes.IndexByte(b[end:], '\n') + 1
		}
		br.Discard(end)
	}
	head, _ := br.Peek(4)
	if bytes.HasPrefix(head, bom) || bytes.HasPrefix(head, []byte{0x1f, 0x8b}) || bytes.Equal(head, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		closeFn()
		return nil, fmt.Errorf("%w: the line to resume at in %s starts like a file", sources.ErrPosition, path)
	}
	return struct {
		io.Reader
		io.Closer
	}{br, closerFunc(closeFn)}, nil
}

type closerFunc func()

func (f closerFunc) Close() error { f(); return nil }
