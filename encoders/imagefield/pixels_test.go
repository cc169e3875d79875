package imagefield

import (
	"bytes"
	"image"
	"math/rand/v2"
	"testing"
)

// TestFromDecodedMatchesFromImage: the in-place conversion gives the same pixels as the
// copying one, for every packed type, opaque or not, and for sub-images (not packed).
func TestFromDecodedMatchesFromImage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const w, h = 37, 23
	r := image.Rect(0, 0, w, h)
	fill := func(p []byte, bpp, alphaAt int, opaque bool) {
		for i := range p {
			p[i] = byte(rng.IntN(256))
		}
		if alphaAt < 0 {
			return
		}
		for i := alphaAt; i < len(p); i += bpp {
			if opaque {
				p[i] = 255
				if bpp == 8 {
					p[i+1] = 255
				}
			}
		}
	}
	makers := map[string]func(opaque bool) image.Image{
		"gray":   func(bool) image.Image { m := image.NewGray(r); fill(m.Pix, 1, -1, false); return m },
		"gray16": func(bool) image.Image { m := image.NewGray16(r); fill(m.Pix, 2, -1, false); return m },
		"nrgba":  func(o bool) image.Image { m := image.NewNRGBA(r); fill(m.Pix, 4, 3, o); return m },
		"nrgba64": func(o bool) image.Image {
			m := image.NewNRGBA64(r)
			fill(m.Pix, 8, 6, o)
			return m
		},
		"rgba": func(o bool) image.Image {
			m := image.NewRGBA(r)
			fill(m.Pix, 4, 3, o)
			for i := 0; i < len(m.Pix); i += 4 { // premultiplied: colour <= alpha
				for k := 0; k < 3; k++ {
					m.Pix[i+k] = byte(int(m.Pix[i+k]) * int(m.Pix[i+3]) / 255)
				}
			}
			return m
		},
		"rgba64": func(o bool) image.Image {
			m := image.NewRGBA64(r)
			fill(m.Pix, 8, 6, o)
			for i := 0; i < len(m.Pix); i += 8 {
				a := uint32(m.Pix[i+6])<<8 | uint32(m.Pix[i+7])
				for k := 0; k < 6; k += 2 {
					v := (uint32(m.Pix[i+k])<<8 | uint32(m.Pix[i+k+1])) * a / 0xffff
					m.Pix[i+k], m.Pix[i+k+1] = byte(v>>8), byte(v)
				}
			}
			return m
		},
	}
	for name, mk := range makers {
		for _, opaque := range []bool{false, true} {
			for _, c := range []int{1, 3, 4} {
				seed := rng.Uint64()
				rng = rand.New(rand.NewPCG(seed, 1))
				a := mk(opaque)
				rng = rand.New(rand.NewPCG(seed, 1))
				b := mk(opaque)
				want := fromImage(a, c)
				got := fromDecoded(b, c)
				if got.w != want.w || got.h != want.h || got.c != want.c || !bytes.Equal(got.pix, want.pix) {
					t.Errorf("%s opaque=%v c=%d: in-place result differs", name, opaque, c)
				}
				// A sub-image is not packed: converted by copying, the same way.
				sub := b.(interface {
					SubImage(image.Rectangle) image.Image
				}).SubImage(image.Rect(1, 1, w-1, h-2))
				if got, want := fromDecoded(sub, c), fromImage(sub, c); !bytes.Equal(got.pix, want.pix) {
					t.Errorf("%s sub-image c=%d: differs", name, c)
				}
			}
		}
	}
}
