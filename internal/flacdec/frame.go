package flacdec

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/mldf/convert/internal/flaccrc"
)

// Channel assignments of the frame header (RFC 9639 section 9.1.3).
const (
	chanLeftSide  = 8
	chanSideRight = 9
	chanMidSide   = 10
)

// frameHeader is what a frame header says.
type frameHeader struct {
	blockSize int
	assign    int  // channel assignment code
	bps       uint // bits per sample
}

// header parses the frame header at b[p:] and returns it and the offset of the first
// subframe.
func (d *decoder) header(b []byte, p int) (frameHeader, int, error) {
	var h frameHeader
	if len(b) < p+4 {
		return h, 0, fmt.Errorf("%w: frame header at byte %d", ErrTruncated, p)
	}
	if b[p] != 0xFF || b[p+1]&0xFE != 0xF8 {
		return h, 0, fmt.Errorf("%w: no frame sync code at byte %d (found %02x %02x)", ErrFrame, p, b[p], b[p+1])
	}
	if d.stats != nil {
		d.stats.variable += int(b[p+1] & 1)
		d.stats.assign[min(int(b[p+3]>>4), 10)]++
	}
	bsCode, srCode := b[p+2]>>4, b[p+2]&15
	chCode, ssCode := int(b[p+3]>>4), b[p+3]>>1&7
	if b[p+3]&1 != 0 {
		return h, 0, fmt.Errorf("%w: reserved header bit set at byte %d", ErrFrame, p)
	}
	q := p + 4
	// Coded frame or sample number: 1..7 bytes, UTF-8-like (RFC 9639 section 9.1.5).
	if len(b) <= q {
		return h, 0, fmt.Errorf("%w: frame header at byte %d", ErrTruncated, p)
	}
	extra := bits.LeadingZeros8(^b[q]) // leading one bits of the first byte
	switch {
	case extra == 1 || extra == 8:
		return h, 0, fmt.Errorf("%w: invalid coded number at byte %d", ErrFrame, q)
	case extra == 0:
		q++
	default:
		if len(b) < q+extra {
			return h, 0, fmt.Errorf("%w: frame header at byte %d", ErrTruncated, p)
		}
		for _, c := range b[q+1 : q+extra] {
			if c&0xC0 != 0x80 {
				return h, 0, fmt.Errorf("%w: invalid coded number at byte %d", ErrFrame, q)
			}
		}
		q += extra
	}
	// Block size and sample rate, possibly from the bytes that follow.
	need := 0
	switch bsCode {
	case 6:
		need++
	case 7:
		need += 2
	}
	switch srCode {
	case 12:
		need++
	case 13, 14:
		need += 2
	}
	if len(b) < q+need+1 {
		return h, 0, fmt.Errorf("%w: frame header at byte %d", ErrTruncated, p)
	}
	switch {
	case bsCode == 0:
		return h, 0, fmt.Errorf("%w: reserved block size code at byte %d", ErrFrame, p)
	case bsCode == 1:
		h.blockSize = 192
	case bsCode <= 5:
		h.blockSize = 576 << (bsCode - 2)
	case bsCode == 6:
		h.blockSize = int(b[q]) + 1
		q++
	case bsCode == 7:
		h.blockSize = int(binary.BigEndian.Uint16(b[q:])) + 1
		q += 2
	default:
		h.blockSize = 256 << (bsCode - 8)
	}
	rate := 0
	switch srCode {
	case 0:
		rate = d.info.SampleRate
	case 12:
		rate = int(b[q]) * 1000
		q++
	case 13:
		rate = int(binary.BigEndian.Uint16(b[q:]))
		q += 2
	case 14:
		rate = int(binary.BigEndian.Uint16(b[q:])) * 10
		q += 2
	case 15:
		return h, 0, fmt.Errorf("%w: forbidden sample rate code at byte %d", ErrFrame, p)
	default:
		rate = sampleRates[srCode]
	}
	if got := flaccrc.CRC8(b[p:q]); got != b[q] {
		return h, 0, fmt.Errorf("%w: frame header at byte %d has CRC-8 %02x, computed %02x", ErrCRC, p, b[q], got)
	}
	q++

	// Only now that the CRC has passed, compare with STREAMINFO.
	nch := chCode + 1
	switch {
	case chCode > chanMidSide:
		return h, 0, fmt.Errorf("%w: reserved channel assignment %d at byte %d", ErrFrame, chCode, p)
	case chCode >= chanLeftSide:
		nch = 2
	}
	h.assign = chCode
	switch ssCode {
	case 0:
		h.bps = uint(d.info.BitsPerSample)
	case 3:
		return h, 0, fmt.Errorf("%w: reserved sample size code at byte %d", ErrFrame, p)
	default:
		h.bps = uint(sampleSizes[ssCode])
	}
	switch {
	case h.blockSize > maxBlockSize:
		return h, 0, fmt.Errorf("%w: block size %d exceeds %d", ErrFrame, h.blockSize, maxBlockSize)
	case nch != d.info.Channels:
		return h, 0, fmt.Errorf("%w: %d channels, STREAMINFO says %d", ErrFrame, nch, d.info.Channels)
	case int(h.bps) != d.info.BitsPerSample:
		return h, 0, fmt.Errorf("%w: %d bits per sample, STREAMINFO says %d", ErrFrame, h.bps, d.info.BitsPerSample)
	case rate != d.info.SampleRate:
		return h, 0, fmt.Errorf("%w: sample rate %d Hz, STREAMINFO says %d", ErrFrame, rate, d.info.SampleRate)
	}
	return h, q, nil
}

