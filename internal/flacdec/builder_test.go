package flacdec

import (
	"math/bits"

	"github.com/mldf/convert/internal/flaccrc"
)

// A small FLAC writer for tests, written from RFC 9639 independently of internal/flacenc:
// it writes exactly the subframe codings a test asks for (fixed orders, LPC of any order,
// precision and shift, escape-coded and 5-bit-parameter partitions, wasted bits, every
// block size, sample rate and sample size code, variable blocking, 33-bit side channels),
// which an encoder optimising for size would never all choose.

type bitWriter struct {
	b   []byte
	acc byte
	n   uint
}

func (w *bitWriter) bits(v uint64, nb uint) {
	for i := int(nb) - 1; i >= 0; i-- {
		w.acc = w.acc<<1 | byte(v>>uint(i)&1)
		w.n++
		if w.n == 8 {
			w.b = append(w.b, w.acc)
			w.acc, w.n = 0, 0
		}
	}
}

func (w *bitWriter) signed(v int64, nb uint) { w.bits(uint64(v)&(1<<nb-1), nb) }

func (w *bitWriter) unary(q uint64) {
	for range q {
		w.bits(0, 1)
	}
	w.bits(1, 1)
}

func (w *bitWriter) align() {
	for w.n != 0 {
		w.bits(0, 1)
	}
}

// subSpec says how to code one subframe.
type subSpec struct {
	kind      int     // 0 constant, 1 verbatim, 2 fixed, 3 LPC
	order     int     // fixed or LPC order
	coefs     []int32 // LPC
	precision uint    // LPC coefficient bits
	shift     int     // LPC
	wasted    uint    // low bits removed (the samples must have them zero)
	method    int     // residual coding method: 0 (4-bit parameters) or 1 (5-bit)
	partOrder uint
	// escape[p] codes partition p raw with escapeWidth[p] bits (0 = as wide as needed);
	// param[p] >= 0 forces a Rice parameter.
	escape      []bool
	escapeWidth []uint
	param       []int
}

// frameSpec describes one frame.
type frameSpec struct {
	variable bool
	number   uint64 // frame number, or first sample number when variable
	assign   int    // channel assignment code
	bps      int    // frame bit depth
	ssCode   int    // -1: derive; else the 3-bit sample size code (0 = from STREAMINFO)
	rate     int
	srCode   int // -1: derive (from STREAMINFO if no code fits)
	bsCode   int // -1: derive
	subs     []subSpec
}

// predict returns the residual of the given predictor over x (int64 samples).
func residualOf(x []int64, s subSpec) []int64 {
	res := make([]int64, len(x))
	switch s.kind {
	case 2:
		c := [][]int64{{}, {1}, {2, -1}, {3, -3, 1}, {4, -6, 4, -1}}[s.order]
		for i := s.order; i < len(x); i++ {
			var p int64
			for j, cj := range c {
				p += cj * x[i-1-j]
			}
			res[i] = x[i] - p
		}
	case 3:
		for i := s.order; i < len(x); i++ {
			var p int64
			for j, cj := range s.coefs {
				p += int64(cj) * x[i-1-j]
			}
			res[i] = x[i] - p>>uint(s.shift)
		}
	}
	return res
}

func fold64(v int64) uint64 { return uint64(v<<1 ^ v>>63) }

// writeSubframe writes channel x (already decorrelated; bps bits per sample).
func writeSubframe(w *bitWriter, x []int64, bps uint, s subSpec) {
	typ := map[int]uint64{0: 0, 1: 1, 2: 8 + uint64(s.order), 3: 32 + uint64(s.order-1)}[s.kind]
	if s.wasted > 0 {
		w.bits(typ<<1|1, 8)
		w.unary(uint64(s.wasted - 1))
	} else {
		w.bits(typ<<1, 8)
	}
	sb := bps - s.wasted
	d := make([]int64, len(x))
	for i, v := range x {
		d[i] = v >> s.wasted
		if d[i]<<s.wasted != v {
			panic("test writer: wasted bits are not zero")
		}
	}
	switch s.kind {
	case 0:
		w.signed(d[0], sb)
		return
	case 1:
		for _, v := range d {
			w.signed(v, sb)
		}
		return
	}
	for _, v := range d[:s.order] {
		w.signed(v, sb)
	}
	if s.kind == 3 {
		w.bits(uint64(s.precision-1), 4)
		w.signed(int64(s.shift), 5)
		for _, c := range s.coefs {
			w.signed(int64(c), s.precision)
		}
	}
	res := residualOf(d, s)
	w.bits(uint64(s.method), 2)
	w.bits(uint64(s.partOrder), 4)
	pbits := uint(4 + s.method)
	parts := 1 << s.partOrder
	size := len(d) >> s.partOrder
	for p := range parts {
		start, end := p*size, (p+1)*size
		if p == 0 {
			start = s.order
		}
		part := res[start:end]
		if p < len(s.escape) && s.escape[p] {
			width := uint(0)
			if p < len(s.escapeWidth) {
				width = s.escapeWidth[p]
			}
			if width == 0 {
				for _, v := range part {
					width = max(width, uint(bits.Len64(uint64(v^v>>63)))+1)
				}
				if allZero(part) {
					width = 0
				}
			}
			w.bits(1<<pbits-1, pbits)
			w.bits(uint64(width), 5)
			for _, v := range part {
				w.signed(v, width)
			}
			continue
		}
		k := 0
		if p < len(s.param) && s.param[p] >= 0 {
			k = s.param[p]
		} else if len(part) > 0 {
			var sum uint64
			for _, v := range part {
				sum += fold64(v)
			}
			k = max(0, bits.Len64(sum/uint64(len(part)))-1)
			k = min(k, 1<<pbits-2)
		}
		w.bits(uint64(k), pbits)
		for _, v := range part {
			u := fold64(v)
			w.unary(u >> uint(k))
			w.bits(u&(1<<uint(k)-1), uint(k))
		}
	}
}

