package imagefield

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/turbojpeg"
	"github.com/mldf/convert/sample"
)

const sharedMini = "../../../shared/testdata/mini"

// sharedDir returns a folder of ../shared/testdata/mini, skipping the test when it is absent.
func sharedDir(t testing.TB, sub string) string {
	t.Helper()
	d := filepath.Join(sharedMini, sub)
	if _, err := os.Stat(d); err != nil {
		t.Skipf("shared test data absent: %v", err)
	}
	return d
}

// paths returns the field variants to test: libjpeg-turbo (when compiled in) and pure Go.
func variants(t testing.TB, o Options) []*Field {
	t.Helper()
	f, err := New("image", o)
	if err != nil {
		t.Fatal(err)
	}
	fs := []*Field{f}
	if f.turbo {
		g, _ := New("image", o)
		g.turbo = false
		fs = append(fs, g)
	}
	return fs
}

func pathName(f *Field) string {
	if f.turbo && f.rgb {
		return "turbo-rgb"
	}
	if f.turbo {
		return "turbo"
	}
	return "go"
}

func encodeFile(f *Field, path string) ([]byte, mldf.ImageMeta, error) {
	meta := make([]byte, mldf.ImageMetaSize)
	out, err := f.Encode(sample.Value{Kind: sample.KindFile, Path: path, Name: filepath.Base(path)}, meta)
	return out, mldf.GetImageMeta(meta), err
}

// decodePayload decodes a payload back to pixels with the Go decoders.
func decodePayload(t testing.TB, out []byte, m mldf.ImageMeta) pixbuf {
	t.Helper()
	switch m.Mode {
	case mldf.ImageModeRaw:
		if len(out) != int(m.Height)*int(m.Width)*int(m.Channels) {
			t.Fatalf("raw payload %d bytes for %dx%dx%d", len(out), m.Height, m.Width, m.Channels)
		}
		return pixbuf{pix: out, w: int(m.Width), h: int(m.Height), c: int(m.Channels)}
	case mldf.ImageModeJPEG, mldf.ImageModePNG:
		img, _, err := image.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("decode payload (mode %d): %v", m.Mode, err)
		}
		return fromImage(img, int(m.Channels))
	}
	t.Fatalf("mode %d", m.Mode)
	return pixbuf{}
}

// reference decodes path with the Go decoders and applies the field's geometry by hand.
func reference(t testing.TB, f *Field, data []byte) pixbuf {
	t.Helper()
	hdr, err := SniffHeader(data)
	if err != nil {
		t.Fatal(err)
	}
	img, err := decodeGo(data, hdr.Format)
	if err != nil {
		t.Fatal(err)
	}
	px := fromImage(img, f.opts.Channels)
	ow, oh := px.w, px.h
	if hdr.Orientation >= 5 {
		ow, oh = oh, ow
	}
	tw, th := f.target(ow, oh)
	if hdr.Orientation >= 5 {
		tw, th = th, tw
	}
	return orient(resize(px, tw, th, f.opts.Filter), hdr.Orientation)
}

func meanAbsDiff(t testing.TB, a, b pixbuf) float64 {
	t.Helper()
	if a.w != b.w || a.h != b.h || a.c != b.c {
		t.Fatalf("size %dx%dx%d vs %dx%dx%d", a.w, a.h, a.c, b.w, b.h, b.c)
	}
	s := 0
	for i := range a.pix {
		d := int(a.pix[i]) - int(b.pix[i])
		if d < 0 {
			d = -d
		}
		s += d
	}
	return float64(s) / float64(len(a.pix))
}