var sampleRates = [16]int{1: 88200, 2: 176400, 3: 192000, 4: 8000, 5: 16000, 6: 22050, 7: 24000,
	8: 32000, 9: 44100, 10: 48000, 11: 96000}

var sampleSizes = [8]int{1: 8, 2: 12, 4: 16, 5: 20, 6: 24, 7: 32}

// frame decodes the frame at b[p:], appends its samples to d.out and returns the offset
// of the next frame.
func (d *decoder) frame(b []byte, p int) (int, error) {
	h, q, err := d.header(b, p)
	if err != nil {
		return 0, err
	}
	n, nch := h.blockSize, d.info.Channels
	if total := d.info.TotalSamples; total != 0 && d.decoded+uint64(n) > total {
		return 0, fmt.Errorf("%w: frame at byte %d goes past the %d samples STREAMINFO declares",
			ErrSampleCount, p, total)
	}
	out, err := d.grow(n * nch)
	if err != nil {
		return 0, err
	}
	d.br.reset(b, q)
	bps := h.bps
	switch {
	case nch == 1:
		err = d.subframe(out, bps)
	case h.assign < chanLeftSide:
		for c := range nch {
			if err = d.subframe(d.chanBuf(c, n), bps); err != nil {
				break
			}
		}
		if err == nil {
			interleave(out, d.ch[:nch], n)
		}
	default:
		err = d.stereo(out, n, h.assign, bps)
	}
	if err != nil {
		return 0, fmt.Errorf("at byte %d: %w", p, err)
	}
	d.br.alignByte()
	end := d.br.bytePos()
	if d.br.overrun() || len(b) < end+2 {
		return 0, fmt.Errorf("%w: frame at byte %d", ErrTruncated, p)
	}
	if got, want := flaccrc.CRC16(b[p:end]), binary.BigEndian.Uint16(b[end:]); got != want {
		return 0, fmt.Errorf("%w: frame at byte %d has CRC-16 %04x, computed %04x", ErrCRC, p, want, got)
	}
	ok := true
	if d.md5 != nil {
		ok = d.hash(out)
	} else if bps < 32 {
		ok = inRange(out, bps)
	}
	if !ok {
		return 0, fmt.Errorf("%w: frame at byte %d decodes to samples beyond %d bits", ErrFrame, p, bps)
	}
	return end + 2, nil
}

// chanBuf returns the scratch buffer of channel c with n samples.
func (d *decoder) chanBuf(c, n int) []int32 {
	if cap(d.ch[c]) < n {
		d.ch[c] = make([]int32, n, max(n, 4096))
	}
	d.ch[c] = d.ch[c][:n]
	return d.ch[c]
}

// inRange reports whether every sample of s is a signed bps-bit number.
func inRange(s []int32, bps uint) bool {
	sh := bps - 1
	var bad int32
	for _, v := range s {
		bad |= v>>sh ^ v>>31
	}
	return bad == 0
}

// interleave writes the n samples of each channel in ch to out, channel by channel.
func interleave(out []int32, ch [][]int32, n int) {
	nch := len(ch)
	if nch == 2 {
		l, r := ch[0][:n], ch[1][:n]
		out = out[:2*n]
		for i := range l {
			out[2*i], out[2*i+1] = l[i], r[i]
		}
		return
	}
	for c, s := range ch {
		s = s[:n]
		for i, v := range s {
			out[i*nch+c] = v
		}
	}
}

