package imgdec

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"testing"
)

// FuzzDecodeResized feeds arbitrary bytes, crops and output sizes to DecodeResized: errors
// are fine, a panic or a crash (libjpeg reading or writing out of bounds) is not, and the
// output buffer is never written past.
func FuzzDecodeResized(f *testing.F) {
	img := photo(64, 48)
	var g bytes.Buffer
	pal := image.NewPaletted(image.Rect(0, 0, 16, 12), colorList{{0, 0, 0, 255}, {255, 0, 0, 255}}.palette())
	if err := gif.Encode(&g, pal, nil); err != nil {
		f.Fatal(err)
	}
	seeds := [][]byte{encodeJPEG(f, img, 90), encodeJPEG(f, gray(img), 75), encodePNG(f, img), g.Bytes()}
	for _, name := range []string{"progressive.jpg", "cmyk.jpg", "rgb444.jpg", "q85.webp"} {
		seeds = append(seeds, fixture(f, name))
	}
	for _, seed := range seeds {
		f.Add(seed, uint16(3), uint16(5), uint16(60), uint16(40), uint8(33), uint8(20), false, true)
		f.Add(seed, uint16(0), uint16(0), uint16(64), uint16(48), uint8(200), uint8(150), true, false)
	}
	d := NewDecoder()
	d.SetMaxPixels(1 << 22) // bounds each input's cost
	f.Fuzz(func(t *testing.T, data []byte, x0, y0, x1, y1 uint16, ow, oh uint8, grey, flip bool) {
		w, h, _, err := d.Size(Image{Data: data})
		if err != nil || w < 1 || h < 1 || int64(w)*int64(h) > 1<<22 {
			return
		}
		crop := image.Rect(int(x0)%w, int(y0)%h, int(x1)%(w+1), int(y1)%(h+1)).Canon()
		if crop.Empty() {
			crop = image.Rect(0, 0, w, h)
		}
		c := 3
		if grey {
			c = 1
		}
		outW, outH := int(ow)+1, int(oh)+1
		buf := make([]byte, outW*outH*c+16)
		for i := range buf {
			buf[i] = 0xA5
		}
		_ = d.DecodeResized(Image{Data: data}, crop, outW, outH, c, flip, buf[:outW*outH*c])
		for _, v := range buf[outW*outH*c:] {
			if v != 0xA5 {
				t.Fatal("wrote past dst")
			}
		}
	})
}

type colorRGBA struct{ r, g, b, a uint8 }

type colorList []colorRGBA

func (l colorList) palette() []color.Color {
	p := make([]color.Color, len(l))
	for i, c := range l {
		p[i] = color.RGBA{c.r, c.g, c.b, c.a}
	}
	return p
}
