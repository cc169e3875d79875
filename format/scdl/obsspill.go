package scdl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// The per-cell features of the chunks are kept, while the arrays are written, in a spill file
// of records (the chunks' obs rows, in claim order) that the final pass writes as the
// obs_features parquet tables: a spill can be cut back to a checkpoint, a parquet file
// (row groups, footer) cannot. A record is
//
//	u32 payload length, then the payload: u32 input, u64 lo, u64 hi, and per stored obs
//	column of the input (its order and kinds): n null flags (bytes), then n values
//	(int64 and float64 bits little-endian; bools one byte; strings u32 length and bytes)
//
// with n = hi - lo.

// obsSpill is the name of the obs spill file in the temporary archive.
const obsSpill = ".obs_rows.spill"

// maxObsRecord bounds a record (a chunk's obs rows): 2 GiB.
const maxObsRecord = 1 << 31

// errSpill means the obs spill file is not what the writer wrote.
var errSpill = errors.New("damaged obs spill")

// encodeObs appends the record of a chunk's obs rows (cols: obsColumns' result) to dst.
func encodeObs(dst []byte, in int, lo, hi int64, cols []Column) []byte {
	at := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(in))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(lo))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(hi))
	n := int(hi - lo)
	for k := range cols {
		c := &cols[k]
		for r := range n {
			if c.IsNull(r) {
				dst = append(dst, 1)
			} else {
				dst = append(dst, 0)
			}
		}
		switch c.Kind {
		case KindInt:
			for _, v := range c.Ints[:n] {
				dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
			}
		case KindFloat:
			for _, v := range c.Floats[:n] {
				dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
			}
		case KindBool:
			for _, v := range c.Bools[:n] {
				if v {
					dst = append(dst, 1)
				} else {
					dst = append(dst, 0)
				}
			}
		default:
			for _, v := range c.Strings[:n] {
				dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v)))
				dst = append(dst, v...)
			}
		}
	}
	binary.LittleEndian.PutUint32(dst[at:], uint32(len(dst)-at-4))
	return dst
}

// obsRecord is a decoded spill record.
type obsRecord struct {
	in     int
	lo, hi int64
	cols   []Column
}

// readObs reads the next record from r (io.EOF at the end), its columns laid out as
// specsOf(input) says. buf is reused.
func readObs(r io.Reader, buf *[]byte, specsOf func(in int) ([]ColumnSpec, bool)) (obsRecord, error) {
	var rec obsRecord
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			err = fmt.Errorf("%w: a short record", errSpill)
		}
		return rec, err
	}
	size := binary.LittleEndian.Uint32(hdr[:])
	if size < 20 || size > maxObsRecord-4 {
		return rec, fmt.Errorf("%w: a record of %d bytes", errSpill, size)
	}
	// Read through a buffer that grows with the bytes there are, not with what a damaged
	// length claims.
	bb := bytes.NewBuffer((*buf)[:0])
	if n, err := io.CopyN(bb, r, int64(size)); n != int64(size) {
		return rec, fmt.Errorf("%w: a short record (%d of %d bytes): %v", errSpill, n, size, err)
	}
	b := bb.Bytes()
	*buf = b[:0]
	rec.in = int(binary.LittleEndian.Uint32(b))
	rec.lo, rec.hi = int64(binary.LittleEndian.Uint64(b[4:])), int64(binary.LittleEndian.Uint64(b[12:]))
	b = b[20:]
	specs, ok := specsOf(rec.in)
	n := rec.hi - rec.lo
	if !ok || rec.lo < 0 || n <= 0 || n > MaxChunkRows {
		return rec, fmt.Errorf("%w: input %d, rows [%d, %d)", errSpill, rec.in, rec.lo, rec.hi)
	}
	take := func(k int) ([]byte, bool) {
		if k < 0 || k > len(b) {
			return nil, false
		}
		p := b[:k]
		b = b[k:]
		return p, true
	}
	for _, s := range specs {
		c := Column{ColumnSpec: s}
		flags, ok := take(int(n))
		if !ok {
			return rec, fmt.Errorf("%w: a short record", errSpill)
		}
		for r, f := range flags {
			if f != 0 {
				if c.Null == nil {
					c.Null = make([]bool, n)
				}
				c.Null[r] = true
			}
		}
		switch s.Kind {
		case KindInt, KindFloat:
			p, ok := take(8 * int(n))
			if !ok {
				return rec, fmt.Errorf("%w: a short record", errSpill)
			}
			for k := 0; k < len(p); k += 8 {
				v := binary.LittleEndian.Uint64(p[k:])
				if s.Kind == KindInt {
					c.Ints = append(c.Ints, int64(v))
				} else {
					c.Floats = append(c.Floats, math.Float64frombits(v))
				}
			}
		case KindBool:
			p, ok := take(int(n))
			if !ok {
				return rec, fmt.Errorf("%w: a short record", errSpill)
			}
			for _, v := range p {
				c.Bools = append(c.Bools, v != 0)
			}
		default:
			c.Strings = make([]string, 0, n)
			for range n {
				p, ok := take(4)
				if !ok {
					return rec, fmt.Errorf("%w: a short record", errSpill)
				}
				s, ok := take(int(binary.LittleEndian.Uint32(p)))
				if !ok {
					return rec, fmt.Errorf("%w: a short record", errSpill)
				}
				c.Strings = append(c.Strings, string(s))
			}
		}
		rec.cols = append(rec.cols, c)
	}
	if len(b) != 0 {
		return rec, fmt.Errorf("%w: %d bytes left in a record", errSpill, len(b))
	}
	return rec, nil
}
