package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/mldf/convert/sources"
)

// ErrFirstTooLong means the first record is longer than FirstRecord was asked to read.
var ErrFirstTooLong = fmt.Errorf("jsonl: %w", sources.ErrFirstTooLong)

// FirstRecord returns the first non-blank line of the source's inputs, in order, and the
// file it is in, reading no more than it needs (and at most limit bytes of that line, else
// ErrFirstTooLong); line is nil when no input holds a record. Named pipes and objects in a
// bucket are not read (a pipe is read once, and an object is fetched by Run with its
// retries): when one is met first, FirstRecord returns nil, its path and no error. validate uses it to know the keys the records have.
func (s *Source) FirstRecord(ctx context.Context, limit int) (line []byte, file string, err error) {
	for _, in := range s.inputs {
		// A local file is read here and again by Run; a named pipe (read once) and an object
		// (not fetched twice: Run reads it, with its retries) are not opened.
		f, err := s.opt.Store.OpenCheck(ctx, in.Path)
		if err != nil {
			return nil, in.Path, fmt.Errorf("jsonl: %w", err)
		}
		if f == nil {
			return nil, in.Path, nil
		}
		r, closeFn, err := open(in.Path, f)
		if err != nil {
			return nil, in.Path, err
		}
		line, err := firstLine(bufio.NewReaderSize(r, 64<<10), limit)
		closeFn()
		if err != nil {
			return nil, in.Path, fmt.Errorf("%s: %w", in.Path, err)
		}
		if line != nil {
			return line, in.Path, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, "", err
		}
	}
	return nil, "", nil
}

// firstLine returns the first non-blank line of r (without a leading BOM), nil at the end.
func firstLine(r *bufio.Reader, limit int) ([]byte, error) {
	first := true
	for {
		var line []byte
		for {
			part, err := r.ReadSlice('\n')
			if len(line)+len(part) > limit+1 {
				return nil, ErrFirstTooLong
			}
			line = append(line, part...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			if first {
				line, first = bytes.TrimPrefix(line, bom), false
			}
			if t := bytes.TrimRight(line, "\r\n"); !blank(t) {
				return t, nil
			}
			if err == io.EOF {
				return nil, nil
			}
			break
		}
	}
}
