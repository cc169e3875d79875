package turbojpeg

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"testing"
)

func testJPEG(t *testing.T, w, h int, gray bool) []byte {
	t.Helper()
	var img image.Image
	if gray {
		g := image.NewGray(image.Rect(0, 0, w, h))
		for i := range g.Pix {
			g.Pix[i] = byte(i * 7)
		}
		img = g
	} else {
		m := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				m.SetRGBA(x, y, color.RGBA{byte(x * 255 / w), byte(y * 255 / h), 128, 255})
			}
		}
		img = m
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestScaleFor(t *testing.T) {
	cases := []struct{ w, h, mw, mh, want int }{
		{500, 375, 256, 192, 5}, // 313x235
		{500, 375, 250, 188, 4}, // exactly 1/2
		{500, 375, 500, 375, 8},
		{4000, 3000, 256, 192, 1}, // 500x375
		{16, 16, 16, 16, 8},
		{100, 1, 10, 1, 1},
	}
	for _, c := range cases {
		if got := ScaleFor(c.w, c.h, c.mw, c.mh); got != c.want {
			t.Errorf("ScaleFor(%d,%d,%d,%d) = %d, want %d", c.w, c.h, c.mw, c.mh, got, c.want)
		}
		sw, sh := ScaledSize(c.w, c.h, ScaleFor(c.w, c.h, c.mw, c.mh))
		if sw < c.mw || sh < c.mh {
			t.Errorf("%v: scaled %dx%d below the minimum", c, sw, sh)
		}
	}
}

func TestUnavailable(t *testing.T) {
	if Available() {
		t.Skip("libjpeg-turbo compiled in")
	}
	if _, err := NewDecoder(); !errors.Is(err, ErrUnavailable) {
		t.Errorf("NewDecoder: %v", err)
	}
	if _, err := NewEncoder(); !errors.Is(err, ErrUnavailable) {
		t.Errorf("NewEncoder: %v", err)
	}
}

func TestDecodeEncode(t *testing.T) {
	if !Available() {
		t.Skip("built without cgo")
	}
	d, err := NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	e, err := NewEncoder()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := testJPEG(t, 120, 80, false)
	h, err := d.Header(src)
	if err != nil || h.Width != 120 || h.Height != 80 || h.Colorspace != CSYCbCr || h.Subsampling != Samp420 {
		t.Fatalf("header %+v %v", h, err)
	}
	for num := 1; num <= 8; num++ {
		pix, w, hh, err := d.Decode(src, num, RGB, nil)
		ww, wh := ScaledSize(120, 80, num)
		if err != nil || w != ww || hh != wh || len(pix) != w*hh*3 {
			t.Fatalf("scale %d/8: %dx%d (%d bytes) %v", num, w, hh, len(pix), err)
		}
	}
	// Full decode agrees with Go's decoder.
	pix, w, hh, err := d.Decode(src, 8, RGB, make([]byte, 10))
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := jpeg.Decode(bytes.NewReader(src))
	diff := 0
	for y := 0; y < hh; y++ {
		for x := 0; x < w; x++ {
			r, g, b, _ := ref.At(x, y).RGBA()
			p := pix[(y*w+x)*3:]
			diff += abs(int(p[0])-int(r>>8)) + abs(int(p[1])-int(g>>8)) + abs(int(p[2])-int(b>>8))
		}
	}
	if mean := float64(diff) / float64(len(pix)); mean > 2 {
		t.Errorf("turbo and Go decodes differ by %.2f on average", mean)
	}
	// Encode and decode back.
	out, err := e.Encode(pix, w, hh, RGB, 90, Samp420)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := jpeg.DecodeConfig(bytes.NewReader(out)); err != nil || c.Width != 120 || c.Height != 80 {
		t.Errorf("re-encoded: %+v %v", c, err)
	}
	// Gray.
	gsrc := testJPEG(t, 33, 17, true)
	gpix, gw, gh, err := d.Decode(gsrc, 8, Gray, nil)
	if err != nil || gw != 33 || gh != 17 || len(gpix) != 33*17 {
		t.Fatalf("gray: %v", err)
	}
	gout, err := e.Encode(gpix, gw, gh, Gray, 80, Samp420)
	if err != nil {
		t.Fatal(err)
	}
	if gi, err := jpeg.Decode(bytes.NewReader(gout)); err != nil {
		t.Error(err)
	} else if _, ok := gi.(*image.Gray); !ok {
		t.Errorf("gray encode decoded as %T", gi)
	}
}

func TestErrors(t *testing.T) {
	if !Available() {
		t.Skip("built without cgo")
	}
	d, _ := NewDecoder()
	defer d.Close()
	e, _ := NewEncoder()
	defer e.Close()
	src := testJPEG(t, 64, 64, false)
	for name, data := range map[string][]byte{
		"empty": nil, "garbage": []byte("not a jpeg at all"), "header only": src[:50],
	} {
		if _, _, _, err := d.Decode(data, 8, RGB, nil); !errors.Is(err, ErrFatal) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Cut inside the scan: pixels with a warning.
	if _, _, _, err := d.Decode(src[:len(src)*2/3], 8, RGB, nil); !errors.Is(err, ErrWarning) {
		t.Errorf("truncated: %v", err)
	}
	if _, _, _, err := d.Decode(src, 0, RGB, nil); !errors.Is(err, ErrArgument) {
		t.Errorf("scale 0: %v", err)
	}
	// CMYK to RGB is refused by TurboJPEG 2.1.
	if cmyk, err := os.ReadFile("../../encoders/imagefield/testdata/go_video-001.cmyk.jpeg"); err == nil {
		h, err := d.Header(cmyk)
		if err != nil || (h.Colorspace != CSCMYK && h.Colorspace != CSYCCK) {
			t.Errorf("cmyk header %+v %v", h, err)
		}
		if _, _, _, err := d.Decode(cmyk, 8, RGB, nil); err == nil {
			t.Log("this libjpeg-turbo converts CMYK to RGB")
		}
	}
	for _, c := range []struct{ w, h, n, q int }{{0, 5, 0, 90}, {5, 5, 10, 90}, {2, 2, 12, 0}, {2, 2, 12, 101}} {
		if _, err := e.Encode(make([]byte, c.n), c.w, c.h, RGB, c.q, Samp420); !errors.Is(err, ErrArgument) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	// Closed handles fail cleanly.
	d2, _ := NewDecoder()
	d2.Close()
	d2.Close()
	if _, err := d2.Header(src); !errors.Is(err, ErrArgument) {
		t.Errorf("closed decoder: %v", err)
	}
	e2, _ := NewEncoder()
	e2.Close()
	if _, err := e2.Encode(make([]byte, 12), 2, 2, RGB, 90, Samp420); !errors.Is(err, ErrArgument) {
		t.Errorf("closed encoder: %v", err)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
