package imgdec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"github.com/mldf/convert/format/mldf"
)

// rgbOf returns img's pixels as packed RGB.
func rgbOf(img *image.RGBA) []byte {
	b := img.Bounds()
	out := make([]byte, 0, b.Dx()*b.Dy()*3)
	for i := 0; i < b.Dx()*b.Dy(); i++ {
		out = append(out, img.Pix[4*i:4*i+3]...)
	}
	return out
}

func decode(t *testing.T, d *Decoder, im Image, crop image.Rectangle, w, h, c int, flip bool) []byte {
	t.Helper()
	out := make([]byte, w*h*c)
	if err := d.DecodeResized(im, crop, w, h, c, flip, out); err != nil {
		t.Fatalf("%v to %dx%dx%d: %v", crop, w, h, c, err)
	}
	return out
}

// fullDecode is the whole image decoded at full scale (the identity resample).
func fullDecode(t *testing.T, d *Decoder, data []byte, c int) Image {
	t.Helper()
	w, h, _, err := d.Size(Image{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return Image{Data: decode(t, d, Image{Data: data}, image.Rect(0, 0, w, h), w, h, c, false), Raw: true, Width: w, Height: h, Channels: c}
}

// TestEveryScale: each DCT scale 1/8..8/8 is the one scaleFor chooses for a crop and output
// that need it (3/8, 6/8 and 7/8 are then decoded at 4/8 and 8/8: simdScale), and the output
// matches the full decode's crop resized (PSNR >= 30 dB), on an image whose size is no
// multiple of the iMCU, with crops at odd offsets.
func TestEveryScale(t *testing.T) {
	const W, H = 517, 389
	data := encodeJPEG(t, photo(W, H), 95)
	d := NewDecoder()
	defer d.Close()
	ref := fullDecode(t, d, data, 3)
	for _, crop := range []image.Rectangle{image.Rect(0, 0, W, H), image.Rect(13, 7, 413, 307), image.Rect(101, 77, 517, 389)} {
		for num := 1; num <= 8; num++ {
			cw, ch := crop.Dx(), crop.Dy()
			outW, outH := cw*num/8, ch*num/8
			if got := scaleFor(cw, ch, outW, outH); got != num {
				t.Fatalf("%v to %dx%d: scale %d/8, want %d/8", crop, outW, outH, got, num)
			}
			got := decode(t, d, Image{Data: data}, crop, outW, outH, 3, false)
			want := decode(t, d, ref, crop, outW, outH, 3, false)
			p := psnr(got, want)
			t.Logf("%v to %dx%d at scale %d/8: PSNR %.1f dB against full decode", crop, outW, outH, num, p)
			if p < 30 {
				t.Errorf("%v to %dx%d at scale %d/8: PSNR %.1f dB", crop, outW, outH, num, p)
			}
		}
	}
}

// TestBorders: crops touching each edge and corner of the image, up and down, match the full
// decode's crop resized.
func TestBorders(t *testing.T) {
	const W, H = 517, 389
	img := photo(W, H)
	d := NewDecoder()
	defer d.Close()
	for _, src := range []struct {
		name string
		data []byte
	}{{"JPEG", encodeJPEG(t, img, 95)}, {"gray JPEG", encodeJPEG(t, gray(img), 95)}, {"PNG", encodePNG(t, img)}} {
		for _, c := range []int{3, 1} {
			if src.name == "PNG" && c == 1 {
				continue // Go's PNG decoder is slow under -race; its crop is covered in colour
			}
			ref := fullDecode(t, d, src.data, c)
			for _, crop := range []image.Rectangle{
				image.Rect(0, 0, 100, 80), image.Rect(W-100, 0, W, 80), image.Rect(0, H-80, 100, H),
				image.Rect(W-100, H-80, W, H), image.Rect(0, 150, W, 200), image.Rect(200, 0, 260, H),
				image.Rect(0, 0, W, H), image.Rect(W-1, H-1, W, H), image.Rect(0, 0, 1, 1),
			} {
				for _, out := range [][2]int{{224, 224}, {37, 53}, {1, 1}} {
					got := decode(t, d, Image{Data: src.data}, crop, out[0], out[1], c, false)
					want := decode(t, d, ref, crop, out[0], out[1], c, false)
					if p := psnr(got, want); p < 30 {
						t.Errorf("%s c=%d %v to %v: PSNR %.1f dB against full decode", src.name, c, crop, out, p)
					}
				}
			}
		}
	}
}

// TestFlip: a flipped output is the unflipped one mirrored, exactly, for every source kind,
// channel count and DCT scale.
func TestFlip(t *testing.T) {
	img := photo(300, 200)
	d := NewDecoder()
	defer d.Close()
	for _, src := range []Image{
		{Data: encodeJPEG(t, img, 90)}, {Data: encodePNG(t, img)},
		{Data: rgbOf(img), Raw: true, Width: 300, Height: 200, Channels: 3},
	} {
		for _, c := range []int{1, 3} {
			for _, out := range [][2]int{{224, 160}, {40, 31}, {150, 100}} {
				crop := image.Rect(17, 9, 283, 190)
				a := decode(t, d, src, crop, out[0], out[1], c, false)
				b := decode(t, d, src, crop, out[0], out[1], c, true)
				w := out[0]
				for y := 0; y < out[1]; y++ {
					for x := 0; x < w; x++ {
						p, q := (y*w+x)*c, (y*w+w-1-x)*c
						if !bytes.Equal(a[p:p+c], b[q:q+c]) {
							t.Fatalf("raw=%v c=%d %v: pixel (%d,%d) is not mirrored", src.Raw, c, out, x, y)
						}
					}
				}
			}
		}
	}
}

// TestCHW: DecodeResizedCHW gives DecodeResized's pixels transposed to one plane per
// channel, exactly, for every source kind (JPEG at several DCT scales, PNG, raw pixels with
// and without a channel conversion), channel count, flip and up- and downscaling.
func TestCHW(t *testing.T) {
	img := photo(300, 200)
	px := rgbOf(img)
	rgba := make([]byte, 0, 300*200*4)
	for i := 0; i < 300*200; i++ {
		rgba = append(rgba, px[3*i], px[3*i+1], px[3*i+2], 255)
	}
	d := NewDecoder()
	defer d.Close()
	for _, src := range []Image{
		{Data: encodeJPEG(t, img, 90)}, {Data: encodeJPEG(t, gray(img), 90)}, {Data: encodePNG(t, img)},
		{Data: px, Raw: true, Width: 300, Height: 200, Channels: 3},
		{Data: rgba, Raw: true, Width: 300, Height: 200, Channels: 4},
	} {
		for _, c := range []int{1, 3} {
			for _, out := range [][2]int{{224, 160}, {40, 31}, {150, 100}, {31, 17}, {400, 300}} {
				for _, flip := range []bool{false, true} {
					crop := image.Rect(17, 9, 283, 190)
					hwc := decode(t, d, src, crop, out[0], out[1], c, flip)
					chw := make([]byte, len(hwc))
					if err := d.DecodeResizedCHW(src, crop, out[0], out[1], c, flip, chw); err != nil {
						t.Fatal(err)
					}
					plane := out[0] * out[1]
					for p := 0; p < plane; p++ {
						for k := 0; k < c; k++ {
							if chw[k*plane+p] != hwc[p*c+k] {
								t.Fatalf("raw=%v c=%d %v flip=%v: pixel %d channel %d: CHW %d, HWC %d", src.Raw, c, out, flip, p, k, chw[k*plane+p], hwc[p*c+k])
							}
						}
					}
				}
			}
		}
	}
}

// TestChannels: gray output of colour is its luma; colour output of gray has R = G = B; raw
// RGBA and gray inputs convert; Size reports the native channels.
func TestChannels(t *testing.T) {
	img := photo(200, 150)
	d := NewDecoder()
	defer d.Close()
	crop := image.Rect(10, 10, 190, 140)
	jpg := encodeJPEG(t, img, 95)
	rgb := decode(t, d, Image{Data: jpg}, crop, 100, 80, 3, false)
	g := decode(t, d, Image{Data: jpg}, crop, 100, 80, 1, false)
	l := make([]byte, len(g))
	for i := range l {
		l[i] = luma(rgb[3*i], rgb[3*i+1], rgb[3*i+2])
	}
	if p := psnr(g, l); p < 35 {
		t.Errorf("gray output of a colour JPEG: PSNR %.1f dB against the luma of its RGB output", p)
	}
	grayJPG := encodeJPEG(t, gray(img), 95)
	c3 := decode(t, d, Image{Data: grayJPG}, crop, 100, 80, 3, false)
	for i := 0; i < len(c3); i += 3 {
		if c3[i] != c3[i+1] || c3[i] != c3[i+2] {
			t.Fatalf("RGB output of a gray JPEG: pixel %d is %v", i/3, c3[i:i+3])
		}
	}
	// Raw RGBA drops alpha; raw gray spreads to RGB.
	px := rgbOf(img)
	rgba := make([]byte, 0, 200*150*4)
	gr := make([]byte, 0, 200*150)
	for i := 0; i < 200*150; i++ {
		rgba = append(rgba, px[3*i], px[3*i+1], px[3*i+2], byte(i))
		gr = append(gr, px[3*i+1])
	}
	a := decode(t, d, Image{Data: px, Raw: true, Width: 200, Height: 150, Channels: 3}, crop, 64, 64, 3, false)
	b := decode(t, d, Image{Data: rgba, Raw: true, Width: 200, Height: 150, Channels: 4}, crop, 64, 64, 3, false)
	if !bytes.Equal(a, b) {
		t.Error("raw RGBA resized differs from raw RGB")
	}
	g1 := decode(t, d, Image{Data: gr, Raw: true, Width: 200, Height: 150, Channels: 1}, crop, 64, 64, 1, false)
	g3 := decode(t, d, Image{Data: gr, Raw: true, Width: 200, Height: 150, Channels: 1}, crop, 64, 64, 3, false)
	for i := range g1 {
		if g3[3*i] != g1[i] || g3[3*i+1] != g1[i] || g3[3*i+2] != g1[i] {
			t.Fatalf("raw gray to RGB: pixel %d is %v, gray %d", i, g3[3*i:3*i+3], g1[i])
		}
	}
	for _, tc := range []struct {
		im   Image
		c    int
		name string
	}{{Image{Data: jpg}, 3, "JPEG"}, {Image{Data: grayJPG}, 1, "gray JPEG"}, {Image{Data: encodePNG(t, gray(img))}, 1, "gray PNG"},
		{Image{Data: encodePNG(t, img)}, 3, "PNG"}, {Image{Data: rgba, Raw: true, Width: 200, Height: 150, Channels: 4}, 3, "raw RGBA"}} {
		w, h, c, err := d.Size(tc.im)
		if err != nil || w != 200 || h != 150 || c != tc.c {
			t.Errorf("Size(%s) = %d, %d, %d, %v; want 200, 150, %d", tc.name, w, h, c, err, tc.c)
		}
	}
}

// TestGoFormats: GIF, BMP and TIFF decode to the same output as the PNG of the same pixels.
func TestGoFormats(t *testing.T) {
	img := photo(120, 90)
	var gifBuf, bmpBuf, tiffBuf bytes.Buffer
	pal := image.NewPaletted(img.Bounds(), nil)
	palette := make(color.Palette, 0, 256)
	for i := 0; i < 256; i++ {
		palette = append(palette, color.RGBA{byte(i), byte(255 - i), byte(i * 7), 255})
	}
	pal.Palette = palette
	for i := range pal.Pix {
		pal.Pix[i] = byte(i * 31)
	}
	if err := gif.Encode(&gifBuf, pal, nil); err != nil {
		t.Fatal(err)
	}
	if err := bmp.Encode(&bmpBuf, img); err != nil {
		t.Fatal(err)
	}
	if err := tiff.Encode(&tiffBuf, img, nil); err != nil {
		t.Fatal(err)
	}
	palRGBA := image.NewRGBA(img.Bounds())
	for y := 0; y < 90; y++ {
		for x := 0; x < 120; x++ {
			palRGBA.Set(x, y, pal.At(x, y))
		}
	}
	d := NewDecoder()
	defer d.Close()
	crop := image.Rect(5, 5, 115, 85)
	for _, tc := range []struct {
		name     string
		data, as []byte
	}{{"GIF", gifBuf.Bytes(), encodePNG(t, palRGBA)}, {"BMP", bmpBuf.Bytes(), encodePNG(t, img)}, {"TIFF", tiffBuf.Bytes(), encodePNG(t, img)}} {
		got := decode(t, d, Image{Data: tc.data}, crop, 64, 48, 3, true)
		want := decode(t, d, Image{Data: tc.as}, crop, 64, 48, 3, true)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: output differs from the PNG of the same pixels (PSNR %.1f dB)", tc.name, psnr(got, want))
		}
	}
}

// TestBadInputs: hostile and wrong inputs give errors wrapping the package's error values,
// never a panic or a crash, and the decoder decodes the next good image as a new one does.
func TestBadInputs(t *testing.T) {
	img := photo(256, 192)
	jpg := encodeJPEG(t, img, 90)
	png := encodePNG(t, img)
	zeroW := bytes.Clone(jpg)
	sof := bytes.Index(zeroW, []byte{0xFF, 0xC0})
	zeroW[sof+7], zeroW[sof+8] = 0, 0 // width 0
	eoiInScan := bytes.Clone(jpg)
	copy(eoiInScan[len(jpg)/2:], []byte{0xFF, 0xD9})
	garbledScan := bytes.Clone(jpg)
	for i := len(jpg) / 3; i < len(jpg)/3+200; i++ {
		garbledScan[i] = byte(i * 97)
	}
	// Headers that declare 10000×10000 and 9000×9000 pixels over small images' data.
	huge := bytes.Clone(jpg)
	huge[sof+5], huge[sof+6], huge[sof+7], huge[sof+8] = 10000>>8, 10000&0xFF, 10000>>8, 10000&0xFF
	hugePNG := bytes.Clone(png)
	binary.BigEndian.PutUint32(hugePNG[16:], 9000)
	binary.BigEndian.PutUint32(hugePNG[20:], 9000)
	binary.BigEndian.PutUint32(hugePNG[29:], crc32.ChecksumIEEE(hugePNG[12:29]))
	whole := image.Rect(0, 0, 256, 192)
	cases := []struct {
		name      string
		im        Image
		crop      image.Rectangle
		w, h, c   int
		dstLen    int // 0: w*h*c
		maxPixels int64
		want      error
	}{
		{"empty", Image{}, whole, 8, 8, 3, 0, 0, ErrCorrupt},
		{"garbage", Image{Data: []byte("this is not an image at all")}, whole, 8, 8, 3, 0, 0, ErrFormat},
		{"PSD", Image{Data: []byte("8BPS\x00\x01\x00\x00\x00\x00\x00\x00")}, whole, 8, 8, 3, 0, 0, ErrFormat},
		{"JPEG SOI only", Image{Data: []byte{0xFF, 0xD8, 0xFF}}, whole, 8, 8, 3, 0, 0, ErrCorrupt},
		{"JPEG header only", Image{Data: jpg[:bytes.Index(jpg, []byte{0xFF, 0xDA})+4]}, whole, 8, 8, 3, 0, 0, ErrCorrupt},
		{"JPEG truncated", Image{Data: jpg[:len(jpg)/2]}, whole, 8, 8, 3, 0, 0, ErrCorrupt},
		{"JPEG truncated, bottom crop", Image{Data: jpg[:len(jpg)*2/3]}, image.Rect(0, 150, 256, 192), 64, 64, 3, 0, 0, ErrCorrupt},
		{"JPEG EOI inside the scan", Image{Data: eoiInScan}, whole, 64, 64, 3, 0, 0, ErrCorrupt},
		{"JPEG garbled scan", Image{Data: garbledScan}, whole, 64, 64, 3, 0, 0, ErrCorrupt},
		{"JPEG width 0", Image{Data: zeroW}, whole, 8, 8, 3, 0, 0, ErrCorrupt},
		{"JPEG 100 Mpixels declared", Image{Data: huge}, image.Rect(0, 0, 100, 100), 8, 8, 3, 0, 0, ErrTooLarge},
		{"JPEG over SetMaxPixels", Image{Data: jpg}, whole, 8, 8, 3, 0, 256 * 191, ErrTooLarge},
		{"PNG 81 Mpixels declared", Image{Data: hugePNG}, image.Rect(0, 0, 100, 100), 8, 8, 3, 0, 0, ErrTooLarge},
		{"PNG truncated", Image{Data: png[:len(png)/2]}, whole, 8, 8, 3, 0, 0, ErrCorrupt},
		{"PNG header only", Image{Data: png[:40]}, whole, 8, 8, 3, 0, 0, ErrCorrupt},
		{"crop outside", Image{Data: jpg}, image.Rect(200, 100, 300, 200), 8, 8, 3, 0, 0, ErrArgument},
		{"crop negative", Image{Data: png}, image.Rect(-1, 0, 10, 10), 8, 8, 3, 0, 0, ErrArgument},
		{"crop empty", Image{Data: jpg}, image.Rect(10, 10, 10, 20), 8, 8, 3, 0, 0, ErrArgument},
		{"output 0 wide", Image{Data: jpg}, whole, 0, 8, 3, 0, 0, ErrArgument},
		{"output too large", Image{Data: jpg}, whole, MaxOutSide + 1, 1, 3, 0, 0, ErrArgument},
		{"2 channels", Image{Data: jpg}, whole, 8, 8, 2, 0, 0, ErrArgument},
		{"dst short", Image{Data: jpg}, whole, 8, 8, 3, 100, 0, ErrArgument},
		{"raw short", Image{Data: make([]byte, 100), Raw: true, Width: 20, Height: 5, Channels: 3}, image.Rect(0, 0, 5, 5), 8, 8, 3, 0, 0, ErrCorrupt},
		{"raw 0 wide", Image{Data: nil, Raw: true, Width: 0, Height: 10, Channels: 3}, image.Rect(0, 0, 5, 5), 8, 8, 3, 0, 0, ErrArgument},
		{"raw 2 channels", Image{Data: make([]byte, 200), Raw: true, Width: 10, Height: 10, Channels: 2}, image.Rect(0, 0, 5, 5), 8, 8, 3, 0, 0, ErrArgument},
		{"raw crop outside", Image{Data: make([]byte, 360), Raw: true, Width: 12, Height: 10, Channels: 3}, image.Rect(5, 5, 13, 10), 8, 8, 3, 0, 0, ErrArgument},
		{"dst short, not square", Image{Data: jpg}, whole, 8, 4, 3, 100, 0, ErrArgument},
	}
	// Sizes in messages are height first, as everywhere in the project (and said so).
	msgs := map[string]string{
		"JPEG over SetMaxPixels": "header says 192x256 (height x width) = 49152 pixels",
		"crop outside":           "crop (rows 100-200, columns 200-300) outside the 192x256 (height x width) image",
		"crop empty":             "empty crop (rows 10-20, columns 10-10)",
		"output 0 wide":          "output size 8x0 (height x width;",
		"dst short, not square":  "4x8x3 (height x width x channels) needs 96",
		"raw short":              "raw image 5x20x3 (height x width x channels) needs 300 bytes",
		"raw crop outside":       "crop (rows 5-10, columns 5-13) outside the 10x12 (height x width) image",
	}
	d := NewDecoder()
	defer d.Close()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.dstLen
			if n == 0 {
				n = tc.w * tc.h * tc.c
			}
			d.SetMaxPixels(DefaultMaxPixels)
			if tc.maxPixels != 0 {
				d.SetMaxPixels(tc.maxPixels)
			}
			err := d.DecodeResized(tc.im, tc.crop, tc.w, tc.h, tc.c, false, make([]byte, max(n, 0)))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if m, ok := msgs[tc.name]; ok && !strings.Contains(err.Error(), m) {
				t.Fatalf("err %q, want it to say %q", err, m)
			}
			t.Log(err)
		})
	}
	d.SetMaxPixels(DefaultMaxPixels)
	got := decode(t, d, Image{Data: jpg}, image.Rect(20, 10, 220, 180), 100, 90, 3, false)
	fresh := NewDecoder()
	defer fresh.Close()
	if want := decode(t, fresh, Image{Data: jpg}, image.Rect(20, 10, 220, 180), 100, 90, 3, false); !bytes.Equal(got, want) {
		t.Error("after the bad inputs, the decoder's output differs from a new decoder's")
	}
}

