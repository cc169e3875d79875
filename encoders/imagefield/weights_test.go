package imagefield

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// plainTapsHash hashes the resampling weights of plain (not DCT-scaled) resizes over a grid
// of sizes and every filter.
func plainTapsHash(get func(src, dst int, f Filter) *taps) uint32 {
	h := crc32.NewIEEE()
	var b [4]byte
	put := func(v int32) {
		binary.LittleEndian.PutUint32(b[:], uint32(v))
		h.Write(b[:])
	}
	sizes := []int{1, 2, 3, 5, 7, 16, 31, 64, 100, 187, 192, 250, 256, 313, 375, 500, 1000}
	for _, f := range []Filter{FilterBox, FilterLinear, FilterCatmullRom, FilterMitchell, FilterLanczos} {
		for _, src := range sizes {
			for _, dst := range sizes {
				t := get(src, dst, f)
				put(int32(t.n))
				for i := range t.start {
					put(t.start[i])
				}
				for _, w := range t.w {
					put(w)
				}
			}
		}
	}
	return h.Sum32()
}

// TestPlainTapsGolden pins the weights of a plain resize: the hash is that of the weights
// before the resampler learnt DCT-scaled sources (axis), which must not change them.
func TestPlainTapsGolden(t *testing.T) {
	if raceEnabled {
		t.Skip("every resize's weights: heavy and single-goroutine, run without -race (race_test.go)")
	}
	const want uint32 = 0xb7b2be35
	if got := plainTapsHash(func(s, d int, f Filter) *taps { return makeTaps(plainAxis(s, d), f) }); got != want {
		t.Errorf("plain resize weights hash %#x, want %#x", got, want)
	}
}

// TestAxisFlat resamples flat planes along DCT-scaled, subsampled and shifted axes: every
// output keeps the value (the weights of each output add up to one and stay in the source).
func TestAxisFlat(t *testing.T) {
	if raceEnabled {
		t.Skip("every axis combination: heavy and single-goroutine, run without -race (race_test.go)")
	}
	for _, full := range []int{1, 2, 7, 33, 375, 500, 1001} {
		for _, num := range []int{1, 2, 3, 4, 5, 8} {
			for _, sub := range []int{1, 2, 4} {
				for _, tgt := range []int{1, 5, 96, 192, 256} {
					if tgt > full {
						continue
					}
					for _, outSub := range []int{1, 2} {
						for _, f := range []Filter{FilterBox, FilterLinear, FilterLanczos} {
							src := max(1, (full*num/8+sub-1)/sub)
							dst := (tgt + outSub - 1) / outSub
							for pad := 0; pad < outSub; pad++ {
								a := axis{full: full, num: num, sub: sub, src: src, target: tgt, outSub: outSub, pad: pad, dst: dst}
								tp := makeTaps(a, f)
								plane := bytes.Repeat([]byte{201}, src)
								out := make([]byte, dst)
								resampleH(plane, src, 1, src, 1, out, dst, dst, tp)
								for i, v := range out {
									if v != 201 {
										t.Fatalf("%+v %s: output %d is %d, want 201", a, f, i, v)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestDCTScale checks the DCT scale chosen for a target: the smallest whose decode is at
// most dctShort percent smaller than the target (enlarged a little afterwards), and never
// smaller than the target with the nearest filter.
func TestDCTScale(t *testing.T) {
	for _, c := range []struct {
		w, h, tw, th int
		f            Filter
		want         int
	}{
		{500, 375, 256, 192, FilterBox, 4},     // 250x188: 2.3 % short
		{500, 375, 256, 192, FilterLanczos, 4}, // the same for every smooth filter
		{500, 375, 256, 192, FilterNearest, 5}, // 313x235: nearest never enlarges
		{500, 333, 256, 170, FilterBox, 4},     // 250x167
		{640, 480, 256, 192, FilterBox, 4},     // 320x240: larger, as before
		{1000, 750, 256, 192, FilterBox, 2},    // 250x188
		{4000, 3000, 512, 384, FilterBox, 1},   // 500x375
		{520, 390, 256, 192, FilterBox, 4},     // 260x195
		{540, 405, 256, 192, FilterBox, 4},     // 270x203
		{480, 360, 256, 192, FilterBox, 5},     // 4/8 would be 240x180: 6 % short
		{256, 192, 256, 192, FilterBox, 8},     // no resize
		{3, 2, 1, 1, FilterBox, 1},
	} {
		f := &Field{opts: Options{Filter: c.f}}
		if got := f.dctScale(Header{Width: c.w, Height: c.h}, c.tw, c.th); got != c.want {
			t.Errorf("%dx%d -> %dx%d %s: scale %d/8, want %d/8", c.w, c.h, c.tw, c.th, c.f, got, c.want)
		}
	}
}

// TestChromaPad checks where the output chroma grid starts in the stored frame: one luma
// sample early on each odd axis that the orientation reverses (the stored corner that orient
// puts at the displayed top left tells which).
func TestChromaPad(t *testing.T) {
	for o := 1; o <= 8; o++ {
		const w, h = 3, 2
		img := pixbuf{pix: []byte{0, 1, 2, 3, 4, 5}, w: w, h: h, c: 1}
		corner := orient(img, o).pix[0]
		rx, ry := int(corner)%w == w-1, int(corner)/w == h-1
		for _, wh := range [][2]int{{256, 192}, {255, 192}, {256, 191}, {255, 191}} {
			px, py := chromaPad(o, wh[0], wh[1])
			wx, wy := 0, 0
			if rx && wh[0]%2 == 1 {
				wx = 1
			}
			if ry && wh[1]%2 == 1 {
				wy = 1
			}
			if px != wx || py != wy {
				t.Errorf("orientation %d %dx%d: pad %d,%d, want %d,%d", o, wh[0], wh[1], px, py, wx, wy)
			}
		}
	}
}