// TestRealFiles encodes every image of the shared mini set and the odd-format set in every
// mode, on both decoder paths: each either round-trips within tolerance or fails with a named
// error wrapping ErrCorrupt.
func TestRealFiles(t *testing.T) {
	if raceEnabled {
		t.Skip("every real file in every mode: heavy and single-goroutine, run without -race (race_test.go)")
	}
	var files []string
	for _, sub := range []string{"images", "images_odd"} {
		root := sharedDir(t, sub)
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return nil
		})
	}
	local, _ := filepath.Glob("testdata/*.*")
	files = append(files, local...)
	mustFail := map[string]bool{
		"go_invalid-crc32.png": true, "go_invalid-noend.png": true, "go_invalid-trunc.png": true,
		"go_invalid-zlib.png": true, "skimage_truncated.jpg": true,
	}
	type refKey struct {
		path     string
		channels int
	}
	refs := map[refKey]pixbuf{}
	combos := []struct {
		mode     Mode
		channels int
	}{{ModeSmart, 3}, {ModeRaw, 4}, {ModeJPEG, 3}, {ModeJPEG, 1}, {ModePNG, 4}, {ModeRaw, 1}, {ModeRaw, 3}}
	if testing.Short() {
		combos = combos[:2]
	}
	for _, cm := range combos {
		mode, channels := cm.mode, cm.channels
		{
			for _, f := range variants(t, Options{Mode: mode, MaxResolution: 96, Channels: channels}) {
				t.Run(fmt.Sprintf("%s/c%d/%s", mode, channels, pathName(f)), func(t *testing.T) {
					for _, p := range files {
						if strings.HasSuffix(p, ".md") || strings.Contains(p, "arithmetic") {
							continue // TestArithmetic
						}
						out, m, err := encodeFile(f, p)
						base := filepath.Base(p)
						if mustFail[base] {
							if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p) {
								t.Errorf("%s: got err %v, want ErrCorrupt naming the file", p, err)
							}
							continue
						}
						if err != nil {
							t.Errorf("%s: %v", p, err)
							continue
						}
						if int(m.Channels) != channels || max(m.Width, m.Height) > 96 || m.Width == 0 || m.Height == 0 {
							t.Errorf("%s: meta %+v", p, m)
						}
						got := decodePayload(t, out, m)
						data, _ := os.ReadFile(p)
						want, ok := refs[refKey{p, channels}]
						if !ok {
							want = reference(t, f, data)
							refs[refKey{p, channels}] = want
						}
						tol := 3.0
						if mode == ModeJPEG || mode == ModeSmart {
							tol = 7
							if min(m.Width, m.Height) < 64 {
								tol = 16 // 4:2:0 JPEG of tiny icons with hard edges
							}
						}
						// libjpeg-turbo's DCT-scaled decode is a different (sharper) shrink than
						// a full decode plus spatial filter: on detailed photos the two differ
						// by 5-10 levels on average.
						if f.turbo && bytes.HasPrefix(data, []byte{0xFF, 0xD8}) {
							tol += 8
						}
						if d := meanAbsDiff(t, got, want); d > tol {
							t.Errorf("%s: mean abs difference %.2f > %.1f", p, d, tol)
						}
					}
				})
			}
		}
	}
}

// TestGoPathExact: without libjpeg-turbo, raw mode of a lossless source equals the reference.
func TestGoPathExact(t *testing.T) {
	f, _ := New("image", Options{Mode: ModeRaw})
	f.turbo = false
	for _, p := range []string{"testdata/go_gray-gradient.interlaced.png", "testdata/skimage_no_time_for_that_tiny.gif"} {
		out, m, err := encodeFile(f, p)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(p)
		if d := meanAbsDiff(t, decodePayload(t, out, m), reference(t, f, data)); d != 0 {
			t.Errorf("%s: differs by %.3f", p, d)
		}
	}
}

func jpegBytes(t testing.TB, w, h int, seed uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, photo(w, h, seed), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// photo is a deterministic photo-like test image: gradients, a disc and noise.
func photo(w, h int, seed uint64) *image.RGBA {
	r := rand.New(rand.NewPCG(seed, 7))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	cx, cy, rad := w/3, h/2, min(w, h)/4
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := [3]int{x * 255 / w, y * 255 / h, (x + y) * 128 / (w + h)}
			if (x-cx)*(x-cx)+(y-cy)*(y-cy) < rad*rad {
				v = [3]int{220, 60, 40}
			}
			n := r.IntN(21) - 10
			for i := range v {
				v[i] = min(255, max(0, v[i]+n))
			}
			img.SetRGBA(x, y, color.RGBA{uint8(v[0]), uint8(v[1]), uint8(v[2]), 255})
		}
	}
	return img
}

