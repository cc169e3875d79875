package turbojpeg

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"os"
	"testing"
)

func TestPlaneSizes(t *testing.T) {
	cases := []struct {
		w, h           int
		s              Subsampling
		yw, yh, cw, ch int
		ok             bool
	}{
		{313, 235, Samp420, 314, 236, 157, 118, true},
		{256, 192, Samp420, 256, 192, 128, 96, true},
		{313, 235, Samp422, 314, 235, 157, 235, true},
		{313, 235, Samp444, 313, 235, 313, 235, true},
		{313, 235, Samp440, 313, 236, 313, 118, true},
		{313, 235, Samp411, 316, 235, 79, 235, true},
		{313, 235, SampGray, 313, 235, 0, 0, true},
		{1, 1, Samp420, 2, 2, 1, 1, true},
		{0, 5, Samp420, 0, 0, 0, 0, false},
		{5, 5, Subsampling(-1), 0, 0, 0, 0, false},
		{5, 5, Subsampling(9), 0, 0, 0, 0, false},
	}
	for _, c := range cases {
		yw, yh, cw, ch, ok := PlaneSizes(c.w, c.h, c.s)
		if yw != c.yw || yh != c.yh || cw != c.cw || ch != c.ch || ok != c.ok {
			t.Errorf("PlaneSizes(%d, %d, %d) = %d %d %d %d %v, want %d %d %d %d %v",
				c.w, c.h, c.s, yw, yh, cw, ch, ok, c.yw, c.yh, c.cw, c.ch, c.ok)
		}
	}
}

// TestYUVRoundTrip decodes to planes at every scale, encodes the planes back and compares
// the result with an RGB decode at the same scale.
func TestYUVRoundTrip(t *testing.T) {
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
	for _, c := range []struct {
		w, h int
		gray bool
	}{{640, 480, false}, {613, 405, false}, {320, 240, true}, {17, 9, false}} {
		src := testJPEG(t, c.w, c.h, c.gray)
		for num := 1; num <= 8; num++ {
			var p Planes
			if err := d.DecodeYUV(src, num, &p); err != nil {
				t.Fatalf("%dx%d scale %d: %v", c.w, c.h, num, err)
			}
			w, h := ScaledSize(c.w, c.h, num)
			if p.Width != w || p.Height != h {
				t.Fatalf("%dx%d scale %d: planes %dx%d, want %dx%d", c.w, c.h, num, p.Width, p.Height, w, h)
			}
			if c.gray != (p.Subsampling == SampGray) || c.gray != (p.Cb == nil) {
				t.Fatalf("gray %v: subsampling %d", c.gray, p.Subsampling)
			}
			out, err := e.EncodeYUV(&p, 95)
			if err != nil {
				t.Fatal(err)
			}
			img, err := jpeg.Decode(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
				t.Fatalf("re-encoded %v, want %dx%d", b, w, h)
			}
			pf := RGB
			if c.gray {
				pf = Gray
			}
			want, _, _, err := d.Decode(src, num, pf, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, _, _, err := d.Decode(out, 8, pf, nil)
			if err != nil {
				t.Fatal(err)
			}
			sum := 0
			for i := range want {
				sum += abs(int(want[i]) - int(got[i]))
			}
			// Tiny images (a few pixels a side) differ more: only their sizes are checked.
			if m := float64(sum) / float64(len(want)); m > 3 && w >= 16 {
				t.Errorf("%dx%d scale %d: mean difference %.2f", c.w, c.h, num, m)
			}
		}
	}
}

func TestYUVErrors(t *testing.T) {
	if !Available() {
		var p Planes
		if err := (&Decoder{}).DecodeYUV([]byte{1}, 8, &p); !errors.Is(err, ErrUnavailable) {
			t.Errorf("DecodeYUV: %v", err)
		}
		if _, err := (&Encoder{}).EncodeYUV(&p, 90); !errors.Is(err, ErrUnavailable) {
			t.Errorf("EncodeYUV: %v", err)
		}
		return
	}
	d, _ := NewDecoder()
	defer d.Close()
	e, _ := NewEncoder()
	defer e.Close()
	var p Planes
	src := testJPEG(t, 32, 32, false)
	if err := d.DecodeYUV(src, 9, &p); !errors.Is(err, ErrArgument) {
		t.Errorf("scale 9: %v", err)
	}
	if err := d.DecodeYUV(src[:20], 8, &p); err == nil {
		t.Error("truncated header: no error")
	}
	// An RGB-colourspace JPEG (Adobe transform 0) has no YCbCr planes.
	if rgb, err := os.ReadFile("../../encoders/imagefield/testdata/go_video-001.rgb.jpeg"); err == nil {
		if err := d.DecodeYUV(rgb, 8, &p); !errors.Is(err, ErrArgument) {
			t.Errorf("RGB JPEG: %v", err)
		}
	}
	if err := d.DecodeYUV(src, 8, &p); err != nil {
		t.Fatal(err)
	}
	if _, err := e.EncodeYUV(&p, 0); !errors.Is(err, ErrArgument) {
		t.Errorf("quality 0: %v", err)
	}
	short := p
	short.Cr = short.Cr[:3]
	if _, err := e.EncodeYUV(&short, 90); !errors.Is(err, ErrArgument) {
		t.Errorf("short plane: %v", err)
	}
	big := p
	big.Width = 70000
	if _, err := e.EncodeYUV(&big, 90); !errors.Is(err, ErrArgument) {
		t.Errorf("70000 wide: %v", err)
	}
	// The decoder still works after the errors.
	if err := d.DecodeYUV(src, 4, &p); err != nil || p.Width != 16 {
		t.Errorf("after errors: %v %d", err, p.Width)
	}
	_ = image.Rect
}
