package imagefield

import "math"

// pixbuf is an 8-bit interleaved image: h rows of w pixels of c channels (1, 3 or 4), packed.
type pixbuf struct {
	pix     []byte
	w, h, c int
}

type kernel struct {
	support float64
	f       func(float64) float64
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	x *= math.Pi
	return math.Sin(x) / x
}

func cubic(b, c float64) func(float64) float64 {
	return func(x float64) float64 {
		x = math.Abs(x)
		switch {
		case x < 1:
			return ((12-9*b-6*c)*x*x*x + (-18+12*b+6*c)*x*x + (6 - 2*b)) / 6
		case x < 2:
			return ((-b-6*c)*x*x*x + (6*b+30*c)*x*x + (-12*b-48*c)*x + (8*b + 24*c)) / 6
		}
		return 0
	}
}

func kernelFor(f Filter) kernel {
	switch f {
	case FilterLinear:
		return kernel{1, func(x float64) float64 { return max(0, 1-math.Abs(x)) }}
	case FilterCatmullRom:
		return kernel{2, cubic(0, 0.5)}
	case FilterMitchell:
		return kernel{2, cubic(1.0/3, 1.0/3)}
	case FilterLanczos:
		return kernel{3, func(x float64) float64 {
			if x <= -3 || x >= 3 {
				return 0
			}
			return sinc(x) * sinc(x/3)
		}}
	}
	// Box: area averaging when shrinking.
	return kernel{0.5, func(x float64) float64 {
		if x >= -0.5 && x < 0.5 {
			return 1
		}
		return 0
	}}
}

const wbits = 14 // fixed-point precision of the resampling weights

// coeffs holds, for each output position, the first source index and taps weights.
type coeffs struct {
	start []int
	taps  int
	w     []int32 // len(start) * taps, zero-padded
	// span[i] is output i's non-zero weights: w[i*taps+span[i].lo : i*taps+span[i].hi],
	// applying to source indexes start[i]+span[i].lo onwards.
	span []span
}

type span struct{ lo, hi int }

// trim fills c.span with each output's run of non-zero weights.
func (c *coeffs) trim() {
	c.span = make([]span, len(c.start))
	for i := range c.start {
		row := c.w[i*c.taps : (i+1)*c.taps]
		lo, hi := 0, len(row)
		for lo < hi && row[lo] == 0 {
			lo++
		}
		for hi > lo && row[hi-1] == 0 {
			hi--
		}
		c.span[i] = span{lo, hi}
	}
}

// axis is one axis of a resampling, from a source plane to an output plane across the same
// full-resolution image axis.
//
// The source's samples may be a DCT-scaled decode (scale num/8) of a chroma plane (sub
// full-resolution pixels per sample); its sample j then covers the full-resolution pixels
// [j·8·sub/num, (j+1)·8·sub/num). The output's sample i covers the outSub pixels
// [i·outSub−pad, (i+1)·outSub−pad) of a target image target pixels across (pad, the target
// pixels the first sample covers before the image starts, places a chroma grid that is
// anchored at the other end: see chromaPad). The weights are those of the filter applied to the full-resolution
// image, each full-resolution pixel's weight going to the source samples that cover it (in
// proportion to the overlap): the DCT-scaled decode plus the resampler then approximate the
// filter on the full-resolution decode, whatever the scale, and the same sums serve a small
// enlargement when the DCT scale falls a little short of the target (see dctScale). For a
// plain resize (plainAxis) these are the weights of the filter on the source itself.
type axis struct {
	full, num, sub int // full-resolution pixels; DCT scale num/8; full pixels per source sample at 8/8
	src            int // source samples
	target, outSub int // target image pixels; target pixels per output sample
	pad            int // target pixels before the first output sample's start (0 ≤ pad < outSub)
	dst            int // output samples
}

// plainAxis is a resize of src samples to dst.
func plainAxis(src, dst int) axis {
	return axis{full: src, num: 8, sub: 1, src: src, target: dst, outSub: 1, dst: dst}
}

