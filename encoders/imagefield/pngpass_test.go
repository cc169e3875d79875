package imagefield

import (
	"bytes"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/mldf/convert/format/mldf"
)

// pngOf encodes img as a PNG with Go's encoder (an opaque RGBA image becomes colour type 2).
func pngOf(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pngChunk is one PNG chunk with its CRC.
func pngChunk(typ string, body []byte) []byte {
	c := make([]byte, 8, 12+len(body))
	c[0], c[1], c[2], c[3] = byte(len(body)>>24), byte(len(body)>>16), byte(len(body)>>8), byte(len(body))
	copy(c[4:], typ)
	c = append(c, body...)
	s := crc32.ChecksumIEEE(c[4:])
	return append(c, byte(s>>24), byte(s>>16), byte(s>>8), byte(s))
}

// withChunkAfterIHDR inserts a chunk after a PNG's IHDR chunk (its bytes 8..33).
func withChunkAfterIHDR(p []byte, chunk []byte) []byte {
	out := append([]byte{}, p[:33]...)
	out = append(out, chunk...)
	return append(out, p[33:]...)
}

// withChunkBeforeIEND inserts a chunk before a PNG's IEND chunk (its last 12 bytes).
func withChunkBeforeIEND(p []byte, chunk []byte) []byte {
	out := append([]byte{}, p[:len(p)-12]...)
	out = append(out, chunk...)
	return append(out, p[len(p)-12:]...)
}

// TestKeepPNG: with KeepPNG (what a Hugging Face Image column infers), a PNG that needs no
// change is stored as its original bytes in PNG mode, any other PNG is re-encoded to PNG,
// damaged PNGs are rejected rather than copied, and JPEGs are stored as smart mode stores them.
// Without KeepPNG, smart mode re-encodes PNGs to JPEG, as documented.
func TestKeepPNG(t *testing.T) {
	rgb := pngOf(t, photo(20, 16, 3))
	gray := image.NewGray(image.Rect(0, 0, 12, 9))
	for i := range gray.Pix {
		gray.Pix[i] = uint8(i * 7)
	}
	grayPNG := pngOf(t, gray)
	rgba := photo(20, 16, 4)
	rgba.SetRGBA(3, 3, color.RGBA{10, 20, 30, 40}) // not opaque: an RGBA PNG
	deep := image.NewRGBA64(image.Rect(0, 0, 8, 8))
	deep.SetRGBA64(1, 1, color.RGBA64{1000, 2000, 3000, 65535})
	jpg := jpegBytes(t, 24, 16, 5)
	badCRC := append([]byte{}, rgb...)
	badCRC[len(badCRC)-13] ^= 0xFF // the last IDAT's CRC
	type want struct {
		same bool  // stored as the input bytes
		mode uint8 // per-sample mode
		w, h int
		ch   int
		err  error // the encode error, when it fails
	}
	keep := Options{Mode: ModeSmart, KeepPNG: true}
	cases := []struct {
		name string
		o    Options
		data []byte
		want want
	}{
		{"rgb as is", keep, rgb, want{same: true, mode: mldf.ImageModePNG, w: 20, h: 16, ch: 3}},
		{"rgb smart without keep_png", Options{Mode: ModeSmart}, rgb, want{mode: mldf.ImageModeJPEG, w: 20, h: 16, ch: 3}},
		{"rgb resized", Options{Mode: ModeSmart, KeepPNG: true, MaxResolution: 10}, rgb, want{mode: mldf.ImageModePNG, w: 10, h: 8, ch: 3}},
		{"gray, 1 channel, as is", Options{Mode: ModeSmart, KeepPNG: true, Channels: 1}, grayPNG, want{same: true, mode: mldf.ImageModePNG, w: 12, h: 9, ch: 1}},
		{"gray to 3 channels", keep, grayPNG, want{mode: mldf.ImageModePNG, w: 12, h: 9, ch: 3}},
		{"rgb to 1 channel", Options{Mode: ModeSmart, KeepPNG: true, Channels: 1}, rgb, want{mode: mldf.ImageModePNG, w: 20, h: 16, ch: 1}},
		{"rgba", keep, pngOf(t, rgba), want{mode: mldf.ImageModePNG, w: 20, h: 16, ch: 3}},
		{"16-bit", keep, pngOf(t, deep), want{mode: mldf.ImageModePNG, w: 8, h: 8, ch: 3}},
		{"tRNS", keep, withChunkAfterIHDR(rgb, pngChunk("tRNS", []byte{0, 1, 0, 2, 0, 3})), want{mode: mldf.ImageModePNG, w: 20, h: 16, ch: 3}},
		{"text chunk, as is", keep, withChunkBeforeIEND(rgb, pngChunk("tEXt", []byte("k\x00v"))), want{same: true, mode: mldf.ImageModePNG, w: 20, h: 16, ch: 3}},
		{"bytes after IEND", keep, append(append([]byte{}, rgb...), 0, 0), want{mode: mldf.ImageModePNG, w: 20, h: 16, ch: 3}},
		{"jpeg as is", keep, jpg, want{same: true, mode: mldf.ImageModeJPEG, w: 24, h: 16, ch: 3}},
		{"no IEND", keep, rgb[:len(rgb)-12], want{err: ErrCorrupt}},
		{"cut in IDAT", keep, rgb[:len(rgb)-30], want{err: ErrCorrupt}},
		{"bad CRC", keep, badCRC, want{err: ErrCorrupt}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := New("image", c.o)
			if err != nil {
				t.Fatal(err)
			}
			out, m, err := encodeBytes(f, "x.png", c.data)
			if c.want.err != nil {
				if !errors.Is(err, c.want.err) {
					t.Fatalf("err %v, want %v", err, c.want.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if same := bytes.Equal(out, c.data); same != c.want.same {
				t.Errorf("stored as the input bytes: %v, want %v", same, c.want.same)
			}
			if m.Mode != c.want.mode || int(m.Width) != c.want.w || int(m.Height) != c.want.h || int(m.Channels) != c.want.ch {
				t.Errorf("meta %+v, want mode %d %dx%d channels %d", m, c.want.mode, c.want.w, c.want.h, c.want.ch)
			}
			if f.Type() != mldf.TypeImageJPEG {
				t.Errorf("type %s", f.Type())
			}
			// What is stored decodes to the metadata's size and channels.
			px := decodePayload(t, out, m)
			if px.w != c.want.w || px.h != c.want.h || px.c != c.want.ch {
				t.Errorf("payload decodes to %dx%dx%d", px.w, px.h, px.c)
			}
		})
	}
}

// TestKeepPNGOptions: keep_png is smart mode's; it is not in the arguments.
func TestKeepPNGOptions(t *testing.T) {
	for _, m := range []Mode{ModeJPEG, ModePNG, ModeRaw} {
		if _, err := New("image", Options{Mode: m, KeepPNG: true}); !errors.Is(err, ErrOptions) {
			t.Errorf("mode %s with KeepPNG: err %v", m, err)
		}
	}
	a, _ := New("image", Options{Mode: ModeSmart})
	b, err := New("image", Options{Mode: ModeSmart, KeepPNG: true})
	if err != nil {
		t.Fatal(err)
	}
	if a.Arguments() != b.Arguments() || a.Type() != b.Type() {
		t.Error("KeepPNG changed the field's arguments or type")
	}
}

func TestPNGPassable(t *testing.T) {
	rgb := pngOf(t, photo(9, 7, 1))
	if !pngPassable(rgb, 3) {
		t.Fatal("a plain RGB PNG is not passable")
	}
	bad := map[string][]byte{
		"empty":            nil,
		"signature only":   rgb[:8],
		"IHDR only":        rgb[:33],
		"acTL":             withChunkAfterIHDR(rgb, pngChunk("acTL", make([]byte, 8))),
		"huge length":      append(append([]byte{}, rgb[:33]...), 0x7f, 0xff, 0xff, 0xff, 'I', 'D', 'A', 'T'),
		"length over 2^31": append(append([]byte{}, rgb[:33]...), 0xff, 0xff, 0xff, 0xff, 'I', 'D', 'A', 'T'),
		"no IDAT":          append(append([]byte{}, rgb[:33]...), pngChunk("IEND", nil)...),
	}
	for name, b := range bad {
		if pngPassable(b, 3) {
			t.Errorf("%s: passable", name)
		}
	}
	if pngPassable(rgb, 1) || pngPassable(rgb, 4) {
		t.Error("an RGB PNG is passable into a 1- or 4-channel field")
	}
}
