package imgdec

import (
	"bytes"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/image/webp"
)

// The fixtures in testdata were written by Pillow 9.4 from one 80×60 picture: a progressive
// JPEG, an Adobe CMYK JPEG, a 4:4:4 JPEG and a lossy WebP. They cover the decoders' other
// paths without Python.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// goReference decodes data with Go's own decoder and resizes crop from those pixels.
func goReference(t *testing.T, d *Decoder, data []byte, crop image.Rectangle, w, h int, flip bool) []byte {
	t.Helper()
	dec := jpeg.Decode
	if bytes.HasPrefix(data, []byte("RIFF")) {
		dec = webp.Decode
	}
	img, err := dec(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	raw := make([]byte, 0, b.Dx()*b.Dy()*3)
	row := make([]byte, b.Dx()*3)
	for y := 0; y < b.Dy(); y++ {
		imageRow(row, 3, img, b.Min.X, b.Min.Y+y, b.Dx())
		raw = append(raw, row...)
	}
	return decode(t, d, Image{Data: raw, Raw: true, Width: b.Dx(), Height: b.Dy(), Channels: 3}, crop, w, h, 3, flip)
}

// TestFixtures: progressive, CMYK, 4:4:4 and WebP images decode (crops at the top, middle and
// bottom, so progressive skipping is exercised) to within 30 dB of Go's decoders' pixels
// resized.
func TestFixtures(t *testing.T) {
	d := NewDecoder()
	defer d.Close()
	for _, name := range []string{"progressive.jpg", "cmyk.jpg", "rgb444.jpg", "q85.webp"} {
		data := fixture(t, name)
		for _, crop := range []image.Rectangle{image.Rect(0, 0, 80, 60), image.Rect(5, 0, 60, 20), image.Rect(10, 25, 70, 45), image.Rect(20, 40, 80, 60)} {
			for _, out := range [][2]int{{32, 24}, {96, 64}} {
				got := decode(t, d, Image{Data: data}, crop, out[0], out[1], 3, true)
				want := goReference(t, d, data, crop, out[0], out[1], true)
				p := psnr(got, want)
				if p < 30 {
					t.Errorf("%s %v to %v: PSNR %.1f dB against Go's decoder", name, crop, out, p)
				}
			}
		}
	}
}

// TestHarmlessWarning: a JPEG with extraneous bytes before a marker (a libjpeg warning that
// leaves the pixels intact) decodes as the clean file does.
func TestHarmlessWarning(t *testing.T) {
	jpg := encodeJPEG(t, photo(64, 48), 90)
	dqt := bytes.Index(jpg, []byte{0xFF, 0xC0}) // before the frame header
	dirty := append(append(bytes.Clone(jpg[:dqt]), 0x12, 0x34), jpg[dqt:]...)
	d := NewDecoder()
	defer d.Close()
	r := image.Rect(0, 0, 64, 48)
	got := decode(t, d, Image{Data: dirty}, r, 32, 24, 3, false)
	if want := decode(t, d, Image{Data: jpg}, r, 32, 24, 3, false); !bytes.Equal(got, want) {
		t.Error("extraneous bytes changed the pixels")
	}
}
