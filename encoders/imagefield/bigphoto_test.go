package imagefield

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/mldf/convert/internal/synthimage"
)

// bigPhotos are real-size photographs: a 24 MP DSLR frame, a 48 MP phone photo and a 100 MP
// medium-format frame, as baseline JPEG (colour, 4:2:0) and as 8-bit RGB PNG.
var bigPhotos = []struct {
	name string
	w, h int
}{
	{"24MP", 6000, 4000},
	{"48MP", 8000, 6000},
	{"100MP", 11552, 8672},
}

// bigPhoto returns a w×h colour photo as a baseline JPEG or an 8-bit RGB PNG.
func bigPhoto(t testing.TB, format string, w, h int) []byte {
	t.Helper()
	encode := synthimage.PNG
	if format == "jpeg" {
		encode = synthimage.JPEG
	}
	data, err := encode(w, h, true)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestBigPhotos: with the default options, photos are judged by what decoding them costs,
// not by their header. A JPEG resized to 256 pixels is decoded at 1/8 scale by
// libjpeg-turbo, so every size converts; a PNG (or a JPEG in the pure-Go build) is decoded
// whole, so one over max_pixels is refused before anything is decoded, and converts when
// max_pixels is raised. What each decode allocated is logged; the benchmark below and
// bench/bigphotos.sh measure time and peak RSS.
func TestBigPhotos(t *testing.T) {
	if raceEnabled {
		t.Skip("24-100 MP photos: heavy and single-goroutine, run without -race (race_test.go)")
	}
	for _, ph := range bigPhotos {
		full := int64(ph.w) * int64(ph.h)
		for _, format := range []string{"jpeg", "png"} {
			data := bigPhoto(t, format, ph.w, ph.h)
			for _, mode := range []Mode{ModeJPEG, ModeSmart} {
				for _, f := range variants(t, Options{Mode: mode, MaxResolution: 256}) {
					name := fmt.Sprintf("%s %s %s %s", ph.name, format, mode, pathName(f))
					scaled := format == "jpeg" && f.turbo
					wantOK := scaled || full <= DefaultMaxPixels
					var before, after runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&before)
					out, m, err := encodeBytes(f, "big."+format, data)
					runtime.ReadMemStats(&after)
					alloc := after.TotalAlloc - before.TotalAlloc
					if !wantOK {
						if !errors.Is(err, ErrTooManyPixels) || alloc > 1<<20 {
							t.Errorf("%s: want ErrTooManyPixels before decoding, got %v after allocating %d bytes", name, err, alloc)
						}
						continue
					}
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if int(m.Width) != 256 || len(out) == 0 {
						t.Fatalf("%s: stored %dx%d", name, m.Width, m.Height)
					}
					t.Logf("%s: allocated %.1f MB (%.2f bytes a header pixel)", name, float64(alloc)/1e6, float64(alloc)/float64(full))
				}
			}
		}
	}
}

// TestBigPhotoMaxPixelsRaised: the 100 MP PNG converts once max_pixels allows its decode, and
// a progressive or whole-decoded JPEG is judged by its full size.
func TestBigPhotoMaxPixelsRaised(t *testing.T) {
	if raceEnabled {
		t.Skip("a 100 MP PNG: heavy and single-goroutine, run without -race (race_test.go)")
	}
	ph := bigPhotos[len(bigPhotos)-1]
	data, err := synthimage.PNG(ph.w, ph.h, false)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New("image", Options{Mode: ModeJPEG, MaxResolution: 256, MaxPixels: 1 << 27})
	if err != nil {
		t.Fatal(err)
	}
	if _, m, err := encodeBytes(f, "big.png", data); err != nil || m.Width != 256 {
		t.Fatalf("100 MP PNG with max_pixels 2^27: %v %+v", err, m)
	}
}

// BenchmarkBigPhotos times one photo of each size to JPEG at 256 pixels (PNG with max_pixels
// raised to 2^27 so that the 100 MP one converts), reporting header megapixels per second;
// bench/bigphotos.sh measures the peak RSS of whole runs.
func BenchmarkBigPhotos(b *testing.B) {
	for _, ph := range bigPhotos {
		for _, format := range []string{"jpeg", "png"} {
			data := bigPhoto(b, format, ph.w, ph.h)
			b.Run(ph.name+"-"+format, func(b *testing.B) {
				f, err := New("image", Options{Mode: ModeJPEG, MaxResolution: 256, MaxPixels: 1 << 27})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := encodeBytes(f, "big."+format, data); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(ph.w*ph.h)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MP/s")
			})
		}
	}
}

// TestStoredSizeWithinMaxPixels: a DCT-scaled decode slightly smaller than the target (see
// dctShort) fits the budget, but the stored image, which readers decode, must too (rule F3).
func TestStoredSizeWithinMaxPixels(t *testing.T) {
	src := jpegBytes(t, 800, 800, 3)
	for _, f := range variants(t, Options{Mode: ModeJPEG, MaxResolution: 203, MaxPixels: 40500}) {
		_, m, err := encodeBytes(f, "x.jpg", src)
		if !errors.Is(err, ErrTooManyPixels) {
			t.Errorf("%s: stored %dx%d with max_pixels 40500, err %v", pathName(f), m.Width, m.Height, err)
		}
	}
}