// stereo decodes the two subframes of a decorrelated stereo frame and writes left and
// right interleaved to out.
func (d *decoder) stereo(out []int32, n, assign int, bps uint) error {
	// The side channel has one more bit: channel 1 for left/side and mid/side, 0 for
	// side/right. A 33-bit side channel (32-bit audio) is decoded into d.wide.
	sideCh := 1
	if assign == chanSideRight {
		sideCh = 0
	}
	a, b := d.chanBuf(0, n), d.chanBuf(1, n)
	for c, buf := range [2][]int32{a, b} {
		cbps := bps
		if c == sideCh {
			cbps++
		}
		var err error
		if cbps > 32 {
			if cap(d.wide) < n {
				d.wide = make([]int64, n)
			}
			d.wide = d.wide[:n]
			err = d.subframeWide(d.wide, buf, cbps)
		} else {
			err = d.subframe(buf, cbps)
		}
		if err != nil {
			return fmt.Errorf("channel %d: %w", c, err)
		}
	}
	out = out[:2*n]
	if bps+1 > 32 {
		side := d.wide[:n]
		switch assign {
		case chanLeftSide:
			for i, l := range a {
				out[2*i], out[2*i+1] = l, int32(int64(l)-side[i])
			}
		case chanSideRight:
			for i, r := range b {
				out[2*i], out[2*i+1] = int32(side[i]+int64(r)), r
			}
		default:
			for i, m := range a {
				s := side[i]
				mm := int64(m)<<1 | s&1
				out[2*i], out[2*i+1] = int32((mm+s)>>1), int32((mm-s)>>1)
			}
		}
		return nil
	}
	switch assign {
	case chanLeftSide:
		for i, l := range a {
			out[2*i], out[2*i+1] = l, l-b[i]
		}
	case chanSideRight:
		for i, r := range b {
			out[2*i], out[2*i+1] = a[i]+r, r
		}
	default:
		b = b[:len(a)]
		if bps > 30 { // mid*2 + side needs bps+2 bits
			for i, m := range a {
				s := int64(b[i])
				mm := int64(m)<<1 | s&1
				out[2*i], out[2*i+1] = int32((mm+s)>>1), int32((mm-s)>>1)
			}
			return nil
		}
		for i, m := range a {
			s := b[i]
			mm := m<<1 | s&1
			o := out[2*i : 2*i+2 : 2*i+2]
			o[0], o[1] = (mm+s)>>1, (mm-s)>>1
		}
	}
	return nil
}

// subframeHeader reads a subframe header and returns the type code, the wasted bits and
// the bits per sample left for the data.
func (d *decoder) subframeHeader(bps uint) (typ uint64, wasted, sbps uint, err error) {
	br := &d.br
	h := br.read(8)
	if h&0x80 != 0 {
		return 0, 0, 0, fmt.Errorf("%w: subframe padding bit set", ErrFrame)
	}
	typ = h >> 1 & 63
	if h&1 != 0 {
		k, ok := br.readUnary(uint64(bps))
		if !ok || k+1 >= uint64(bps) {
			return 0, 0, 0, fmt.Errorf("%w: %d wasted bits in %d-bit subframe", ErrFrame, k+1, bps)
		}
		wasted = uint(k + 1)
	}
	if st := d.stats; st != nil {
		st.wasted += min(int(wasted), 1)
		switch {
		case typ <= 1:
			st.kinds[typ]++
		case typ >= 8 && typ <= 12:
			st.kinds[2]++
			st.fixed[typ-8]++
		case typ >= 32:
			st.kinds[3]++
			st.lpc[typ-31]++
		}
		if bps > 32 {
			st.wide++
		}
	}
	return typ, wasted, bps - wasted, nil
}

