package imagefield

// The separable resampler: a horizontal pass into a temporary image, then a vertical pass (or
// the other way round). Weights are the fixed-point ones of makeCoeffs, compacted to a
// constant tap count per axis (zero weights trimmed, windows kept inside the source), so that
// the inner loops have no per-output span lookups and no bounds checks; the common small tap
// counts have unrolled loops. Results are exactly those of the plain sum of weight × sample:
// half is added, the sum shifted by wbits and clamped to 0..255. The passes run in C (SIMD on
// x86-64, resample_cgo.go) when cgo is on, in Go otherwise, with the same bytes.

// taps is one axis's compacted weights: output i reads src[start[i] : start[i]+n] with
// weights w[i*n : i*n+n].
type taps struct {
	src   int // source samples
	start []int32
	n     int
	w     []int32
	rec   []int32 // per output: start, then the n weights (filled by pack)
	k2    []tap2  // n == 2: the same as records
	k3    []tap3  // n == 3
	// pos is true when no weight is negative (box, linear): sums then stay within 0..255
	// (the weights of each output add up to exactly 1), and need no clamping.
	pos bool
	// small is true when every weight fits in 16 bits (the C passes' SIMD loops need it).
	small bool
	// ident is true when output i is source sample i: the pass is a copy.
	ident bool
	cTaps // the weights as the C passes read them (empty without cgo)
}

type tap2 struct{ st, w0, w1 int32 }

type tap3 struct{ st, w0, w1, w2 int32 }

type tapsKey struct {
	a axis
	f Filter
}

// tapsCache keeps the weights of the sizes a worker has seen (datasets repeat sizes).
type tapsCache struct {
	m map[tapsKey]*taps
}

const tapsCacheMax = 64

func (c *tapsCache) get(a axis, f Filter) *taps {
	if c == nil {
		return makeTaps(a, f)
	}
	k := tapsKey{a, f}
	if t, ok := c.m[k]; ok {
		return t
	}
	if c.m == nil || len(c.m) >= tapsCacheMax {
		c.m = make(map[tapsKey]*taps)
	}
	t := makeTaps(a, f)
	c.m[k] = t
	return t
}

// makeTaps compacts makeCoeffs' weights along a with filter f.
func makeTaps(a axis, f Filter) *taps {
	cf := makeCoeffs(a, kernelFor(f))
	src, dst := a.src, a.dst
	cf.trim()
	n := 1
	for _, s := range cf.span {
		n = max(n, s.hi-s.lo)
	}
	n = min(n, src)
	t := &taps{src: src, start: make([]int32, dst), n: n, w: make([]int32, dst*n)}
	for i, s := range cf.span {
		st := cf.start[i] + s.lo
		k := s.hi - s.lo
		off := 0
		if st+n > src { // keep the window inside the source: shift it left
			off = st + n - src
			st -= off
		}
		if k > 0 {
			copy(t.w[i*n+off:i*n+off+k], cf.w[i*cf.taps+s.lo:i*cf.taps+s.hi])
		}
		t.start[i] = int32(st)
	}
	t.pos, t.small, t.ident = true, true, src == dst && n == 1
	for i, w := range t.w {
		if w < 0 {
			t.pos = false
		}
		if w < -1<<15 || w >= 1<<15 {
			t.small = false
		}
		if t.ident && (w != 1<<wbits || t.start[i] != int32(i)) {
			t.ident = false
		}
	}
	t.pack()
	t.prepare()
	return t
}

// resample scales the image src (c interleaved channels, rows sstride bytes apart) along the
// axes ah (across) and av (down) into dst (rows dstride bytes apart) with filter f (not
// FilterNearest). tmp is scratch space, grown when needed; tc caches weights (may be nil).
// An axis that keeps its size in a plain resize, or whose weights make a copy, is left as it
// is.
func resample(src []byte, sstride, c int, dst []byte, dstride int, ah, av axis, f Filter, tmp *[]byte, tc *tapsCache) {
	sw, sh, dw, dh := ah.src, av.src, ah.dst, av.dst
	var th, tv *taps
	keepH := ah == plainAxis(sw, sw)
	if !keepH {
		th = tc.get(ah, f)
		keepH = th.ident
	}
	keepV := av == plainAxis(sh, sh)
	if !keepV {
		tv = tc.get(av, f)
		keepV = tv.ident
	}
	switch {
	case keepH && keepV:
		for y := 0; y < sh; y++ {
			copy(dst[y*dstride:y*dstride+dw*c], src[y*sstride:y*sstride+sw*c])
		}
		return
	case keepH:
		passV(src, sw*c, sstride, dst, dh, dstride, tv)
		return
	case keepV:
		passH(src, sw, sh, sstride, c, dst, dw, dstride, th)
		return
	}
	// Pick the cheaper order; a horizontal tap costs about twice a vertical one (the vertical
	// pass runs straight along rows). The order depends only on the sizes: deterministic.
	hFirst := 2*sh*dw*th.n + dh*dw*tv.n
	vFirst := dh*sw*tv.n + 2*dh*dw*th.n
	if hFirst <= vFirst {
		t := take(tmp, dw*c*sh)
		passH(src, sw, sh, sstride, c, t, dw, dw*c, th)
		passV(t, dw*c, dw*c, dst, dh, dstride, tv)
		return
	}
	t := take(tmp, sw*c*dh)
	passV(src, sw*c, sstride, t, dh, sw*c, tv)
	passH(t, sw, dh, sw*c, c, dst, dw, dstride, th)
}

