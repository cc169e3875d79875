//go:build cgo

package turbojpeg

import "testing"

// TestEncodeLargeOutput: noise at quality 100 (a JPEG near tjBufSize's worst case) encodes and
// decodes cleanly, and a buffer grown for a huge image is not kept afterwards. (A first try
// with a smaller buffer corrupted this output: TurboJPEG 2.1 ignores the size it is given
// with TJFLAG_NOREALLOC.)
func TestEncodeLargeOutput(t *testing.T) {
	e, _ := NewEncoder()
	defer e.Close()
	d, _ := NewDecoder()
	defer d.Close()
	const w, h = 512, 512
	pix := make([]byte, w*h*3)
	x := uint32(1)
	for i := range pix {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		pix[i] = byte(x)
	}
	out, err := e.Encode(pix, w, h, RGB, 100, Samp444)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < w*h { // over a byte a pixel: far beyond a typical photo's JPEG
		t.Fatalf("%d-byte JPEG: not the large output this test needs", len(out))
	}
	got, gw, gh, err := d.Decode(out, 8, RGB, nil)
	if err != nil || gw != w || gh != h {
		t.Fatalf("decode: %v %dx%d", err, gw, gh)
	}
	var diff int
	for i := range got {
		diff = max(diff, abs(int(got[i])-int(pix[i])))
	}
	if diff > 40 {
		t.Fatalf("max difference %d", diff)
	}
	// A buffer above keepBuffer is dropped after use.
	big := make([]byte, 4096*2048*3)
	if _, err := e.Encode(big, 4096, 2048, RGB, 90, Samp420); err != nil {
		t.Fatal(err)
	}
	if cap(e.buf) > keepBuffer {
		t.Fatalf("kept a %d-byte buffer", cap(e.buf))
	}
}