// withOrientation inserts an EXIF APP1 segment with the given orientation after SOI.
func withOrientation(jpg []byte, o uint16, bigEndian bool) []byte {
	var t bytes.Buffer
	var bo binary.ByteOrder = binary.LittleEndian
	t.WriteString("II*\x00")
	if bigEndian {
		bo = binary.BigEndian
		t.Reset()
		t.WriteString("MM\x00*")
	}
	b := make([]byte, 4)
	bo.PutUint32(b, 8)
	t.Write(b)
	e := make([]byte, 2+12+4)
	bo.PutUint16(e[0:], 1)      // one entry
	bo.PutUint16(e[2:], 0x0112) // Orientation
	bo.PutUint16(e[4:], 3)      // SHORT
	bo.PutUint32(e[6:], 1)
	bo.PutUint16(e[10:], o)
	t.Write(e)
	seg := append([]byte("Exif\x00\x00"), t.Bytes()...)
	out := []byte{0xFF, 0xD8, 0xFF, 0xE1, byte((len(seg) + 2) >> 8), byte(len(seg) + 2)}
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

func encodeBytes(f *Field, name string, data []byte) ([]byte, mldf.ImageMeta, error) {
	meta := make([]byte, mldf.ImageMetaSize)
	out, err := f.Encode(sample.Value{Kind: sample.KindBytes, Bytes: data, Name: name}, meta)
	return out, mldf.GetImageMeta(meta), err
}

func TestSmartPassThrough(t *testing.T) {
	src := jpegBytes(t, 120, 80, 1)
	for _, f := range variants(t, Options{Mode: ModeSmart, MaxResolution: 128}) {
		out, m, err := encodeBytes(f, "a.jpg", src)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, src) {
			t.Errorf("%s: smart pass-through changed the bytes", pathName(f))
		}
		if &out[0] == &src[0] {
			t.Errorf("%s: payload aliases the input bytes", pathName(f))
		}
		if m != (mldf.ImageMeta{Height: 80, Width: 120, Channels: 3, Mode: mldf.ImageModeJPEG}) {
			t.Errorf("meta %+v", m)
		}
		// Needs a resize: re-encoded.
		g, _ := New("image", Options{Mode: ModeSmart, MaxResolution: 64})
		g.turbo = f.turbo
		out, m, err = encodeBytes(g, "a.jpg", src)
		if err != nil || bytes.Equal(out, src) || m.Width != 64 || m.Height != 43 {
			t.Errorf("%s: resized smart: err %v meta %+v", pathName(f), err, m)
		}
		// Real files from disk, no resize needed.
		h, _ := New("image", Options{Mode: ModeSmart})
		h.turbo = f.turbo
		for _, p := range []string{"testdata/go_video-001.progressive.jpeg", "testdata/go_video-001.restart2.jpeg"} {
			data, _ := os.ReadFile(p)
			out, _, err := encodeFile(h, p)
			if err != nil || !bytes.Equal(out, data) {
				t.Errorf("%s: %s not passed through (err %v)", pathName(f), p, err)
			}
		}
		// Not passed through: CMYK, gray to 3 channels, oriented, truncated.
		for _, p := range []string{"testdata/go_video-001.cmyk.jpeg", "testdata/go_video-005.gray.jpeg"} {
			data, _ := os.ReadFile(p)
			out, m, err := encodeFile(f, p)
			if err != nil || bytes.Equal(out, data) || m.Channels != 3 {
				t.Errorf("%s: %s: err %v, meta %+v, passed through %v", pathName(f), p, err, m, bytes.Equal(out, data))
			}
		}
		out, _, err = encodeBytes(f, "o.jpg", withOrientation(src, 6, false))
		if err != nil || bytes.Equal(out, src) {
			t.Errorf("%s: oriented JPEG: %v", pathName(f), err)
		}
	}
}