const half = 1 << (wbits - 1) // rounding term of the fixed-point sums

// clampW converts a sum that already holds the rounding term to a byte.
func clampW(acc int32) byte {
	v := acc >> wbits
	if uint32(v) > 255 {
		if v < 0 {
			return 0
		}
		return 255
	}
	return byte(v)
}

func resampleH(src []byte, sw, sh, sstride, c int, dst []byte, dw, dstride int, t *taps) {
	n := t.n
	for y := 0; y < sh; y++ {
		srow := src[y*sstride : y*sstride+sw*c]
		drow := dst[y*dstride : y*dstride+dw*c]
		switch {
		case c == 1 && n == 2 && t.pos:
			h1x2pos(srow, drow, t.k2)
		case c == 1 && n == 3 && t.pos:
			h1x3pos(srow, drow, t.k3)
		case c == 1 && n == 2:
			h1x2(srow, drow, t.k2)
		case c == 1 && n == 3:
			h1x3(srow, drow, t.k3)
		case c == 3 && n == 2:
			h3x2(srow, drow, t.rec)
		case c == 3 && n == 3:
			h3x3(srow, drow, t.rec)
		case c == 3:
			h3(srow, drow, t)
		default:
			hN(srow, drow, c, t)
		}
	}
}

// pack fills t.rec: per output, the first source index followed by the n weights.
func (t *taps) pack() {
	n := t.n
	t.rec = make([]int32, len(t.start)*(n+1))
	for i, st := range t.start {
		t.rec[i*(n+1)] = st
		copy(t.rec[i*(n+1)+1:(i+1)*(n+1)], t.w[i*n:(i+1)*n])
	}
	switch n {
	case 2:
		t.k2 = make([]tap2, len(t.start))
		for i, st := range t.start {
			t.k2[i] = tap2{st, t.w[2*i], t.w[2*i+1]}
		}
	case 3:
		t.k3 = make([]tap3, len(t.start))
		for i, st := range t.start {
			t.k3[i] = tap3{st, t.w[3*i], t.w[3*i+1], t.w[3*i+2]}
		}
	}
}

func h1x2(srow, drow []byte, ks []tap2) {
	ks = ks[:len(drow)]
	for x, k := range ks {
		s := srow[k.st:]
		s = s[:2:2]
		drow[x] = clampW(half + k.w0*int32(s[0]) + k.w1*int32(s[1]))
	}
}

func h1x3(srow, drow []byte, ks []tap3) {
	ks = ks[:len(drow)]
	for x, k := range ks {
		s := srow[k.st:]
		s = s[:3:3]
		drow[x] = clampW(half + k.w0*int32(s[0]) + k.w1*int32(s[1]) + k.w2*int32(s[2]))
	}
}

func h1x2pos(srow, drow []byte, ks []tap2) {
	ks = ks[:len(drow)]
	for x, k := range ks {
		s := srow[k.st:]
		s = s[:2:2]
		drow[x] = byte((half + k.w0*int32(s[0]) + k.w1*int32(s[1])) >> wbits)
	}
}

func h1x3pos(srow, drow []byte, ks []tap3) {
	ks = ks[:len(drow)]
	for x, k := range ks {
		s := srow[k.st:]
		s = s[:3:3]
		drow[x] = byte((half + k.w0*int32(s[0]) + k.w1*int32(s[1]) + k.w2*int32(s[2])) >> wbits)
	}
}

func h3x2(srow, drow []byte, rec []int32) {
	m := len(drow) / 3
	rec = rec[:3*m]
	for x := 0; x < m; x++ {
		r := rec[3*x : 3*x+3 : 3*x+3]
		s := srow[3*r[0]:]
		s = s[:6:6]
		w0, w1 := r[1], r[2]
		d := drow[3*x : 3*x+3 : 3*x+3]
		d[0] = clampW(half + w0*int32(s[0]) + w1*int32(s[3]))
		d[1] = clampW(half + w0*int32(s[1]) + w1*int32(s[4]))
		d[2] = clampW(half + w0*int32(s[2]) + w1*int32(s[5]))
	}
}

