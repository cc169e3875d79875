//go:build cgo

package imagefield

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestResampleCMatchesGo checks that the C passes give exactly the Go passes' bytes, for every
// filter (negative lobes clamp), channel count, tap count, stride, shrinking and enlarging,
// through each of their loops (scalar, SSE2, SSSE3 where the CPU has it).
func TestResampleCMatchesGo(t *testing.T) {
	if raceEnabled {
		t.Skip("600 random resizes: heavy and single-goroutine, run without -race (race_test.go)")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 600; it++ {
		c := []int{1, 1, 3, 4}[r.IntN(4)]
		sw, sh := 1+r.IntN(90), 1+r.IntN(90)
		dw, dh := 1+r.IntN(90), 1+r.IntN(90)
		if it%3 == 0 { // small changes of size: two taps, the SIMD loops
			sw, sh = 20+r.IntN(300), 20+r.IntN(300)
			dw, dh = sw+r.IntN(sw/8+1)-sw/16, sh+r.IntN(sh/8+1)-sh/16
		}
		f := []Filter{FilterBox, FilterLinear, FilterCatmullRom, FilterMitchell, FilterLanczos}[r.IntN(5)]
		num := []int{1, 2, 4, 5, 8}[r.IntN(5)]
		ah := axis{full: sw * 8 / num, num: num, sub: 1, src: sw, target: dw, outSub: 1, dst: dw}
		av := axis{full: sh * 8 / num, num: num, sub: 1, src: sh, target: dh, outSub: 1, dst: dh}
		th, tv := makeTaps(ah, f), makeTaps(av, f)
		switch it % 5 {
		case 0: // the loops for weights beyond 16 bits
			th.small, tv.small, th.w16, th.shuf = false, false, nil, nil
		case 1: // the SIMD loop without byte shuffles (no SSSE3)
			th.shuf, th.shufOK = nil, nil
		}
		sstride := sw*c + r.IntN(7)
		src := make([]byte, sstride*sh)
		for i := range src {
			src[i] = byte(r.UintN(256))
		}
		if r.IntN(3) == 0 { // hard edges: the lobes overshoot
			for i := range src {
				src[i] &= 0x80
				src[i] |= src[i] >> 1
			}
		}
		dstride := dw*c + r.IntN(5)
		goH, cH := make([]byte, dstride*sh), make([]byte, dstride*sh)
		resampleH(src, sw, sh, sstride, c, goH, dw, dstride, th)
		passH(src, sw, sh, sstride, c, cH, dw, dstride, th)
		if !bytes.Equal(goH, cH) {
			t.Fatalf("across: c%d %dx%d -> %d %s: C differs from Go", c, sw, sh, dw, f)
		}
		goV, cV := make([]byte, dstride*dh), make([]byte, dstride*dh)
		resampleV(goH, dw*c, dstride, goV, dh, dstride, tv)
		passV(goH, dw*c, dstride, cV, dh, dstride, tv)
		if !bytes.Equal(goV, cV) {
			t.Fatalf("down: c%d %d -> %d rows %s (n %d): C differs from Go", c, sh, dh, f, tv.n)
		}
	}
}
