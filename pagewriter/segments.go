package pagewriter

import (
	"io"
	"slices"
)

// Coalescing limits of writeRange.
const (
	maxGap     = 64 << 10 // gaps up to this are written as zeros to join two payloads
	directSize = 1 << 20  // payloads at least this big are written straight from their slice
	segLimit   = 4 << 20  // a coalesced segment is flushed at this size
)

// rangeWriter is where writeRange delivers bytes: a Sink, or the staging file.
type rangeWriter interface {
	io.WriterAt
	Zero(off, n int64) error
}

// spillRange delivers to a scratch file, where an unwritten byte reads as zero.
type spillRange struct{ s *Spill }

func (r spillRange) WriteAt(p []byte, off int64) (int, error) { return r.s.WriteAt(p, off) }
func (r spillRange) Zero(off, n int64) error                  { return nil }

// writeRange delivers [from, to), a batch's claimed range of the data region, to dst in
// increasing offset order: the items' data at offs (one offset per item, increasing) and
// every other byte as zeros. Neighbouring payloads and gaps of up to 64 KiB between them
// are joined into writes of up to 4 MiB; payloads of 1 MiB or more are written straight
// from their slice; other gaps are declared with Zero. seg is a reusable buffer. It returns
// the bytes written.
func writeRange(dst rangeWriter, from, to int64, items []Item, offs []int64, seg *[]byte) (int64, error) {
	buf := (*seg)[:0]
	var at, written int64 // at: the offset of buf
	pos := from           // the first byte not yet delivered (or in buf)
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		n, err := dst.WriteAt(buf, at)
		written += int64(n)
		buf = buf[:0]
		return err
	}
	zero := func(end int64) error {
		if end > pos {
			if err := dst.Zero(pos, end-pos); err != nil {
				return err
			}
			pos = end
		}
		return nil
	}
	for k := range items {
		p := items[k].Data
		if len(p) == 0 {
			continue
		}
		off := offs[k]
		if len(buf) > 0 && off >= pos && off-pos <= maxGap && len(p) < directSize {
			n := len(buf)
			buf = slices.Grow(buf, int(off-pos))[:n+int(off-pos)]
			clear(buf[n:])
		} else {
			if err := flush(); err != nil {
				return written, err
			}
			if err := zero(off); err != nil {
				return written, err
			}
			at = off
		}
		pos = off + int64(len(p))
		if len(p) >= directSize {
			n, err := dst.WriteAt(p, off)
			written += int64(n)
			if err != nil {
				return written, err
			}
			continue
		}
		buf = append(buf, p...)
		if len(buf) >= segLimit {
			if err := flush(); err != nil {
				return written, err
			}
		}
	}
	err := flush()
	*seg = buf[:0]
	if err == nil {
		err = zero(to)
	}
	return written, err
}