func h3x3(srow, drow []byte, rec []int32) {
	m := len(drow) / 3
	rec = rec[:4*m]
	for x := 0; x < m; x++ {
		r := rec[4*x : 4*x+4 : 4*x+4]
		s := srow[3*r[0]:]
		s = s[:9:9]
		w0, w1, w2 := r[1], r[2], r[3]
		d := drow[3*x : 3*x+3 : 3*x+3]
		d[0] = clampW(half + w0*int32(s[0]) + w1*int32(s[3]) + w2*int32(s[6]))
		d[1] = clampW(half + w0*int32(s[1]) + w1*int32(s[4]) + w2*int32(s[7]))
		d[2] = clampW(half + w0*int32(s[2]) + w1*int32(s[5]) + w2*int32(s[8]))
	}
}

func h3(srow, drow []byte, t *taps) {
	n := t.n
	for x, st := range t.start[:len(drow)/3] {
		o := int(st) * 3
		s := srow[o : o+3*n]
		w := t.w[x*n : x*n+n]
		r, g, b := int32(half), int32(half), int32(half)
		for _, wt := range w {
			p := s[:3:3]
			r += wt * int32(p[0])
			g += wt * int32(p[1])
			b += wt * int32(p[2])
			s = s[3:]
		}
		d := drow[3*x : 3*x+3 : 3*x+3]
		d[0], d[1], d[2] = clampW(r), clampW(g), clampW(b)
	}
}

func hN(srow, drow []byte, c int, t *taps) {
	n := t.n
	for x, st := range t.start[:len(drow)/c] {
		o := int(st) * c
		s := srow[o : o+c*n]
		w := t.w[x*n : x*n+n]
		for ch := 0; ch < c; ch++ {
			a := int32(half)
			for i, wt := range w {
				a += wt * int32(s[i*c+ch])
			}
			drow[x*c+ch] = clampW(a)
		}
	}
}

// resampleV resamples rows of rowLen bytes (rows sstride apart) to dh rows.
func resampleV(src []byte, rowLen, sstride int, dst []byte, dh, dstride int, t *taps) {
	n := t.n
	var acc []int32
	if n > 4 {
		acc = make([]int32, rowLen)
	}
	for y := 0; y < dh; y++ {
		st := int(t.start[y])
		w := t.w[y*n : y*n+n]
		d := dst[y*dstride : y*dstride+rowLen]
		row := func(k int) []byte {
			o := (st + k) * sstride
			return src[o : o+rowLen]
		}
		switch {
		case n == 2 && t.pos:
			r0, r1 := row(0), row(1)
			r0, r1 = r0[:len(d)], r1[:len(d)]
			w0, w1 := w[0], w[1]
			for i := range d {
				d[i] = byte((half + w0*int32(r0[i]) + w1*int32(r1[i])) >> wbits)
			}
		case n == 3 && t.pos:
			r0, r1, r2 := row(0), row(1), row(2)
			r0, r1, r2 = r0[:len(d)], r1[:len(d)], r2[:len(d)]
			w0, w1, w2 := w[0], w[1], w[2]
			for i := range d {
				d[i] = byte((half + w0*int32(r0[i]) + w1*int32(r1[i]) + w2*int32(r2[i])) >> wbits)
			}
		case n == 1:
			r0, w0 := row(0), w[0]
			r0 = r0[:len(d)]
			for i := range d {
				d[i] = clampW(half + w0*int32(r0[i]))
			}
		case n == 2:
			r0, r1 := row(0), row(1)
			r0, r1 = r0[:len(d)], r1[:len(d)]
			w0, w1 := w[0], w[1]
			for i := range d {
				d[i] = clampW(half + w0*int32(r0[i]) + w1*int32(r1[i]))
			}
		case n == 3:
			r0, r1, r2 := row(0), row(1), row(2)
			r0, r1, r2 = r0[:len(d)], r1[:len(d)], r2[:len(d)]
			w0, w1, w2 := w[0], w[1], w[2]
			for i := range d {
				d[i] = clampW(half + w0*int32(r0[i]) + w1*int32(r1[i]) + w2*int32(r2[i]))
			}
		case n == 4:
			r0, r1, r2, r3 := row(0), row(1), row(2), row(3)
			r0, r1, r2, r3 = r0[:len(d)], r1[:len(d)], r2[:len(d)], r3[:len(d)]
			w0, w1, w2, w3 := w[0], w[1], w[2], w[3]
			for i := range d {
				d[i] = clampW(half + w0*int32(r0[i]) + w1*int32(r1[i]) + w2*int32(r2[i]) + w3*int32(r3[i]))
			}
		default:
			acc := acc[:len(d)]
			for k, wt := range w {
				r := row(k)
				r = r[:len(acc)]
				if k == 0 {
					for i, v := range r {
						acc[i] = half + wt*int32(v)
					}
					continue
				}
				for i, v := range r {
					acc[i] += wt * int32(v)
				}
			}
			for i, a := range acc {
				d[i] = clampW(a)
			}
		}
	}
}
