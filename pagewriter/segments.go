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

// vectorWriter is a rangeWriter that also takes a gather write: a fileSink on Linux, whose
// file is not wrapped. writeRange then joins payloads without copying them.
type vectorWriter interface {
	rangeWriter
	// writev writes bufs one after another from off (it may change bufs' slices).
	writev(bufs [][]byte, off int64) (int, error)
	// vectored reports whether writev may be used; when false, writeRange copies instead.
	vectored() bool
}

// maxIov bounds the buffers of one gather write (Linux's IOV_MAX is 1024).
const maxIov = 1024

// zeroGap is read by gather writes for gaps between joined payloads; never written.
var zeroGap [maxGap]byte

// writeRange delivers [from, to), a batch's claimed range of the data region, to dst in
// increasing offset order: the items' data at offs (one offset per item, increasing) and
// every other byte as zeros. Neighbouring payloads and gaps of up to 64 KiB between them
// are joined into writes of up to 4 MiB (gathered from the payloads themselves where dst
// takes a gather write, else copied into seg, a reusable buffer); payloads of 1 MiB or more
// are written straight from their slice; other gaps are declared with Zero. vecs, when not
// nil, is a reusable slice for the gather lists. It returns the bytes written.
func writeRange(dst rangeWriter, from, to int64, items []Item, offs []int64, seg *[]byte, vecs *[][]byte) (int64, error) {
	vw, _ := dst.(vectorWriter)
	if vw != nil && !vw.vectored() {
		vw = nil
	}
	buf := (*seg)[:0]
	var vec [][]byte
	if vecs != nil {
		vec = (*vecs)[:0]
		defer func() { clear(vec); *vecs = vec[:0] }()
	}
	var size int          // bytes in buf or vec
	var at, written int64 // at: the offset of buf or vec
	pos := from           // the first byte not yet delivered (or in buf or vec)
	flush := func() error {
		if size == 0 {
			return nil
		}
		var n int
		var err error
		if vw != nil {
			n, err = vw.writev(vec, at)
			clear(vec) // drop the references to the payloads
			vec = vec[:0]
		} else {
			n, err = dst.WriteAt(buf, at)
			buf = buf[:0]
		}
		written += int64(n)
		size = 0
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
		if size > 0 && off >= pos && off-pos <= maxGap && len(p) < directSize && len(vec)+2 <= maxIov {
			if gap := int(off - pos); vw != nil {
				if gap > 0 {
					vec = append(vec, zeroGap[:gap])
				}
				size += gap
			} else {
				n := len(buf)
				buf = slices.Grow(buf, gap)[:n+gap]
				clear(buf[n:])
				size = len(buf)
			}
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
		if vw != nil {
			vec = append(vec, p)
			size += len(p)
		} else {
			buf = append(buf, p...)
			size = len(buf)
		}
		if size >= segLimit {
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

// writevAll writes bufs one after another from off with pwv, which may write less than it
// was given: it goes on after a short write, and stops at an error or at a write of nothing
// (io.ErrShortWrite). It changes bufs' slices.
func writevAll(bufs [][]byte, off int64, pwv func(bufs [][]byte, off int64) (int, error)) (int, error) {
	total := 0
	for {
		for len(bufs) > 0 && len(bufs[0]) == 0 {
			bufs = bufs[1:]
		}
		if len(bufs) == 0 {
			return total, nil
		}
		n, err := pwv(bufs, off+int64(total))
		total += n
		if err != nil {
			return total, err
		}
		if n == 0 {
			return total, io.ErrShortWrite
		}
		for n > 0 {
			if n >= len(bufs[0]) {
				n -= len(bufs[0])
				bufs = bufs[1:]
			} else {
				bufs[0] = bufs[0][n:]
				n = 0
			}
		}
	}
}