// TestTruncatedAboveCrop: a JPEG cut below the crop decodes the crop (decoding stops at its
// last row): the loader sees damage only where it reads.
func TestTruncatedAboveCrop(t *testing.T) {
	if !LibJPEG {
		t.Skip("image/jpeg decodes the whole image: any cut is an error")
	}
	jpg := encodeJPEG(t, photo(256, 192), 90)
	d := NewDecoder()
	defer d.Close()
	cut := jpg[:len(jpg)*3/4]
	top := image.Rect(0, 0, 256, 32)
	got := decode(t, d, Image{Data: cut}, top, 64, 8, 3, false)
	want := decode(t, d, Image{Data: jpg}, top, 64, 8, 3, false)
	if !bytes.Equal(got, want) {
		t.Error("crop above the cut differs from the whole file's")
	}
}

// TestConcurrentDecoders: one decoder per goroutine (run with -race).
func TestConcurrentDecoders(t *testing.T) {
	jpg := encodeJPEG(t, photo(256, 192), 90)
	ref := decode(t, NewDecoder(), Image{Data: jpg}, image.Rect(30, 20, 230, 170), 112, 112, 3, true)
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			d := NewDecoder()
			defer d.Close()
			out := make([]byte, len(ref))
			for i := 0; i < 20; i++ {
				if err := d.DecodeResized(Image{Data: jpg}, image.Rect(30, 20, 230, 170), 112, 112, 3, true, out); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(out, ref) {
					errs <- fmt.Errorf("iteration %d differs", i)
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestFromMeta: the raw mode's metadata gives the raw layout; other modes an encoded file.
func TestFromMeta(t *testing.T) {
	raw := FromMeta([]byte{1, 2, 3, 4, 5, 6}, mldf.ImageMeta{Height: 1, Width: 2, Channels: 3, Mode: mldf.ImageModeRaw})
	if !raw.Raw || raw.Width != 2 || raw.Height != 1 || raw.Channels != 3 {
		t.Errorf("raw: %+v", raw)
	}
	if enc := FromMeta([]byte{0xFF}, mldf.ImageMeta{Height: 1, Width: 2, Channels: 3, Mode: mldf.ImageModeJPEG}); enc.Raw {
		t.Errorf("JPEG: %+v", enc)
	}
}

// TestSIMDScale: the scales without SIMD inverse DCTs that cost more than the next SIMD
// scale are replaced by it; the others are kept.
func TestSIMDScale(t *testing.T) {
	for num, want := range map[int]int{1: 1, 2: 2, 3: 4, 4: 4, 5: 5, 6: 8, 7: 8, 8: 8} {
		if got := simdScale(num); got != want {
			t.Errorf("simdScale(%d) = %d, want %d", num, got, want)
		}
	}
}
