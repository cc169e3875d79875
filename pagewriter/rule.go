// Package pagewriter places the payloads of chunks of samples in sample order without locks
// and writes them in parallel to a sink, so that the output is the same bytes for any number
// of workers. Containers (package mldf, package beton) supply only their placement rule,
// rows, allocation entries and finalizer; sinks (a local file, a multipart upload) receive
// the bytes by offset and publish the object atomically. docs/WRITER.md describes it.
package pagewriter

import (
	"errors"
	"fmt"
)

// Errors returned by the placement rules and the writer.
var (
	ErrPageOverflow = errors.New("pagewriter: payload larger than a page")
	ErrPageSize     = errors.New("pagewriter: page size must be a power of two >= 4096")
	ErrClosed       = errors.New("pagewriter: writer already finished or aborted")
	ErrFailed       = errors.New("pagewriter: writer failed earlier")
	ErrUnclaimed    = errors.New("pagewriter: finish called before every chunk was committed")
	ErrTooManyRows  = errors.New("pagewriter: more rows than the container has room for")
	ErrCoverage     = errors.New("pagewriter: the sink did not receive every byte exactly once")
)

// A Rule decides where payloads go. Payloads are placed one after another in a fixed order;
// the position of each depends only on the cursor (the first free byte after the payloads
// before it) and its own size, which makes the layout independent of who writes it.
type Rule interface {
	// Place returns the offset of a payload of size bytes (size > 0) when the first free byte
	// is cursor, and the cursor after it.
	Place(cursor, size int64) (off, next int64, err error)
}

// SpanRule is MLDF's placement rule: a payload that fits in a page lies inside one page; a
// larger one starts on a page boundary and runs over consecutive pages. Payloads start
// 8-byte aligned; gaps are left as zero bytes.
type SpanRule struct{ PageSize int64 }

// Place implements Rule.
func (r SpanRule) Place(cursor, size int64) (off, next int64, err error) {
	p := r.PageSize
	in := cursor & (p - 1)
	if (size <= p && in+size > p) || (size > p && in != 0) {
		cursor += p - in
	}
	return cursor, alignUp(cursor+size, 8), nil
}

// PageRule places every payload inside one page, Align-aligned (at least 1); a payload
// larger than a page is an error. This is the rule of containers whose readers load whole
// pages (FFCV's .beton).
type PageRule struct{ PageSize, Align int64 }

// Place implements Rule.
func (r PageRule) Place(cursor, size int64) (off, next int64, err error) {
	p := r.PageSize
	if size > p {
		return 0, 0, fmt.Errorf("%w: %d bytes, page size %d", ErrPageOverflow, size, p)
	}
	if in := cursor & (p - 1); in+size > p {
		cursor += p - in
	}
	a := r.Align
	if a < 1 {
		a = 1
	}
	return cursor, alignUp(cursor+size, a), nil
}

// ValidPageSize reports whether p is a power of two of at least 4096.
func ValidPageSize(p int64) error {
	if p < 4096 || p&(p-1) != 0 || p > 1<<31 {
		return fmt.Errorf("%w (got %d)", ErrPageSize, p)
	}
	return nil
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }
