package synthimage

import (
	"bytes"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"testing"
)

// TestDecode: Go's own decoders read what JPEG and PNG write, at the declared size, with the
// promised pixel values.
func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		make   func(w, h int, colour bool) ([]byte, error)
		colour bool
		want   uint8
	}{
		{"jpeg colour", JPEG, true, 128},
		{"jpeg grey", JPEG, false, 128},
		{"png colour", PNG, true, 0},
		{"png grey", PNG, false, 0},
	} {
		for _, sz := range [][2]int{{1, 1}, {17, 9}, {333, 250}, {1000, 16}} {
			data, err := tc.make(sz[0], sz[1], tc.colour)
			if err != nil {
				t.Fatal(err)
			}
			img, _, err := image.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s %v: %v", tc.name, sz, err)
			}
			if b := img.Bounds(); b.Dx() != sz[0] || b.Dy() != sz[1] {
				t.Fatalf("%s %v: decoded %v", tc.name, sz, b)
			}
			r, g, bl, _ := img.At(sz[0]-1, sz[1]-1).RGBA()
			for _, v := range []uint32{r, g, bl} {
				if d := int(v>>8) - int(tc.want); d < -1 || d > 1 {
					t.Errorf("%s %v: pixel %d %d %d, want %d", tc.name, sz, r>>8, g>>8, bl>>8, tc.want)
				}
			}
		}
	}
	if _, err := JPEG(70000, 1, true); err == nil {
		t.Error("JPEG of 70000 pixels a side: no error")
	}
}