func TestOrientation(t *testing.T) {
	src := jpegBytes(t, 60, 40, 2)
	plain := reference(t, &Field{opts: Options{Channels: 3, Filter: FilterBox}}, src)
	for o := uint16(1); o <= 8; o++ {
		for _, be := range []bool{false, true} {
			data := withOrientation(src, o, be)
			h, err := SniffHeader(data)
			if err != nil || h.Orientation != int(o) {
				t.Fatalf("orientation %d: sniffed %d, %v", o, h.Orientation, err)
			}
			for _, f := range variants(t, Options{Mode: ModeRaw}) {
				out, m, err := encodeBytes(f, "o.jpg", data)
				if err != nil {
					t.Fatal(err)
				}
				got := decodePayload(t, out, m)
				want := orient(plain, int(o))
				if d := meanAbsDiff(t, got, want); d > 3 {
					t.Errorf("%s orientation %d: differs by %.2f", pathName(f), o, d)
				}
			}
		}
	}
}

// TestOrientationResize: sizes are computed in the displayed frame, with DCT scaling in the
// stored one.
func TestOrientationResize(t *testing.T) {
	src := withOrientation(jpegBytes(t, 120, 80, 10), 6, false)
	for _, f := range variants(t, Options{Mode: ModeRaw, MaxResolution: 60}) {
		out, m, err := encodeBytes(f, "o6.jpg", src)
		if err != nil || m.Width != 40 || m.Height != 60 {
			t.Fatalf("%s: %v %+v", pathName(f), err, m)
		}
		want := reference(t, f, src)
		if d := meanAbsDiff(t, decodePayload(t, out, m), want); d > 10 {
			t.Errorf("%s: differs by %.2f", pathName(f), d)
		}
	}
}

// TestSmartGray: a gray JPEG passes through a 1-channel smart field; a colour one is
// re-encoded to gray.
func TestSmartGray(t *testing.T) {
	gray, _ := os.ReadFile("testdata/go_video-005.gray.jpeg")
	color, _ := os.ReadFile("testdata/go_video-001.progressive.jpeg")
	for _, f := range variants(t, Options{Mode: ModeSmart, Channels: 1}) {
		out, m, err := encodeBytes(f, "g.jpg", gray)
		if err != nil || !bytes.Equal(out, gray) || m.Channels != 1 {
			t.Errorf("%s gray: %v %+v", pathName(f), err, m)
		}
		out, m, err = encodeBytes(f, "c.jpg", color)
		if err != nil || bytes.Equal(out, color) || m.Channels != 1 {
			t.Fatalf("%s colour: %v %+v", pathName(f), err, m)
		}
		if img, err := jpeg.Decode(bytes.NewReader(out)); err != nil {
			t.Error(err)
		} else if _, ok := img.(*image.Gray); !ok {
			t.Errorf("%s: colour to 1 channel decoded as %T", pathName(f), img)
		}
	}
}

func TestOrientGeometry(t *testing.T) {
	// 3×2 image with distinct pixels p(x,y) = 10*y + x.
	b := pixbuf{pix: []byte{0, 1, 2, 10, 11, 12}, w: 3, h: 2, c: 1}
	want := map[int][]byte{
		1: {0, 1, 2, 10, 11, 12},
		2: {2, 1, 0, 12, 11, 10},
		3: {12, 11, 10, 2, 1, 0},
		4: {10, 11, 12, 0, 1, 2},
		5: {0, 10, 1, 11, 2, 12},
		6: {10, 0, 11, 1, 12, 2},
		7: {12, 2, 11, 1, 10, 0},
		8: {2, 12, 1, 11, 0, 10},
	}
	for o, w := range want {
		got := orient(b, o)
		if !bytes.Equal(got.pix, w) {
			t.Errorf("orientation %d: %v, want %v", o, got.pix, w)
		}
		if o >= 5 && (got.w != 2 || got.h != 3) {
			t.Errorf("orientation %d: %dx%d", o, got.w, got.h)
		}
	}
}

// pngHeader is a PNG signature and IHDR declaring w×h, then an IEND: no pixel data.
func pngHeader(w, h uint32) []byte {
	b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	b = binary.BigEndian.AppendUint32(b, w)
	b = binary.BigEndian.AppendUint32(b, h)
	b = append(b, 8, 2, 0, 0, 0, 0, 0, 0, 0) // 8-bit RGB, CRC (wrong, never reached)
	return append(b, "\x00\x00\x00\x00IEND\xae\x42\x60\x82"...)
}

