package imgdec

import (
	"image"
	"math"
)

// plane is 8-bit interleaved pixels: pixel (x, y)'s c samples start at y*stride + x*c.
type plane struct {
	pix       []byte
	stride, c int
}

// fbox is a resampling box in a plane's pixel coordinates (pixel x covers [x, x+1)).
type fbox struct{ x0, y0, x1, y1 float64 }

// Fixed point of the filter weights: 32 bits of accumulator minus 8 of sample and 2 of
// headroom, as Pillow's resampler uses.
const (
	precisionBits = 22
	half          = 1 << (precisionBits - 1)
)

// axis holds one direction's filter: output i sums n[i] input samples from start[i] with the
// weights k[i*ksize:][:n[i]].
type axis struct {
	start, n []int32
	k        []int32
	ksize    int
	maxN     int // the most taps of any output
	end      int // one past the last input sample any output reads
	ws       []float64
}

// resampler resamples with Pillow's bilinear filter (a triangle of support 1, widened by the
// downscale factor so a reduction averages every input pixel: antialiased). It keeps its
// tables and intermediate rows from one call to the next.
type resampler struct {
	h, v axis
	tmp  []byte  // the horizontal pass's rows
	acc  []int32 // the vertical pass's accumulators, one output row
	hw   []int32 // the vector horizontal pass's tables (cgo builds)
}

// keepResampler bounds the intermediate buffer kept between calls.
const keepResampler = 8 << 20

func (r *resampler) trim() {
	if cap(r.tmp) > keepResampler {
		r.tmp = nil
	}
}

// compute fills a for out outputs from the box [in0, in1), reading only input samples in
// [lim0, lim1) (lim0 <= in0 < in1 <= lim1 within a pixel).
func (a *axis) compute(in0, in1 float64, lim0, lim1, out int) {
	scale := (in1 - in0) / float64(out)
	fs := max(scale, 1)
	support := fs // the triangle's support is 1
	a.ksize = int(math.Ceil(support))*2 + 1
	a.start = growI32(a.start, out)
	a.n = growI32(a.n, out)
	a.k = growI32(a.k, out*a.ksize)
	if cap(a.ws) < a.ksize {
		a.ws = make([]float64, a.ksize)
	}
	ws := a.ws[:a.ksize]
	inv := 1 / fs
	a.maxN, a.end = 0, 0
	for i := 0; i < out; i++ {
		center := in0 + (float64(i)+0.5)*scale
		lo := int(math.Floor(center - support + 0.5))
		hi := int(math.Floor(center + support + 0.5))
		lo = max(lo, lim0)
		hi = min(hi, lim1, lo+a.ksize)
		if hi <= lo { // cannot happen for a box inside the limits; stay safe
			lo = min(max(int(center), lim0), lim1-1)
			hi = lo + 1
		}
		n := hi - lo
		sum := 0.0
		for t := 0; t < n; t++ {
			x := math.Abs((float64(lo+t) - center + 0.5) * inv)
			v := 0.0
			if x < 1 {
				v = 1 - x
			}
			ws[t] = v
			sum += v
		}
		k := a.k[i*a.ksize : (i+1)*a.ksize]
		clear(k)
		if sum == 0 {
			ws[0], sum = 1, 1
		}
		for t := 0; t < n; t++ {
			k[t] = int32(math.Floor(ws[t]/sum*(1<<precisionBits) + 0.5))
		}
		// Drop zero weights at the ends (the triangle's edges): fewer taps to sum.
		for n > 1 && k[n-1] == 0 {
			n--
		}
		for n > 1 && k[0] == 0 {
			copy(k, k[1:n])
			k[n-1] = 0
			n--
			lo++
		}
		a.start[i], a.n[i] = int32(lo), int32(n)
		a.maxN = max(a.maxN, n)
		a.end = max(a.end, lo+n)
	}
}

func growI32(b []int32, n int) []int32 {
	if cap(b) < n {
		return make([]int32, n)
	}
	return b[:n]
}

func clip8(v int32) byte {
	v >>= precisionBits
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return byte(v)
}

// resample resamples the box b of src, reading only pixels of lim, to outW × outH pixels of
// src.c channels into dst, mirrored left-right when flip is set: interleaved (HWC), or one
// plane per channel (CHW) when planar is set. The horizontal pass runs first, over the rows
// the vertical filter reads; then the vertical pass.
func (r *resampler) resample(src plane, b fbox, lim image.Rectangle, outW, outH int, flip, planar bool, dst []byte) {
	c := src.c
	r.h.compute(b.x0, b.x1, lim.Min.X, lim.Max.X, outW)
	r.v.compute(b.y0, b.y1, lim.Min.Y, lim.Max.Y, outH)
	y0 := int(r.v.start[0])
	y1 := int(r.v.start[outH-1] + r.v.n[outH-1])
	for i := 0; i < outH; i++ {
		y0 = min(y0, int(r.v.start[i]))
		y1 = max(y1, int(r.v.start[i]+r.v.n[i]))
	}
	rowLen := outW * c
	r.tmp = grow(r.tmp, (y1-y0)*rowLen)
	r.acc = growI32(r.acc, rowLen)
	r.passes(src, y0, y1, outW, outH, flip, planar && c > 1, dst)
}

