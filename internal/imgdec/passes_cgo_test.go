//go:build cgo

package imgdec

import (
	"bytes"
	"image"
	"math/rand/v2"
	"testing"
)

// TestPassesMatchGo: the C passes give goPasses' pixels to the bit, for random boxes, sizes,
// channels, flips and layouts (interleaved or planar).
func TestPassesMatchGo(t *testing.T) {
	src := photo(300, 200)
	rgb := make([]byte, 300*200*3)
	g := make([]byte, 300*200)
	for i := 0; i < 300*200; i++ {
		copy(rgb[3*i:3*i+3], src.Pix[4*i:4*i+3])
		g[i] = src.Pix[4*i+1]
	}
	r := rand.New(rand.NewPCG(3, 4))
	var rs resampler
	for i := 0; i < 300; i++ {
		c := 3
		pix := rgb
		if i%3 == 0 {
			c, pix = 1, g
		}
		x0, y0 := r.IntN(299), r.IntN(199)
		x1, y1 := x0+1+r.IntN(300-x0-1), y0+1+r.IntN(200-y0-1)
		lim := image.Rect(x0, y0, x1, y1)
		outW, outH := 1+r.IntN(300), 1+r.IntN(300)
		flip := r.IntN(2) == 0
		planar := c > 1 && r.IntN(2) == 0
		p := plane{pix: pix, stride: 300 * c, c: c}
		want := make([]byte, outW*outH*c)
		got := make([]byte, outW*outH*c)
		rs.resample(p, box(lim), lim, outW, outH, flip, planar, got)
		// Same tables, Go passes.
		y0v := int(rs.v.start[0])
		y1v := 0
		for j := 0; j < outH; j++ {
			y0v = min(y0v, int(rs.v.start[j]))
			y1v = max(y1v, int(rs.v.start[j]+rs.v.n[j]))
		}
		rs.goPasses(p, y0v, y1v, outW, outH, flip, planar, want)
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d: %v to %dx%d c=%d flip=%v planar=%v: C and Go passes differ", i, lim, outW, outH, c, flip, planar)
		}
	}
}

// passesPair runs the C passes and goPasses on the same tables and says whether they agree;
// dst past the output is checked to be left alone.
func passesPair(t testing.TB, rs *resampler, p plane, lim image.Rectangle, outW, outH int, flip, planar bool) (got, want []byte) {
	t.Helper()
	n := outW * outH * p.c
	got = make([]byte, n+16)
	for i := range got {
		got[i] = 0xA5
	}
	want = make([]byte, n)
	rs.resample(p, box(lim), lim, outW, outH, flip, planar, got[:n])
	for _, v := range got[n:] {
		if v != 0xA5 {
			t.Fatalf("%v to %dx%d: wrote past dst", lim, outH, outW)
		}
	}
	y0, y1 := int(rs.v.start[0]), 0
	for j := 0; j < outH; j++ {
		y0 = min(y0, int(rs.v.start[j]))
		y1 = max(y1, int(rs.v.start[j]+rs.v.n[j]))
	}
	rs.goPasses(p, y0, y1, outW, outH, flip, planar, want)
	return got[:n], want
}

// The image of the two-tap tests.
const twoTapW, twoTapH = 97, 61

type twoTapCase struct {
	lim        image.Rectangle
	outW, outH int
}

// twoTapCases are crops of a w × h image and output sizes for the passes of up to four taps.
func twoTapCases(w, h int) []twoTapCase {
	cases := []twoTapCase{
		{image.Rect(0, 0, w, h), w, h},           // scale 1: one tap each
		{image.Rect(0, 0, w, h), 160, 100},       // upscale
		{image.Rect(10, 5, 30, 25), 160, 160},    // 8x upscale
		{image.Rect(0, 0, w, h), 70, 45},         // reduction under 1.5x
		{image.Rect(40, 20, w, h), 57, 41},       // at the right and bottom edges
		{image.Rect(w-9, h-3, w, h), 9, 3},       // the last 9 pixels, one tap
		{image.Rect(w-9, h-3, w, h), 17, 5},      // the last 9 pixels, upscaled
		{image.Rect(3, 3, 4, 4), 8, 8},           // one pixel
		{image.Rect(0, 0, 8, 1), 8, 1},           // one 8-pixel block
		{image.Rect(1, 2, 13, 9), 1, 1},          // one output
		{image.Rect(5, 7, 95, 60), 7, 40},        // under one block, reduced vertically only
		{image.Rect(0, 0, w, h), 65, 65},         // 1.49x: two taps
		{image.Rect(0, 0, w, h), 15, 9},          // wide reduction (generic pass)
		{image.Rect(20, 10, 44, 30), 24 * 5, 29}, // exact 5x
		{image.Rect(0, 10, 33, 30), 31, 100},     // 33 to 31
		{image.Rect(64, 0, 97, 61), 33 * 3, 2},   // exact 3x at the right edge
		{image.Rect(0, 60, 97, 61), 200, 1},      // the last row alone
		{image.Rect(96, 0, 97, 61), 1, 61},       // the last column alone
		{image.Rect(96, 60, 97, 61), 9, 9},       // the last pixel, upscaled
		{image.Rect(0, 0, w, h), 96, 60},         // just under scale 1
		{image.Rect(0, 0, w, h), 98, 62},         // just over scale 1
		{image.Rect(0, 0, w, h), 60, 40},         // 1.6x: three taps
		{image.Rect(0, 0, w, h), 48, 30},         // 2x: three or four taps
		{image.Rect(0, 0, 96, h), 40, 25},        // 2.4x: four taps
		{image.Rect(40, 20, w, h), 33, 20},       // 1.7x at the right and bottom edges
		{image.Rect(w-17, h-5, w, h), 8, 2},      // 2.1x, the last 17 pixels
		{image.Rect(1, 0, w, h), 41, 61},         // 2.3x horizontally only
	}
	// Right-edge crops reduced 1.6x and 1.2x: the last blocks' windows end at every distance
	// from the input's end.
	for k := 8; k <= 48; k++ {
		cases = append(cases, twoTapCase{image.Rect(w-k, h-2, w, h), max(k*5/8, 1), 1}, twoTapCase{image.Rect(w-k, h-2, w, h), k * 5 / 6, 2})
	}
	return cases
}