// makeCoeffs returns the fixed-point weights of kernel k along a.
func makeCoeffs(a axis, k kernel) coeffs {
	perTarget := float64(a.full) / float64(a.target)
	scale := float64(a.outSub) * perTarget   // full pixels per output
	fac := float64(a.num) / float64(8*a.sub) // source samples per full pixel
	plain := a.num == 8 && a.sub == 1 && a.full == a.src
	fs := max(scale, 1)
	support := k.support * fs
	type row struct {
		start int
		w     []float64
	}
	rows := make([]row, a.dst)
	taps := 1
	var fw []float64
	for i := range rows {
		center := (float64(i)+0.5)*scale - float64(a.pad)*perTarget
		lo := max(int(center-support+0.5), 0)
		hi := min(int(center+support+0.5), a.full)
		if hi <= lo { // degenerate: take the nearest pixel
			lo = min(int(center), a.full-1)
			hi = lo + 1
		}
		fw = fw[:0]
		sum := 0.0
		for p := lo; p < hi; p++ {
			v := k.f((float64(p) + 0.5 - center) / fs)
			fw = append(fw, v)
			sum += v
		}
		if sum == 0 {
			for j := range fw {
				fw[j] = 1
			}
		}
		r := row{start: lo}
		if plain {
			r.w = append([]float64(nil), fw...)
		} else {
			// Spread each full-resolution pixel's weight over the source samples it overlaps;
			// the last sample takes whatever lies past the end of the plane.
			jlo := min(int(float64(lo)*fac), a.src-1)
			jhi := max(min(int(math.Ceil(float64(hi)*fac)), a.src), jlo+1)
			r.start, r.w = jlo, make([]float64, jhi-jlo)
			for p := lo; p < hi; p++ {
				x0, x1 := float64(p)*fac, float64(p+1)*fac
				for j := jlo; j < jhi; j++ {
					e := float64(j + 1)
					if j == a.src-1 {
						e = math.Inf(1)
					}
					if o := min(x1, e) - max(x0, float64(j)); o > 0 {
						r.w[j-jlo] += fw[p-lo] * o
					}
				}
			}
		}
		rows[i] = r
		taps = max(taps, len(r.w))
	}
	c := coeffs{start: make([]int, a.dst), taps: taps, w: make([]int32, a.dst*taps)}
	for i, r := range rows {
		sum := 0.0
		for _, v := range r.w {
			sum += v
		}
		w := c.w[i*taps : i*taps+taps]
		total, big := int32(0), 0
		for j, v := range r.w {
			w[j] = int32(math.Round(v / sum * (1 << wbits)))
			total += w[j]
			if w[j] > w[big] {
				big = j
			}
		}
		w[big] += 1<<wbits - total // weights sum to exactly 1: flat areas stay flat
		c.start[i] = r.start
	}
	return c
}

// scratch is one worker's reusable pixel buffers and resampling weights. A nil *scratch
// allocates fresh buffers.
type scratch struct {
	dec, tmp, out []byte
	taps          tapsCache
}

// take returns (*b)[:n], growing *b when needed; with b nil it allocates.
func take(b *[]byte, n int) []byte {
	if b == nil {
		return make([]byte, n)
	}
	if cap(*b) < n {
		*b = make([]byte, n)
	}
	return (*b)[:n]
}

// resize scales src to w×h with filter f. It returns src itself when the size is unchanged.
// With s non-nil the result and the intermediate rows live in s's buffers (valid until the
// next resize with s).
func resize(src pixbuf, w, h int, f Filter, s ...*scratch) pixbuf {
	return resizeAxes(src, plainAxis(src.w, w), plainAxis(src.h, h), f, s...)
}

// resizeAxes scales src along the axes ah and av (see axis; their src sizes are src's) with
// filter f, like resize.
func resizeAxes(src pixbuf, ah, av axis, f Filter, s ...*scratch) pixbuf {
	w, h := ah.dst, av.dst
	if w == src.w && h == src.h {
		return src
	}
	var tmpBuf, outBuf *[]byte
	var tc *tapsCache
	if len(s) > 0 && s[0] != nil {
		tmpBuf, outBuf, tc = &s[0].tmp, &s[0].out, &s[0].taps
	}
	if f == FilterNearest {
		return resizeNearest(src, w, h, take(outBuf, w*h*src.c))
	}
	var tmp []byte
	if tmpBuf == nil {
		tmpBuf = &tmp
	}
	dst := pixbuf{pix: take(outBuf, w*h*src.c), w: w, h: h, c: src.c}
	resample(src.pix, src.w*src.c, src.c, dst.pix, w*src.c, ah, av, f, tmpBuf, tc)
	return dst
}

func resizeNearest(src pixbuf, w, h int, buf []byte) pixbuf {
	c := src.c
	dst := pixbuf{pix: buf, w: w, h: h, c: c}
	xs := make([]int, w)
	for x := range xs {
		xs[x] = min(int((float64(x)+0.5)*float64(src.w)/float64(w)), src.w-1) * c
	}
	for y := 0; y < h; y++ {
		sy := min(int((float64(y)+0.5)*float64(src.h)/float64(h)), src.h-1)
		srow := src.pix[sy*src.w*c : (sy+1)*src.w*c]
		drow := dst.pix[y*w*c : (y+1)*w*c]
		for x, sx := range xs {
			copy(drow[x*c:x*c+c], srow[sx:sx+c])
		}
	}
	return dst
}

// orient applies EXIF orientation o (1..8) to b. Orientations 5..8 swap width and height.
func orient(b pixbuf, o int) pixbuf {
	if o <= 1 || o > 8 {
		return b
	}
	w, h, c := b.w, b.h, b.c
	ow, oh := w, h
	if o >= 5 {
		ow, oh = h, w
	}
	dst := pixbuf{pix: make([]byte, len(b.pix)), w: ow, h: oh, c: c}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var dx, dy int
			switch o {
			case 2: // mirror horizontal
				dx, dy = w-1-x, y
			case 3: // rotate 180
				dx, dy = w-1-x, h-1-y
			case 4: // mirror vertical
				dx, dy = x, h-1-y
			case 5: // transpose
				dx, dy = y, x
			case 6: // rotate 90 CW
				dx, dy = h-1-y, x
			case 7: // transverse
				dx, dy = h-1-y, w-1-x
			case 8: // rotate 270 CW
				dx, dy = y, w-1-x
			}
			copy(dst.pix[(dy*ow+dx)*c:(dy*ow+dx)*c+c], b.pix[(y*w+x)*c:(y*w+x)*c+c])
		}
	}
	return dst
}
