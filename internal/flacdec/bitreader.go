package flacdec

import (
	"encoding/binary"
	"math/bits"
)

// bitReader reads bits, most significant first, from a byte slice held whole in memory.
//
// cache holds the next n unread bits left-aligned (bit 63 is the next bit); the bits below
// them are either zero or the true following bits of buf, never anything else. Reading past
// the end of buf yields zero bits and counts them in over, so a truncated stream is
// detected by overrun() instead of by a check on every read.
type bitReader struct {
	buf   []byte
	pos   int    // next byte of buf to load into cache
	cache uint64 // unread bits, left-aligned
	n     uint   // number of valid bits in cache
	over  int    // zero bytes supplied past the end of buf
}

func (r *bitReader) reset(buf []byte, pos int) {
	*r = bitReader{buf: buf, pos: pos}
}

// refill tops the cache up to at least 56 valid bits.
func (r *bitReader) refill() {
	if r.pos+8 <= len(r.buf) {
		v := binary.BigEndian.Uint64(r.buf[r.pos:])
		r.cache |= v >> r.n
		adv := (63 - r.n) >> 3
		r.pos += int(adv)
		r.n += adv << 3
		return
	}
	for r.n <= 56 {
		if r.pos < len(r.buf) {
			r.cache |= uint64(r.buf[r.pos]) << (56 - r.n)
			r.pos++
		} else {
			r.over++
		}
		r.n += 8
	}
}

// overrun reports whether more bits were read than buf holds.
func (r *bitReader) overrun() bool {
	return r.over*8 > int(r.n)
}

// bytePos returns the index in buf of the byte holding the next unread bit.
func (r *bitReader) bytePos() int {
	return r.pos + r.over - int(r.n+7)/8
}

// read returns the next nb bits (nb <= 56) as an unsigned number.
func (r *bitReader) read(nb uint) uint64 {
	if nb == 0 {
		return 0
	}
	if r.n < nb {
		r.refill()
	}
	v := r.cache >> (64 - nb)
	r.cache <<= nb
	r.n -= nb
	return v
}

// readSigned returns the next nb bits (1 <= nb <= 56) as a two's complement number.
func (r *bitReader) readSigned(nb uint) int64 {
	v := r.read(nb)
	return int64(v<<(64-nb)) >> (64 - nb)
}

// readUnary counts zero bits up to the next one bit and consumes them and the one bit. It
// returns ok false if the stream ends first or the count exceeds limit.
func (r *bitReader) readUnary(limit uint64) (uint64, bool) {
	var q uint64
	for {
		if r.n == 0 {
			r.refill()
		}
		z := uint(bits.LeadingZeros64(r.cache))
		if z < r.n {
			q += uint64(z)
			r.cache <<= z + 1
			r.n -= z + 1
			return q, q <= limit
		}
		q += uint64(r.n)
		r.cache, r.n = 0, 0
		if q > limit || r.overrun() {
			return q, false
		}
	}
}

// alignByte skips the bits up to the next byte boundary and returns them.
func (r *bitReader) alignByte() uint64 {
	return r.read(r.n % 8)
}
