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

func makeCoeffs(src, dst int, k kernel) coeffs {
	scale := float64(src) / float64(dst)
	fs := max(scale, 1)
	support := k.support * fs
	taps := int(math.Ceil(support))*2 + 1
	c := coeffs{start: make([]int, dst), taps: taps, w: make([]int32, dst*taps)}
	fw := make([]float64, taps)
	for i := 0; i < dst; i++ {
		center := (float64(i) + 0.5) * scale
		lo := max(int(center-support+0.5), 0)
		hi := min(int(center+support+0.5), src)
		if hi-lo > taps {
			hi = lo + taps
		}
		if hi <= lo { // degenerate: take the nearest sample
			lo = min(int(center), src-1)
			hi = lo + 1
		}
		sum := 0.0
		for j := lo; j < hi; j++ {
			v := k.f((float64(j) + 0.5 - center) / fs)
			fw[j-lo] = v
			sum += v
		}
		if sum == 0 {
			for j := lo; j < hi; j++ {
				fw[j-lo] = 1
			}
			sum = float64(hi - lo)
		}
		row := c.w[i*taps : i*taps+taps]
		total, big := int32(0), 0
		for j := 0; j < hi-lo; j++ {
			row[j] = int32(math.Round(fw[j] / sum * (1 << wbits)))
			total += row[j]
			if row[j] > row[big] {
				big = j
			}
		}
		row[big] += 1<<wbits - total // weights sum to exactly 1: flat areas stay flat
		c.start[i] = lo
		// Shift the window left when it would run past the end, keeping taps constant.
		if lo+taps > src {
			shift := lo + taps - src
			if shift > lo {
				shift = lo
			}
			if shift > 0 {
				copy(row[shift:], row[:taps-shift])
				clear(row[:shift])
				c.start[i] = lo - shift
			}
		}
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
	resample(src.pix, src.w, src.h, src.w*src.c, src.c, dst.pix, w, h, w*src.c, f, tmpBuf, tc)
	return dst
}

// narrow rewrites cf for a source shorter than its tap count: every window becomes the whole
// source (n taps starting at 0), weights moved to their absolute positions.
func narrow(cf coeffs, n int) coeffs {
	out := coeffs{start: make([]int, len(cf.start)), taps: n, w: make([]int32, len(cf.start)*n)}
	for i, s := range cf.start {
		for t := 0; t < cf.taps; t++ {
			j := s + t
			if j >= 0 && j < n {
				out.w[i*n+j] += cf.w[i*cf.taps+t]
			}
		}
	}
	return out
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