// jpegHeader is a baseline JPEG whose frame header declares w×h, with an empty scan.
func jpegHeader(w, h uint16) []byte {
	b := []byte{0xFF, 0xD8, 0xFF, 0xC0, 0, 17, 8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), 3,
		1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1}
	b = append(b, 0xFF, 0xDA, 0, 12, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0)
	return append(b, 0xFF, 0xD9)
}

func TestDecompressionBomb(t *testing.T) {
	bombs := map[string][]byte{
		"bomb.png": pngHeader(100000, 100000),
		"bomb.jpg": jpegHeader(65000, 65000),
		"bomb.gif": append([]byte("GIF89a\xff\xff\xff\xff\x00\x00\x00"), 0x3b),
	}
	for _, mode := range []Mode{ModeSmart, ModeRaw} {
		for _, f := range variants(t, Options{Mode: mode, MaxResolution: 256}) {
			for name, data := range bombs {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				_, _, err := encodeBytes(f, name, data)
				runtime.ReadMemStats(&after)
				if !errors.Is(err, ErrTooManyPixels) || !strings.Contains(err.Error(), name) {
					t.Errorf("%s %s: err %v, want ErrTooManyPixels naming the file", pathName(f), name, err)
				}
				if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
					t.Errorf("%s %s: allocated %d bytes before rejecting", pathName(f), name, n)
				}
			}
		}
	}
	// The limit is configurable: a 96×64 image has 6144 pixels.
	src := jpegBytes(t, 96, 64, 3)
	f, _ := New("image", Options{Mode: ModeJPEG, MaxPixels: 6000})
	if _, _, err := encodeBytes(f, "x.jpg", src); !errors.Is(err, ErrTooManyPixels) {
		t.Errorf("max_pixels 6000: %v", err)
	}
	f, _ = New("image", Options{Mode: ModeJPEG, MaxPixels: 6144})
	if _, _, err := encodeBytes(f, "x.jpg", src); err != nil {
		t.Errorf("max_pixels 6144: %v", err)
	}
	// No limit: the header passes, the (empty) data does not.
	f, _ = New("image", Options{Mode: ModeJPEG, MaxPixels: -1, MaxResolution: 256})
	if _, _, err := encodeBytes(f, "big.png", pngHeader(70000, 10)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("no limit: %v", err)
	}
	f, _ = New("image", Options{Mode: ModeJPEG, MaxPixels: -1})
	if _, _, err := encodeBytes(f, "wide.png", pngHeader(70000, 10)); !errors.Is(err, ErrDimensions) {
		t.Errorf("70000 wide without max_resolution: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	src := jpegBytes(t, 64, 48, 4)
	png0 := pngHeader(16, 16)
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty.jpg", nil, ErrEmpty},
		{"text.jpg", []byte("hello, world\n"), ErrUnsupportedFormat},
		{"x.avif", []byte("\x00\x00\x00\x1cftypavif\x00\x00\x00\x00"), ErrUnsupportedFormat},
		{"x.jp2", []byte("\x00\x00\x00\x0cjP  \r\n\x87\n"), ErrUnsupportedFormat},
		{"cut-header.jpg", src[:100], ErrCorrupt},
		{"cut-scan.jpg", src[:len(src)/2], ErrCorrupt},
		{"cut-scan-eoi.jpg", append(bytes.Clone(src[:len(src)/2]), 0xFF, 0xD9), nil}, // decodes (grey tail), like libjpeg
		{"soi-only.jpg", []byte{0xFF, 0xD8, 0xFF}, ErrCorrupt},
		{"zero-size.jpg", jpegHeader(0, 10), ErrDimensions},
		{"zero-size.png", pngHeader(0, 0), ErrDimensions},
		{"no-pixels.png", png0, ErrCorrupt},
		{"garbage-scan.jpg", append(bytes.Clone(src[:len(src)-200]), bytes.Repeat([]byte{0xFF, 0x00, 0x13}, 66)...), nil},
	}
	for _, mode := range []Mode{ModeSmart, ModeJPEG, ModePNG, ModeRaw} {
		for _, f := range variants(t, Options{Mode: mode}) {
			for _, c := range cases {
				_, _, err := encodeBytes(f, c.name, c.data)
				if c.want == nil {
					continue // must only not panic
				}
				if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.name) {
					t.Errorf("%s %s %s: err %v, want %v naming the file", mode, pathName(f), c.name, err, c.want)
				}
			}
		}
	}
	f, _ := New("image", Options{})
	if _, err := f.Encode(sample.Value{Kind: sample.KindInt, Name: "x"}, make([]byte, 24)); !errors.Is(err, ErrKind) {
		t.Errorf("int value: %v", err)
	}
	if _, err := f.Encode(sample.Value{Kind: sample.KindFile, Path: "testdata/does-not-exist.jpg"}, make([]byte, 24)); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "does-not-exist.jpg") {
		t.Errorf("missing file: %v", err)
	}
}