// subframe decodes one subframe of len(x) samples of bps <= 32 bits into x.
func (d *decoder) subframe(x []int32, bps uint) error {
	typ, wasted, sbps, err := d.subframeHeader(bps)
	if err != nil {
		return err
	}
	br := &d.br
	n := len(x)
	switch {
	case typ == 0: // CONSTANT
		v := int32(br.readSigned(sbps))
		for i := range x {
			x[i] = v
		}
	case typ == 1: // VERBATIM
		for i := range x {
			x[i] = int32(br.readSigned(sbps))
		}
	case typ >= 8 && typ <= 12: // FIXED
		order := int(typ - 8)
		if order > n {
			return fmt.Errorf("%w: fixed predictor order %d exceeds block size %d", ErrFrame, order, n)
		}
		for i := range order {
			x[i] = int32(br.readSigned(sbps))
		}
		if err := d.residual(x, order); err != nil {
			return err
		}
		restoreFixed(x, order)
	case typ >= 32: // LPC
		order := int(typ - 31)
		if order > n {
			return fmt.Errorf("%w: LPC order %d exceeds block size %d", ErrFrame, order, n)
		}
		for i := range order {
			x[i] = int32(br.readSigned(sbps))
		}
		var coefs [32]int32
		shift, err := d.lpcParams(coefs[:order])
		if err != nil {
			return err
		}
		if err := d.residual(x, order); err != nil {
			return err
		}
		restoreLPC(x, coefs[:order], shift)
	default:
		return fmt.Errorf("%w: reserved subframe type %d", ErrFrame, typ)
	}
	if br.overrun() {
		return fmt.Errorf("%w: inside a subframe", ErrTruncated)
	}
	if wasted > 0 {
		for i := range x {
			x[i] <<= wasted
		}
	}
	return nil
}

// lpcParams reads the coefficient precision, the shift and the coefficients of an LPC
// subframe.
func (d *decoder) lpcParams(coefs []int32) (shift uint, err error) {
	br := &d.br
	prec := uint(br.read(4)) + 1
	if prec == 16 {
		return 0, fmt.Errorf("%w: invalid LPC coefficient precision", ErrFrame)
	}
	s := br.readSigned(5)
	if s < 0 {
		return 0, fmt.Errorf("%w: negative LPC shift %d", ErrFrame, s)
	}
	for i := range coefs {
		coefs[i] = int32(br.readSigned(prec))
	}
	return uint(s), nil
}

// subframeWide decodes a subframe of 33 bits per sample (the side channel of 32-bit
// stereo) into x, using res (of the same length) as scratch for the residual.
func (d *decoder) subframeWide(x []int64, res []int32, bps uint) error {
	typ, wasted, sbps, err := d.subframeHeader(bps)
	if err != nil {
		return err
	}
	br := &d.br
	n := len(x)
	switch {
	case typ == 0:
		v := br.readSigned(sbps)
		for i := range x {
			x[i] = v
		}
	case typ == 1:
		for i := range x {
			x[i] = br.readSigned(sbps)
		}
	case typ >= 8 && typ <= 12 || typ >= 32:
		order := int(typ - 8)
		if typ >= 32 {
			order = int(typ - 31)
		}
		if order > n {
			return fmt.Errorf("%w: predictor order %d exceeds block size %d", ErrFrame, order, n)
		}
		for i := range order {
			x[i] = br.readSigned(sbps)
		}
		var coefs [32]int32
		var shift uint
		if typ >= 32 {
			if shift, err = d.lpcParams(coefs[:order]); err != nil {
				return err
			}
		} else {
			copy(coefs[:], fixedCoefs[order])
		}
		if err := d.residual(res, order); err != nil {
			return err
		}
		c := coefs[:order]
		for i := order; i < n; i++ {
			var p int64
			for j, cj := range c {
				p += int64(cj) * x[i-1-j]
			}
			x[i] = int64(res[i]) + p>>shift
		}
	default:
		return fmt.Errorf("%w: reserved subframe type %d", ErrFrame, typ)
	}
	if br.overrun() {
		return fmt.Errorf("%w: inside a subframe", ErrTruncated)
	}
	for i := range x {
		x[i] <<= wasted
	}
	return nil
}

// fixedCoefs are the fixed predictors of orders 0..4 as LPC coefficients with no shift.
var fixedCoefs = [5][]int32{{}, {1}, {2, -1}, {3, -3, 1}, {4, -6, 4, -1}}

