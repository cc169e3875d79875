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

func BenchmarkPasses(b *testing.B) {
	src := photo(256, 192)
	rgb := make([]byte, 256*192*3)
	for i := 0; i < 256*192; i++ {
		copy(rgb[3*i:3*i+3], src.Pix[4*i:4*i+3])
	}
	p := plane{pix: rgb, stride: 256 * 3, c: 3}
	lim := image.Rect(0, 0, 256, 192)
	dst := make([]byte, 160*160*3)
	for _, impl := range []string{"c", "go"} {
		b.Run(impl, func(b *testing.B) {
			var rs resampler
			rs.resample(p, box(lim), lim, 160, 160, false, false, dst)
			y0, y1 := 0, 192
			cpu := cpuTime()
			for b.Loop() {
				if impl == "c" {
					rs.passes(p, y0, y1, 160, 160, false, false, dst)
				} else {
					rs.goPasses(p, y0, y1, 160, 160, false, false, dst)
				}
			}
			report(b, cpu)
		})
	}
}
