package imgdec

import (
	"image"
	"testing"
)

func TestSmoke(t *testing.T) {
	img := photo(256, 192)
	data := encodeJPEG(t, img, 95)
	d := NewDecoder()
	defer d.Close()
	w, h, c, err := d.Size(Image{Data: data})
	t.Log(w, h, c, err)
	for _, tc := range []struct {
		crop       image.Rectangle
		outW, outH int
	}{
		{image.Rect(0, 0, 256, 192), 256, 192},
		{image.Rect(0, 0, 256, 192), 64, 48},
		{image.Rect(30, 20, 200, 180), 100, 90},
		{image.Rect(30, 20, 90, 80), 224, 224},
	} {
		dst := make([]byte, tc.outW*tc.outH*3)
		if err := d.DecodeResized(Image{Data: data}, tc.crop, tc.outW, tc.outH, 3, false, dst); err != nil {
			t.Fatal(err)
		}
		// Reference: full decode via raw path.
		raw := make([]byte, 256*192*3)
		full := make([]byte, 256*192*3)
		if err := d.DecodeResized(Image{Data: data}, image.Rect(0, 0, 256, 192), 256, 192, 3, false, full); err != nil {
			t.Fatal(err)
		}
		_ = raw
		ref := make([]byte, len(dst))
		if err := d.DecodeResized(Image{Data: full, Raw: true, Width: 256, Height: 192, Channels: 3}, tc.crop, tc.outW, tc.outH, 3, false, ref); err != nil {
			t.Fatal(err)
		}
		t.Logf("%v -> %dx%d: psnr vs full decode %.1f", tc.crop, tc.outW, tc.outH, psnr(dst, ref))
	}
}