func TestResizeGeometry(t *testing.T) {
	if raceEnabled {
		t.Skip("large resizes: heavy and single-goroutine, run without -race (race_test.go)")
	}
	f, _ := New("image", Options{MaxResolution: 256})
	for _, c := range []struct{ w, h, tw, th int }{
		{500, 375, 256, 192}, {375, 500, 192, 256}, {256, 100, 256, 100}, {100, 100, 100, 100},
		{1000, 1, 256, 1}, {10000, 3, 256, 1}, {257, 257, 256, 256},
	} {
		if tw, th := f.target(c.w, c.h); tw != c.tw || th != c.th {
			t.Errorf("%dx%d -> %dx%d, want %dx%d", c.w, c.h, tw, th, c.tw, c.th)
		}
	}
	src := jpegBytes(t, 500, 375, 5)
	for _, flt := range []Filter{FilterNearest, FilterBox, FilterLinear, FilterCatmullRom, FilterMitchell, FilterLanczos} {
		for _, f := range variants(t, Options{Mode: ModeRaw, MaxResolution: 256, Filter: flt}) {
			out, m, err := encodeBytes(f, "p.jpg", src)
			if err != nil || m.Width != 256 || m.Height != 192 {
				t.Fatalf("%s %s: %v %+v", flt, pathName(f), err, m)
			}
			want := reference(t, f, src)
			tol := 4.0
			if f.turbo {
				tol = 8 // DCT-scaled decode (see TestRealFiles)
			}
			if d := meanAbsDiff(t, decodePayload(t, out, m), want); d > tol {
				t.Errorf("%s %s: differs from full decode + resize by %.2f", flt, pathName(f), d)
			}
		}
	}
}

func TestResizeFlatAndTiny(t *testing.T) {
	for _, flt := range []Filter{FilterNearest, FilterBox, FilterLinear, FilterCatmullRom, FilterMitchell, FilterLanczos} {
		for _, c := range []int{1, 3, 4} {
			src := pixbuf{pix: bytes.Repeat([]byte{77}, 37*23*c), w: 37, h: 23, c: c}
			for _, sz := range [][2]int{{10, 7}, {1, 1}, {36, 23}, {37, 5}, {2, 1}} {
				got := resize(src, sz[0], sz[1], flt)
				if got.w != sz[0] || got.h != sz[1] || len(got.pix) != sz[0]*sz[1]*c {
					t.Fatalf("%s: size %dx%d", flt, got.w, got.h)
				}
				for i, v := range got.pix {
					if v != 77 {
						t.Fatalf("%s c%d -> %v: pixel %d is %d, want 77 (flat stays flat)", flt, c, sz, i, v)
					}
				}
			}
			// Sources smaller than the filter's window.
			tiny := pixbuf{pix: bytes.Repeat([]byte{200}, 3*2*c), w: 3, h: 2, c: c}
			if got := resize(tiny, 1, 1, flt); got.pix[0] != 200 {
				t.Errorf("%s: 3x2 -> 1x1 gave %d", flt, got.pix[0])
			}
		}
	}
}