// layout describes the intermediate and output rows of the two passes: one interleaved
// plane of rows of outW·c samples, or c planes of rows of outW samples.
type layout struct {
	planes int // 1 or c
	rowLen int // samples in a row of one plane
}

func layoutOf(c, outW int, planar bool) layout {
	if planar {
		return layout{planes: c, rowLen: outW}
	}
	return layout{planes: 1, rowLen: outW * c}
}

// goPasses runs the horizontal pass over rows [y0, y1) of src into r.tmp, then the vertical
// pass into dst, in Go. When planar is set, r.tmp and dst hold one plane per channel.
func (r *resampler) goPasses(src plane, y0, y1, outW, outH int, flip, planar bool, dst []byte) {
	c := src.c
	lo := layoutOf(c, outW, planar)
	tmpPlane := (y1 - y0) * lo.rowLen
	for y := y0; y < y1; y++ {
		in := src.pix[y*src.stride:]
		if planar {
			r.horizontalPlanar(r.tmp[(y-y0)*lo.rowLen:], tmpPlane, in, c, outW, flip)
			continue
		}
		out := r.tmp[(y-y0)*lo.rowLen : (y-y0+1)*lo.rowLen]
		r.horizontal(out, in, c, outW, flip)
	}
	acc := r.acc[:lo.rowLen]
	for p := range lo.planes {
		tmp := r.tmp[p*tmpPlane : (p+1)*tmpPlane]
		dp := dst[p*outH*lo.rowLen : (p+1)*outH*lo.rowLen]
		rowLen := lo.rowLen
		for i := 0; i < outH; i++ {
			s, n := int(r.v.start[i]), int(r.v.n[i])
			k := r.v.k[i*r.v.ksize : i*r.v.ksize+n]
			out := dp[i*rowLen : (i+1)*rowLen]
			if n == 1 && k[0] == 1<<precisionBits {
				copy(out, tmp[(s-y0)*rowLen:])
				continue
			}
			for j := range acc {
				acc[j] = half
			}
			for t, w := range k {
				row := tmp[(s+t-y0)*rowLen : (s+t-y0+1)*rowLen]
				row = row[:len(acc)]
				for j, v := range row {
					acc[j] += int32(v) * w
				}
			}
			for j, v := range acc {
				out[j] = clip8(v)
			}
		}
	}
}

// horizontalPlanar resamples one row of c channels into c planes: channel ch of output
// pixel x goes to out[ch*plane+x].
func (r *resampler) horizontalPlanar(out []byte, plane int, in []byte, c, outW int, flip bool) {
	a := &r.h
	ks := a.ksize
	for i := 0; i < outW; i++ {
		s, n := int(a.start[i]), int(a.n[i])
		k := a.k[i*ks : i*ks+n]
		o := i
		if flip {
			o = outW - 1 - i
		}
		for ch := range c {
			v := int32(half)
			for t, w := range k {
				v += int32(in[(s+t)*c+ch]) * w
			}
			out[ch*plane+o] = clip8(v)
		}
	}
}

// horizontal resamples one row.
func (r *resampler) horizontal(out, in []byte, c, outW int, flip bool) {
	a := &r.h
	ks := a.ksize
	if c == 3 {
		for i := 0; i < outW; i++ {
			s, n := int(a.start[i]), int(a.n[i])
			k := a.k[i*ks : i*ks+n]
			p := in[3*s : 3*(s+n)]
			cr, cg, cb := int32(half), int32(half), int32(half)
			for t, w := range k {
				q := p[3*t : 3*t+3]
				cr += int32(q[0]) * w
				cg += int32(q[1]) * w
				cb += int32(q[2]) * w
			}
			o := i
			if flip {
				o = outW - 1 - i
			}
			d := out[3*o : 3*o+3]
			d[0], d[1], d[2] = clip8(cr), clip8(cg), clip8(cb)
		}
		return
	}
	for i := 0; i < outW; i++ {
		s, n := int(a.start[i]), int(a.n[i])
		k := a.k[i*ks : i*ks+n]
		p := in[s : s+n]
		v := int32(half)
		for t, w := range k {
			v += int32(p[t]) * w
		}
		o := i
		if flip {
			o = outW - 1 - i
		}
		out[o] = clip8(v)
	}
}

// scaleFor returns the smallest num in 1..8 at which a cw × ch crop scaled by num/8 still
// covers outW × outH, or 8.
func scaleFor(cw, ch, outW, outH int) int {
	for num := 1; num < 8; num++ {
		if cw*num >= 8*outW && ch*num >= 8*outH {
			return num
		}
	}
	return 8
}

// simdScale returns the DCT scale to decode at when num/8 is the smallest that covers the
// output: 3/8 becomes 4/8 and 6/8 and 7/8 become 8/8. libjpeg-turbo has SIMD inverse DCTs
// only for 8/8, 4/8, 2/8 and 1/8; the others are scalar C (and at 6/8 and 7/8 the chroma
// of a 4:2:0 JPEG takes a 12x12 or 14x14 one), which costs more than the up to 4/3 more
// pixels per side the next SIMD scale decodes and resamples: with the benchmark's
// random-resized crops of 256-pixel JPEGs to 160, 9% less CPU per image (5/8 to 8/8, 1.6
// times the pixels per side, costs more than it saves, so 5/8 stays).
func simdScale(num int) int {
	switch num {
	case 3:
		return 4
	case 6, 7:
		return 8
	}
	return num
}