// TestTwoTapPlanarMatchesGo: the planar RGB passes for filters of up to four taps (upscales
// and reductions under 2.5x; on AVX2 CPUs the shuffle and gather passes) give goPasses'
// pixels to the bit: widths on both sides of their 8-pixel blocks, one-tap outputs (scale
// 1), crops at the image's right and bottom edges (the last row read ends the buffer, or 1
// to 3 bytes before it), mirrored or not.
func TestTwoTapPlanarMatchesGo(t *testing.T) {
	src := photo(twoTapW, twoTapH)
	const w, h = twoTapW, twoTapH
	rgb := make([]byte, w*h*3, w*h*3+3)
	for i := 0; i < w*h; i++ {
		copy(rgb[3*i:3*i+3], src.Pix[4*i:4*i+3])
	}
	var rs resampler
	for _, tc := range twoTapCases(w, h) {
		for _, extra := range []int{0, 1, 2, 3} {
			p := plane{pix: rgb[:w*h*3+extra], stride: w * 3, c: 3}
			for _, flip := range []bool{false, true} {
				for _, planar := range []bool{true, false} {
					got, want := passesPair(t, &rs, p, tc.lim, tc.outW, tc.outH, flip, planar)
					if !bytes.Equal(got, want) {
						t.Fatalf("%v to %dx%d (%d taps at most), %d bytes after the image, flip=%v planar=%v: C and Go passes differ",
							tc.lim, tc.outH, tc.outW, rs.h.maxN, extra, flip, planar)
					}
				}
			}
		}
	}
}

// FuzzPassesMatchGo: for any image size, crop, output size, flip and layout, the C passes
// give goPasses' pixels and never write past the output.
func FuzzPassesMatchGo(f *testing.F) {
	f.Add(uint8(97), uint8(61), uint8(0), uint8(0), uint8(97), uint8(61), uint8(160), uint8(100), true, true, uint8(0))
	f.Add(uint8(30), uint8(20), uint8(5), uint8(3), uint8(30), uint8(20), uint8(17), uint8(9), false, true, uint8(1))
	f.Add(uint8(8), uint8(1), uint8(0), uint8(0), uint8(8), uint8(1), uint8(8), uint8(1), true, false, uint8(2))
	var rs resampler
	f.Fuzz(func(t *testing.T, w, h, x0, y0, x1, y1, ow, oh uint8, flip, planar bool, grey uint8) {
		iw, ih := int(w)+1, int(h)+1
		c := 3
		if grey%3 == 0 {
			c, planar = 1, false
		}
		src := photo(iw, ih)
		pix := make([]byte, 0, iw*ih*c)
		for i := 0; i < iw*ih; i++ {
			pix = append(pix, src.Pix[4*i:4*i+c]...)
		}
		lim := image.Rect(int(x0)%iw, int(y0)%ih, int(x1)%(iw+1), int(y1)%(ih+1)).Canon()
		if lim.Empty() {
			lim = image.Rect(0, 0, iw, ih)
		}
		p := plane{pix: pix, stride: iw * c, c: c}
		got, want := passesPair(t, &rs, p, lim, int(ow)+1, int(oh)+1, flip, planar)
		if !bytes.Equal(got, want) {
			t.Fatalf("%dx%d c=%d %v to %dx%d flip=%v planar=%v: C and Go passes differ", ih, iw, c, lim, int(oh)+1, int(ow)+1, flip, planar)
		}
	})
}

// BenchmarkPasses times the two passes alone on a 256×192 RGB image: the whole image to
// 160×160 (a reduction of 1.2-1.6x: two or three taps) and a 120×100 crop to 160×160 (an
// upscale: two taps, as most of the loader's random-resized crops), interleaved (hwc) or
// one plane per channel (chw, the loader's ToCHW).
func BenchmarkPasses(b *testing.B) {
	src := photo(256, 192)
	rgb := make([]byte, 256*192*3)
	for i := 0; i < 256*192; i++ {
		copy(rgb[3*i:3*i+3], src.Pix[4*i:4*i+3])
	}
	p := plane{pix: rgb, stride: 256 * 3, c: 3}
	dst := make([]byte, 160*160*3)
	for _, crop := range []struct {
		name string
		lim  image.Rectangle
	}{{"down", image.Rect(0, 0, 256, 192)}, {"up", image.Rect(50, 40, 170, 140)}} {
		for _, planar := range []bool{false, true} {
			for _, impl := range []string{"c", "go"} {
				name := crop.name + "/hwc/" + impl
				if planar {
					name = crop.name + "/chw/" + impl
				}
				b.Run(name, func(b *testing.B) {
					var rs resampler
					rs.resample(p, box(crop.lim), crop.lim, 160, 160, false, planar, dst)
					y0, y1 := int(rs.v.start[0]), int(rs.v.start[159]+rs.v.n[159])
					cpu := cpuTime()
					for b.Loop() {
						if impl == "c" {
							rs.passes(p, y0, y1, 160, 160, false, planar, dst)
						} else {
							rs.goPasses(p, y0, y1, 160, 160, false, planar, dst)
						}
					}
					report(b, cpu)
				})
			}
		}
	}
}
