package imgdec

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"testing"
)

// photo returns a deterministic photo-like w×h image: smooth gradients, a few hard edges,
// fine texture and mild noise, so resampling and DCT scaling errors show.
func photo(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	seed := uint32(12345)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			seed = seed*1664525 + 1013904223
			n := float64(seed>>24)/255 - 0.5
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			r := 128 + 90*math.Sin(6*fx+2*fy) + 8*n
			g := 110 + 70*math.Cos(5*fy-3*fx) + 20*math.Sin(float64(x)/3) + 8*n
			b := 90 + 60*fx + 50*fy + 8*n
			if (x/37+y/29)%5 == 0 { // blocks with edges
				r, g, b = 230-r/3, 40+g/4, 200-b/2
			}
			if math.Hypot(fx-0.6, fy-0.4) < 0.15 {
				r, g, b = 250, 220, 30
			}
			img.Pix[img.PixOffset(x, y)+0] = clamp(r)
			img.Pix[img.PixOffset(x, y)+1] = clamp(g)
			img.Pix[img.PixOffset(x, y)+2] = clamp(b)
			img.Pix[img.PixOffset(x, y)+3] = 255
		}
	}
	return img
}

func clamp(v float64) byte {
	return byte(math.Max(0, math.Min(255, math.Round(v))))
}

func encodeJPEG(t testing.TB, img image.Image, q int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// psnr returns the PSNR of a against b in dB (+Inf when equal).
func psnr(a, b []byte) float64 {
	var se float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		se += d * d
	}
	if se == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(255*255/(se/float64(len(a))))
}

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gray(img *image.RGBA) *image.Gray {
	g := image.NewGray(img.Bounds())
	for y := 0; y < img.Bounds().Dy(); y++ {
		for x := 0; x < img.Bounds().Dx(); x++ {
			g.Set(x, y, color.GrayModel.Convert(img.At(x, y)))
		}
	}
	return g
}