// residual decodes the coded residual of a subframe with a predictor of the given order
// into x[order:].
func (d *decoder) residual(x []int32, order int) error {
	br := &d.br
	method := br.read(2)
	if method > 1 {
		return fmt.Errorf("%w: reserved residual coding method %d", ErrFrame, method)
	}
	pbits := uint(4 + method)
	escape := uint64(1)<<pbits - 1
	po := uint(br.read(4))
	if st := d.stats; st != nil {
		st.rice2 += int(method)
		st.maxPartOr = max(st.maxPartOr, int(po))
	}
	n := len(x)
	psize := n >> po
	if n&(1<<po-1) != 0 || psize < order {
		return fmt.Errorf("%w: partition order %d does not fit block size %d with predictor order %d",
			ErrFrame, po, n, order)
	}
	i := order
	for end := psize; end <= n; end += psize {
		k := br.read(pbits)
		if k == escape {
			if d.stats != nil {
				d.stats.escapes++
			}
			w := uint(br.read(5))
			if w == 0 {
				clear(x[i:end])
			} else {
				for ; i < end; i++ {
					x[i] = int32(br.readSigned(w))
				}
			}
		} else if !br.rice(x[i:end], uint(k)) {
			if br.overrun() {
				return fmt.Errorf("%w: inside a residual", ErrTruncated)
			}
			return fmt.Errorf("%w: residual does not fit in 32 bits", ErrFrame)
		}
		i = end
		if psize == 0 {
			break
		}
	}
	if br.overrun() {
		return fmt.Errorf("%w: inside a residual", ErrTruncated)
	}
	return nil
}

// rice decodes len(dst) Rice-coded residuals with parameter k (k <= 30). It reports false
// if a value does not fit in 32 bits or the stream ends.
func (r *bitReader) rice(dst []int32, k uint) bool {
	if k > 26 {
		// Quotients up to 63 could overflow 32 bits: check every value.
		for i := range dst {
			v, ok := r.riceOne(k)
			if !ok {
				return false
			}
			dst[i] = v
		}
		return true
	}
	for len(dst) > 0 {
		var i int
		i, r.cache, r.n, r.pos = riceFastVec(dst, k, r.buf, r.cache, r.n, r.pos)
		if i == len(dst) {
			break
		}
		// A code that is not wholly in the cache: a long quotient, or the end of buf.
		v, ok := r.riceOne(k)
		if !ok {
			return false
		}
		dst[i] = v
		dst = dst[i+1:]
	}
	return true
}

// riceFast decodes Rice codes with parameter k <= 26 into dst until it is full or a code
// does not lie wholly in the cache after a refill from buf, and returns how many it
// decoded and the reader's new state. It calls nothing and masks every shift count, so
// that the compiler keeps the state in registers and emits plain shifts.
func riceFast(dst []int32, k uint, buf []byte, cache uint64, n uint, pos int) (int, uint64, uint, int) {
	k65 := 65 + k
	m := uint32(1) << (k & 31)
	for i := range dst {
		if n < 32 && pos+8 <= len(buf) {
			cache |= binary.BigEndian.Uint64(buf[pos:pos+8]) >> (n & 63)
			adv := (63 - n) >> 3
			pos += int(adv)
			n += adv << 3
		}
		// The stop bit is bit l-1 of the cache: the quotient is the 64-l zeros above it,
		// the low bits are the k below it. Only the bit length and one shift lie on the
		// chain from one code to the next. Setting bit 0 changes l only for an empty
		// cache (l = 1 instead of 0, still "not wholly in the cache") and spares the
		// compiler's zero check.
		l := uint(bits.Len64(cache | 1))
		used := k65 - l // quotient, stop bit, low bits
		if used > n {   // also when the cache holds no one bit
			return i, cache, n, pos
		}
		// used <= n < 64 gives l >= k+2 and a quotient below 64: with k <= 26 the value
		// fits in 32 bits. The cache shifted down to the stop bit (by l-1-k = 64-used)
		// is 1<<k | low (the bits above are the quotient's zeros), so value = q<<k + low
		// = (q-1)<<k + that, in 32-bit arithmetic that wraps; m = 1<<k makes the first
		// shift a multiply, which needs no shift-count register.
		v := uint32(63-l)*m + uint32(cache>>((64-used)&63))
		cache <<= used & 63
		n -= used
		dst[i] = int32(v>>1) ^ -int32(v&1)
	}
	return len(dst), cache, n, pos
}

// riceOne decodes one Rice-coded residual with parameter k, checking that it fits in 32
// bits and that the stream holds it.
func (r *bitReader) riceOne(k uint) (int32, bool) {
	q, ok := r.readUnary(1 << 32)
	if !ok {
		return 0, false
	}
	v := q<<k | r.read(k)
	if v>>32 != 0 || r.overrun() {
		return 0, false
	}
	return int32(uint32(v)>>1) ^ -int32(v&1), true
}
