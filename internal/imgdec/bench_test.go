package imgdec

import (
	"image"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mldf/convert/internal/turbojpeg"
)

// benchJPEG is the loader benchmark's image: a photo-like 500×375 picture stored as the
// image job stores it (bench/images.sh): resized to max side 256 (256×192), JPEG q90.
func benchJPEG(t testing.TB) ([]byte, int, int) {
	t.Helper()
	src := photo(500, 375)
	rgb := make([]byte, 500*375*3)
	for i := 0; i < 500*375; i++ {
		copy(rgb[3*i:3*i+3], src.Pix[4*i:4*i+3])
	}
	const w, h = 256, 192
	small := make([]byte, w*h*3)
	d := NewDecoder()
	defer d.Close()
	if err := d.DecodeResized(Image{Data: rgb, Raw: true, Width: 500, Height: 375, Channels: 3}, image.Rect(0, 0, 500, 375), w, h, 3, false, small); err != nil {
		t.Fatal(err)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < w*h; i++ {
		copy(img.Pix[4*i:4*i+3], small[3*i:3*i+3])
		img.Pix[4*i+3] = 255
	}
	return encodeJPEG(t, img, 90), w, h
}

// randomResizedCrop returns torchvision's RandomResizedCrop box for a w×h image with scale
// (0.08, 1) and ratio (3/4, 4/3).
func randomResizedCrop(r *rand.Rand, w, h int) image.Rectangle {
	area := float64(w * h)
	for range 10 {
		a := area * (0.08 + r.Float64()*0.92)
		logr := math.Log(3.0/4) + r.Float64()*(math.Log(4.0/3)-math.Log(3.0/4))
		ar := math.Exp(logr)
		cw := int(math.Round(math.Sqrt(a * ar)))
		ch := int(math.Round(math.Sqrt(a / ar)))
		if cw > 0 && cw <= w && ch > 0 && ch <= h {
			x := r.IntN(w - cw + 1)
			y := r.IntN(h - ch + 1)
			return image.Rect(x, y, x+cw, y+ch)
		}
	}
	s := min(w, h)
	return image.Rect((w-s)/2, (h-s)/2, (w-s)/2+s, (h-s)/2+s)
}

// BenchmarkRandomResizedCrop decodes the benchmark image with random-resized crops and
// flips to 224 and 160 pixels: "crop" is this package's path (DCT scale, crop and skip
// scanlines; CHW output), "crop-fast" the same with SetFastJPEG, "full" the baseline that decodes the whole JPEG with libjpeg-turbo (as FFCV
// does) and then crops and resamples. Reports images/s.
func BenchmarkRandomResizedCrop(b *testing.B) {
	data, w, h := benchJPEG(b)
	for _, size := range []int{224, 160} {
		crops := make([]image.Rectangle, 1024)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range crops {
			crops[i] = randomResizedCrop(r, w, h)
		}
		dst := make([]byte, size*size*3)
		for _, fast := range []bool{false, true} {
			name := "/crop"
			if fast {
				name = "/crop-fast"
			}
			b.Run(sizeName(size)+name, func(b *testing.B) {
				d := NewDecoder()
				defer d.Close()
				d.SetFastJPEG(fast)
				b.ReportAllocs()
				cpu := cpuTime()
				for i := 0; b.Loop(); i++ {
					if err := d.DecodeResizedCHW(Image{Data: data}, crops[i%len(crops)], size, size, 3, i%2 == 0, dst); err != nil {
						b.Fatal(err)
					}
				}
				report(b, cpu)
			})
		}
		b.Run(sizeName(size)+"/full", func(b *testing.B) {
			if !turbojpeg.Available() {
				b.Skip("libjpeg-turbo not compiled in (CGO_ENABLED=0)")
			}
			tj, err := turbojpeg.NewDecoder()
			if err != nil {
				b.Fatal(err)
			}
			defer tj.Close()
			d := NewDecoder()
			defer d.Close()
			var pix []byte
			b.ReportAllocs()
			cpu := cpuTime()
			for i := 0; b.Loop(); i++ {
				pix, _, _, err = tj.Decode(data, 8, turbojpeg.RGB, pix)
				if err != nil {
					b.Fatal(err)
				}
				im := Image{Data: pix, Raw: true, Width: w, Height: h, Channels: 3}
				if err := d.DecodeResized(im, crops[i%len(crops)], size, size, 3, i%2 == 0, dst); err != nil {
					b.Fatal(err)
				}
			}
			report(b, cpu)
		})
	}
}

func sizeName(n int) string {
	switch n {
	case 224:
		return "224"
	case 160:
		return "160"
	}
	return "other"
}

// report reports images/s of wall time and microseconds of process CPU time per image (the
// figure to compare on a shared machine) since cpu0.
func report(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "images/s")
	if cpu0 >= 0 {
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/image")
	}
}

// BenchmarkResample times the resampling alone: a 120×100 RGB crop to 224×224 (upscaling, as
// most random-resized crops of the benchmark image are) and a 256×192 image to 160×160.
func BenchmarkResample(b *testing.B) {
	src := photo(256, 192)
	rgb := make([]byte, 256*192*3)
	for i := 0; i < 256*192; i++ {
		copy(rgb[3*i:3*i+3], src.Pix[4*i:4*i+3])
	}
	im := Image{Data: rgb, Raw: true, Width: 256, Height: 192, Channels: 3}
	for _, tc := range []struct {
		name string
		crop image.Rectangle
		out  int
	}{{"up224", image.Rect(50, 40, 170, 140), 224}, {"down160", image.Rect(0, 0, 256, 192), 160}} {
		b.Run(tc.name, func(b *testing.B) {
			d := NewDecoder()
			dst := make([]byte, tc.out*tc.out*3)
			cpu := cpuTime()
			for i := 0; b.Loop(); i++ {
				if err := d.DecodeResized(im, tc.crop, tc.out, tc.out, 3, i%2 == 0, dst); err != nil {
					b.Fatal(err)
				}
			}
			report(b, cpu)
		})
	}
}

// BenchmarkSize times reading a JPEG's header.
func BenchmarkSize(b *testing.B) {
	data, _, _ := benchJPEG(b)
	d := NewDecoder()
	defer d.Close()
	cpu := cpuTime()
	for b.Loop() {
		if _, _, _, err := d.Size(Image{Data: data}); err != nil {
			b.Fatal(err)
		}
	}
	report(b, cpu)
}