func TestChannels(t *testing.T) {
	src := jpegBytes(t, 40, 30, 6)
	for _, c := range []int{1, 3, 4} {
		for _, f := range variants(t, Options{Mode: ModePNG, Channels: c}) {
			out, m, err := encodeBytes(f, "c.jpg", src)
			if err != nil || int(m.Channels) != c {
				t.Fatalf("channels %d: %v %+v", c, err, m)
			}
			img, err := png.Decode(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			switch c {
			case 1:
				if _, ok := img.(*image.Gray); !ok {
					t.Errorf("channels 1: decoded %T", img)
				}
			case 4:
				// An opaque image is written as an RGB PNG by image/png.
				if got := fromImage(img, 4); got.c != 4 || got.pix[3] != 255 {
					t.Errorf("channels 4: decoded %T", img)
				}
			}
		}
	}
	// Alpha kept with 4 channels.
	f, _ := New("image", Options{Mode: ModeRaw, Channels: 4})
	p := sharedDir(t, "images_odd/png_alpha")
	out, m, err := encodeFile(f, filepath.Join(p, "pngsuite_basn6a08.png"))
	if err != nil || m.Channels != 4 {
		t.Fatal(err, m)
	}
	transparent := 0
	for i := 3; i < len(out); i += 4 {
		if out[i] != 255 {
			transparent++
		}
	}
	if transparent == 0 {
		t.Error("alpha channel lost")
	}
}

func TestOptionsAndArguments(t *testing.T) {
	good := []Options{
		{},
		{Mode: ModeJPEG, MaxResolution: 256, JPEGQuality: 75, Filter: FilterLanczos},
		{Mode: ModePNG, Channels: 4, MaxPixels: -1},
		{Mode: ModeRaw, Channels: 1, MaxResolution: 65535, MaxPixels: 1 << 40},
	}
	for _, o := range good {
		f, err := New("img", o)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		a := f.Arguments()
		back, err := ParseArguments(a)
		if err != nil || back != f.Options() {
			t.Errorf("%+v: parsed back %+v, %v", f.Options(), back, err)
		}
		if a[0] != 1 {
			t.Errorf("version byte %d", a[0])
		}
	}
	f, _ := New("img", Options{Mode: ModeJPEG, MaxResolution: 256, JPEGQuality: 90, Filter: FilterLanczos})
	if f.Type() != mldf.TypeImageJPEG {
		t.Errorf("type %s", f.Type())
	}
	a := f.Arguments()
	want := []byte{1, 1, 90, 3, 0, 1, 0, 0, 6, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0} // max_pixels 2^26
	if !bytes.Equal(a[:24], want) || !bytes.Equal(a[24:], make([]byte, 104)) {
		t.Errorf("arguments % x", a[:24])
	}
	bad := []Options{
		{Mode: 9}, {MaxResolution: -1}, {MaxResolution: 70000}, {JPEGQuality: 101}, {JPEGQuality: -5},
		{Filter: 42}, {Channels: 2}, {Channels: 4}, {Mode: ModeJPEG, Channels: 4},
	}
	for _, o := range bad {
		if _, err := New("img", o); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: %v", o, err)
		}
	}
	if _, err := New("", Options{}); err == nil {
		t.Error("empty name accepted")
	}
	mutate := []func(*[128]byte){
		func(a *[128]byte) { a[0] = 2 },
		func(a *[128]byte) { a[1] = 9 },
		func(a *[128]byte) { a[2] = 0 },
		func(a *[128]byte) { a[2] = 200 },
		func(a *[128]byte) { a[3] = 2 },
		func(a *[128]byte) { a[8] = 0 },
		func(a *[128]byte) { a[9] = 0x80 },
		func(a *[128]byte) { a[10] = 1 },
		func(a *[128]byte) { a[13] = 1 },
		func(a *[128]byte) { a[127] = 1 },
		func(a *[128]byte) { clear(a[16:24]) },
	}
	for i, m := range mutate {
		b := f.Arguments()
		m(&b)
		if _, err := ParseArguments(b); !errors.Is(err, ErrArguments) {
			t.Errorf("mutation %d: %v", i, err)
		}
	}
	for _, s := range []string{"smart", "JPEG", "png", "Raw"} {
		if _, err := ParseMode(s); err != nil {
			t.Error(err)
		}
	}
	for _, s := range []string{"lanczos", "Area", "bilinear", "bicubic", "nearest", "mitchell"} {
		if _, err := ParseFilter(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseMode("webp"); !errors.Is(err, ErrOptions) {
		t.Error(err)
	}
	if _, err := ParseFilter("sinc"); !errors.Is(err, ErrOptions) {
		t.Error(err)
	}
}

// TestConcurrent encodes from many goroutines with one field (run with -race).
func TestConcurrent(t *testing.T) {
	srcs := [][]byte{jpegBytes(t, 300, 200, 7), jpegBytes(t, 120, 90, 8)}
	f, _ := New("image", Options{Mode: ModeJPEG, MaxResolution: 100})
	want := make([][]byte, len(srcs))
	for i, s := range srcs {
		want[i], _, _ = encodeBytes(f, "w.jpg", s)
	}
	var g errgroup.Group
	for w := 0; w < 8; w++ {
		g.Go(func() error {
			for i := 0; i < 20; i++ {
				k := (w + i) % len(srcs)
				out, _, err := encodeBytes(f, "c.jpg", srcs[k])
				if err != nil {
					return err
				}
				if !bytes.Equal(out, want[k]) {
					return fmt.Errorf("worker %d: output differs between calls", w)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

func TestTurboAvailable(t *testing.T) {
	f, _ := New("image", Options{})
	if f.Turbo() != turbojpeg.Available() {
		t.Errorf("Turbo() = %v, Available() = %v", f.Turbo(), turbojpeg.Available())
	}
	t.Logf("libjpeg-turbo available: %v", turbojpeg.Available())
}

// TestArithmetic: Go's image/jpeg rejects arithmetic-coded JPEG; libjpeg-turbo decodes it. The
// fixture is go_video-001.progressive.jpeg losslessly transcoded to arithmetic coding, so
// both decode to the same pixels.
func TestArithmetic(t *testing.T) {
	arith, _ := os.ReadFile("testdata/go_video-001.arithmetic.jpeg")
	orig, _ := os.ReadFile("testdata/go_video-001.progressive.jpeg")
	if h, err := SniffHeader(arith); err != nil || h.Process != procArithmetic {
		t.Fatalf("sniff: %+v %v", h, err)
	}
	if _, err := decodeGo(arith, FormatJPEG); err == nil {
		t.Fatal("Go decoded an arithmetic-coded JPEG; the fallback test is moot")
	}
	for _, f := range variants(t, Options{Mode: ModeSmart}) {
		out, m, err := encodeBytes(f, "arith.jpg", arith)
		if !f.turbo {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "arith.jpg") {
				t.Errorf("go: err %v, want ErrCorrupt naming the file", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(out, arith) {
			t.Error("arithmetic-coded JPEG passed through")
		}
		want := reference(t, f, orig)
		if d := meanAbsDiff(t, decodePayload(t, out, m), want); d > 6 {
			t.Errorf("differs from the Huffman original by %.2f", d)
		}
	}
}

// TestFileBufferReuse encodes files of different sizes in turn through one worker's codec
// (the file is read into a buffer kept between images in the modes that never store the
// file as it is): each output is the one its bytes give.
func TestFileBufferReuse(t *testing.T) {
	if raceEnabled {
		t.Skip("files through every mode: heavy and single-goroutine, run without -race (race_test.go)")
	}
	dir := t.TempDir()
	var paths []string
	var datas [][]byte
	for i, wh := range [][2]int{{300, 200}, {40, 30}, {500, 375}, {40, 30}} {
		b := jpegBytes(t, wh[0], wh[1], uint64(10+i))
		p := filepath.Join(dir, fmt.Sprintf("%d.jpg", i))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths, datas = append(paths, p), append(datas, b)
	}
	for _, o := range []Options{{Mode: ModeJPEG, MaxResolution: 64}, {Mode: ModeRaw, MaxResolution: 64}, {Mode: ModePNG}, {Mode: ModeSmart, MaxResolution: 64}} {
		for _, f := range variants(t, o) {
			var outs [][]byte
			for _, p := range paths {
				out, _, err := encodeFile(f, p)
				if err != nil {
					t.Fatal(err)
				}
				outs = append(outs, out)
			}
			for i, d := range datas {
				want, _, err := encodeBytes(f, paths[i], d)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(outs[i], want) {
					t.Errorf("%s %s: file %d encodes differently from its bytes", o.Mode, pathName(f), i)
				}
			}
		}
	}
}
