package flacenc

// bitWriter appends bits, most significant first, to a byte slice.
//
// Up to 31 pending bits live in acc (in its low n bits); whenever 32 or more
// are pending, four whole bytes are moved to buf.
type bitWriter struct {
	buf []byte
	acc uint64
	n   uint
}

// writeBits writes the low nb bits of v; nb must be at most 32 and v must
// have no bits set above nb.
func (w *bitWriter) writeBits(v uint64, nb uint) {
	w.acc = w.acc<<nb | v
	w.n += nb
	if w.n >= 32 {
		w.n -= 32
		x := uint32(w.acc >> w.n)
		w.buf = append(w.buf, byte(x>>24), byte(x>>16), byte(x>>8), byte(x))
	}
}

// writeSigned writes v as an nb-bit two's complement number (nb <= 32).
func (w *bitWriter) writeSigned(v int64, nb uint) {
	w.writeBits(uint64(v)&(1<<nb-1), nb)
}

// writeZeros writes n zero bits.
func (w *bitWriter) writeZeros(n uint) {
	for n > 32 {
		w.writeBits(0, 32)
		n -= 32
	}
	w.writeBits(0, n)
}

// writeUnary writes q zero bits followed by a one bit.
func (w *bitWriter) writeUnary(q uint) {
	if q < 32 {
		w.writeBits(1, q+1)
		return
	}
	w.writeZeros(q)
	w.writeBits(1, 1)
}

// flushBytes moves every whole pending byte to buf, leaving fewer than 8 bits in acc.
func (w *bitWriter) flushBytes() {
	for w.n >= 8 {
		w.n -= 8
		w.buf = append(w.buf, byte(w.acc>>w.n))
	}
}

// align pads with zero bits to the next byte boundary and moves every pending
// byte to buf.
func (w *bitWriter) align() {
	if r := w.n % 8; r != 0 {
		w.writeBits(0, 8-r)
	}
	w.flushBytes()
}
