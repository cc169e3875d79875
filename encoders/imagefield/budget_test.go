package imagefield

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"runtime"
	"testing"
)

// TestPixelBudget covers the "13000×13000 PNG used 3.2 GB" finding of an audit: pixel counts
// at, just over and far over the default max_pixels. Over the limit fails from the header,
// before anything is allocated for pixels; at the limit the image is converted within the
// documented per-worker budget (P × BytesPerPixel; TotalAlloc counts garbage too, so it
// bounds the peak from above).
func TestPixelBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("a 16 MP PNG: heavy and single-goroutine, run without -race (race_test.go)")
	}
	const side = 4096 // max_pixels 2^24 = 4096 × 4096 (the default is larger: TestBigPhotos)
	at := func() []byte {
		img := image.NewGray(image.Rect(0, 0, side, side))
		for i := range img.Pix {
			img.Pix[i] = byte(i ^ i>>12)
		}
		var buf bytes.Buffer
		(&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
		return buf.Bytes()
	}()
	for _, tc := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"at the limit (4096x4096)", at, true},
		{"just over (4096x4097)", pngHeader(side, side+1), false},
		{"the issue's 13000x13000", pngHeader(13000, 13000), false},
		{"far over (100000x100000)", pngHeader(100000, 100000), false},
	} {
		for _, mode := range []Mode{ModeSmart, ModeRaw} {
			f, err := New("image", Options{Mode: mode, MaxPixels: side * side})
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, m, err := encodeBytes(f, "big.png", tc.data)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			if !tc.ok {
				if !errors.Is(err, ErrTooManyPixels) || alloc > 1<<20 {
					t.Errorf("%s %s: %v after allocating %d bytes", tc.name, mode, err, alloc)
				}
				continue
			}
			if err != nil || int(m.Width) != side {
				t.Fatalf("%s %s: %v %+v", tc.name, mode, err, m)
			}
			if perPixel := float64(alloc) / (side * side); perPixel > BytesPerPixel {
				t.Errorf("%s %s: allocated %.1f bytes a pixel, budget %d", tc.name, mode, perPixel, BytesPerPixel)
			} else {
				t.Logf("%s %s: allocated %.1f bytes a pixel", tc.name, mode, perPixel)
			}
		}
	}
}