func allZero(s []int64) bool {
	for _, v := range s {
		if v != 0 {
			return false
		}
	}
	return true
}

func codedNumber(v uint64) []byte {
	if v < 0x80 {
		return []byte{byte(v)}
	}
	k := 1
	for k < 6 && v >= 1<<(6*k+6-k) {
		k++
	}
	out := []byte{byte(0xFF<<(7-k)) | byte(v>>(6*k))}
	for i := k - 1; i >= 0; i-- {
		out = append(out, 0x80|byte(v>>(6*i))&0x3F)
	}
	return out
}

// writeFrame appends a frame of the interleaved samples s (len = block size * channels).
func writeFrame(dst []byte, s []int32, nch int, f frameSpec) []byte {
	n := len(s) / nch
	ch := make([][]int64, nch)
	for c := range ch {
		ch[c] = make([]int64, n)
		for i := range n {
			ch[c][i] = int64(s[i*nch+c])
		}
	}
	bps := make([]uint, nch)
	for c := range bps {
		bps[c] = uint(f.bps)
	}
	switch f.assign {
	case 8: // left/side
		for i := range n {
			ch[1][i] = ch[0][i] - ch[1][i]
		}
		bps[1]++
	case 9: // side/right
		for i := range n {
			ch[0][i] = ch[0][i] - ch[1][i]
		}
		bps[0]++
	case 10: // mid/side
		for i := range n {
			l, r := ch[0][i], ch[1][i]
			ch[0][i], ch[1][i] = (l+r)>>1, l-r
		}
		bps[1]++
	}
	bsCode, bsExtra := f.bsCode, []byte(nil)
	if bsCode < 0 {
		switch n {
		case 192:
			bsCode = 1
		case 576, 1152, 2304, 4608:
			bsCode = 2 + bits.Len(uint(n/576)) - 1
		case 256, 512, 1024, 2048, 4096, 8192, 16384, 32768:
			bsCode = 8 + bits.Len(uint(n/256)) - 1
		default:
			bsCode = 7
			if n <= 256 {
				bsCode = 6
			}
		}
	}
	switch bsCode {
	case 6:
		bsExtra = []byte{byte(n - 1)}
	case 7:
		bsExtra = []byte{byte((n - 1) >> 8), byte(n - 1)}
	}
	srCode, srExtra := f.srCode, []byte(nil)
	if srCode < 0 {
		srCode = 0
		for code, r := range sampleRates {
			if r == f.rate && r != 0 {
				srCode = code
			}
		}
		if srCode == 0 && f.rate%1000 == 0 && f.rate/1000 < 256 {
			srCode = 12
		} else if srCode == 0 && f.rate < 65536 {
			srCode = 13
		}
	}
	switch srCode {
	case 12:
		srExtra = []byte{byte(f.rate / 1000)}
	case 13:
		srExtra = []byte{byte(f.rate >> 8), byte(f.rate)}
	case 14:
		srExtra = []byte{byte(f.rate / 10 >> 8), byte(f.rate / 10)}
	}
	ssCode := f.ssCode
	if ssCode < 0 {
		ssCode = 0
		for code, b := range sampleSizes {
			if b == f.bps && b != 0 {
				ssCode = code
			}
		}
	}
	start := len(dst)
	blocking := byte(0xF8)
	if f.variable {
		blocking = 0xF9
	}
	assign := f.assign
	if assign < 8 {
		assign = nch - 1
	}
	dst = append(dst, 0xFF, blocking, byte(bsCode<<4|srCode), byte(assign<<4|ssCode<<1))
	dst = append(dst, codedNumber(f.number)...)
	dst = append(dst, bsExtra...)
	dst = append(dst, srExtra...)
	dst = append(dst, flaccrc.CRC8(dst[start:]))
	w := &bitWriter{b: dst}
	for c := range nch {
		writeSubframe(w, ch[c], bps[c], f.subs[c])
	}
	w.align()
	dst = w.b
	crc := flaccrc.CRC16(dst[start:])
	return append(dst, byte(crc>>8), byte(crc))
}

// streamHeader returns "fLaC" and a STREAMINFO block for the samples.
func streamHeader(s []int32, rate, nch, bps, minBlock, maxBlock int) []byte {
	b := []byte("fLaC")
	b = append(b, 0x80, 0, 0, 34)
	b = append(b, byte(minBlock>>8), byte(minBlock), byte(maxBlock>>8), byte(maxBlock), 0, 0, 0, 0, 0, 0)
	total := uint64(len(s) / nch)
	v := uint64(rate)<<44 | uint64(nch-1)<<41 | uint64(bps-1)<<36 | total
	for i := range 8 {
		b = append(b, byte(v>>(56-8*i)))
	}
	sum := pcmMD5(s, bps)
	return append(b, sum[:]...)
}
