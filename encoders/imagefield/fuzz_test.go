package imagefield

import (
	"bytes"
	"image"
	"os"
	"path/filepath"
	"testing"

	_ "image/gif"
	_ "image/jpeg"
	"image/png"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
)

func fuzzSeeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
	src := jpegBytes(f, 32, 24, 9)
	f.Add(src)
	f.Add(withOrientation(src, 6, true))
	f.Add(pngOf(f, photo(12, 9, 2)))
	f.Add(pngHeader(100000, 100000))
	f.Add(jpegHeader(65000, 65000))
	f.Add([]byte("GIF89a\x10\x00\x10\x00"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WEBPVP8X"))
	f.Add([]byte("II*\x00\x08\x00\x00\x00"))
	f.Add([]byte("BM"))
}

// FuzzSniffHeader checks that header sniffing never panics and agrees with the standard
// library's DecodeConfig on the formats both read.
func FuzzSniffHeader(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := SniffHeader(data)
		if err != nil {
			return
		}
		if h.Width < 0 || h.Height < 0 || h.Orientation < 0 || h.Orientation > 8 {
			t.Fatalf("bad header %+v", h)
		}
		switch h.Format {
		case FormatJPEG, FormatPNG, FormatGIF:
			c, _, err := image.DecodeConfig(bytes.NewReader(data))
			if err == nil && (c.Width != h.Width || c.Height != h.Height) {
				t.Fatalf("%s: sniffed %dx%d, DecodeConfig %dx%d", h.Format, h.Width, h.Height, c.Width, c.Height)
			}
		}
	})
}

// FuzzEncode runs the whole field on arbitrary bytes with a small pixel limit: it must return
// an error or a payload consistent with its metadata, and never panic.
func FuzzEncode(f *testing.F) {
	fuzzSeeds(f)
	var fields []*Field
	for _, o := range []Options{{Mode: ModeSmart}, {Mode: ModeRaw}, {Mode: ModeSmart, KeepPNG: true}} {
		o.MaxResolution, o.MaxPixels = 32, 1<<20
		fl, err := New("image", o)
		if err != nil {
			f.Fatal(err)
		}
		fields = append(fields, fl)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, fl := range fields {
			mode := fl.Options().Mode
			meta := make([]byte, mldf.ImageMetaSize)
			out, err := fl.Encode(sample.Value{Kind: sample.KindBytes, Bytes: data, Name: "fuzz"}, meta)
			if err != nil {
				continue
			}
			m := mldf.GetImageMeta(meta)
			if m.Width == 0 || m.Height == 0 || (mode == ModeRaw && len(out) != int(m.Width)*int(m.Height)*int(m.Channels)) {
				t.Fatalf("%s: meta %+v with %d bytes", mode, m, len(out))
			}
			if m.Mode == mldf.ImageModePNG && bytes.Equal(out, data) {
				// A PNG stored as it is (keep_png): its header says the metadata's size.
				c, err := png.DecodeConfig(bytes.NewReader(out))
				if err != nil || c.Width != int(m.Width) || c.Height != int(m.Height) {
					t.Fatalf("PNG stored as is: meta %+v, header %+v, %v", m, c, err)
				}
			}
		}
	})
}
