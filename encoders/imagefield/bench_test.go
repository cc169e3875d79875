package imagefield

import (
	"bytes"
	"fmt"
	"image/jpeg"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/internal/turbojpeg"
	"github.com/mldf/convert/sample"
)

// benchJPEG is a 500x375 photo-like JPEG at quality 90, like bench/genimages makes.
func benchJPEG(b *testing.B) []byte {
	return jpegBytes(b, 500, 375, 42)
}

// BenchmarkEncode measures one worker encoding one 500x375 JPEG: images/s per core.
//
//	go test ./encoders/imagefield -run XXX -bench Encode -benchtime 200x
func BenchmarkEncode(b *testing.B) {
	src := benchJPEG(b)
	cases := []struct {
		name string
		o    Options
	}{
		{"jpeg256q90", Options{Mode: ModeJPEG, MaxResolution: 256, JPEGQuality: 90}},
		{"jpeg256q90-lanczos", Options{Mode: ModeJPEG, MaxResolution: 256, JPEGQuality: 90, Filter: FilterLanczos}},
		{"smart256", Options{Mode: ModeSmart, MaxResolution: 256}},
		{"smart512", Options{Mode: ModeSmart, MaxResolution: 512}},
		{"raw256", Options{Mode: ModeRaw, MaxResolution: 256}},
	}
	for _, c := range cases {
		fs := variants(b, c.o)
		if fs[0].turbo && c.o.Mode == ModeJPEG {
			// The RGB path with libjpeg-turbo, for comparison with the planar path.
			g, _ := New("image", c.o)
			g.rgb = true
			fs = append(fs, g)
		}
		for _, f := range fs {
			b.Run(c.name+"/"+pathName(f), func(b *testing.B) {
				meta := make([]byte, mldf.ImageMetaSize)
				v := sample.Value{Kind: sample.KindBytes, Bytes: src, Name: "bench.jpg"}
				b.SetBytes(int64(len(src)))
				b.ReportAllocs()
				c0 := cpuTime()
				for b.Loop() {
					if _, err := f.Encode(v, meta); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, c0)
			})
		}
	}
}

// BenchmarkStages splits the jpeg-mode job (500x375 -> 256x192, q90) into its stages.
func BenchmarkStages(b *testing.B) {
	src := benchJPEG(b)
	hdr, _ := SniffHeader(src)
	b.Run("sniff", func(b *testing.B) {
		c0 := cpuTime()
		for b.Loop() {
			if _, err := SniffHeader(src); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, c0)
	})
	img, _ := jpeg.Decode(bytes.NewReader(src))
	full := fromImage(img, 3)
	b.Run("decode/go-full", func(b *testing.B) {
		c0 := cpuTime()
		for b.Loop() {
			img, err := jpeg.Decode(bytes.NewReader(src))
			if err != nil {
				b.Fatal(err)
			}
			_ = fromImage(img, 3)
		}
		reportCPU(b, c0)
	})
	scaled := full
	if turbojpeg.Available() {
		d, _ := turbojpeg.NewDecoder()
		defer d.Close()
		f, _ := New("image", Options{Mode: ModeJPEG, MaxResolution: 256, JPEGQuality: 90})
		num := f.dctScale(hdr, 256, 192) // 4: 250x188, enlarged a little
		b.Run("decode/turbo-scaled", func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				if _, _, _, err := d.Decode(src, num, turbojpeg.RGB, nil); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, c0)
		})
		b.Run("decode/turbo-full", func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				if _, _, _, err := d.Decode(src, 8, turbojpeg.RGB, nil); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, c0)
		})
		for _, n := range []int{1, 4, 5, 8} {
			b.Run(fmt.Sprintf("decode/turbo-yuv-%d", n), func(b *testing.B) {
				var p turbojpeg.Planes
				c0 := cpuTime()
				for b.Loop() {
					if err := d.DecodeYUV(src, n, &p); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, c0)
			})
			var p turbojpeg.Planes
			if err := d.DecodeYUV(src, n, &p); err != nil {
				b.Fatal(err)
			}
			yw, yh0, scw, sch, _ := turbojpeg.PlaneSizes(p.Width, p.Height, p.Subsampling)
			yh := axis{full: hdr.Width, num: n, sub: 1, src: p.Width, target: 256, outSub: 1, dst: 256}
			yv := axis{full: hdr.Height, num: n, sub: 1, src: p.Height, target: 192, outSub: 1, dst: 192}
			ch := axis{full: hdr.Width, num: n, sub: yw / scw, src: scw, target: 256, outSub: 2, dst: 128}
			cv := axis{full: hdr.Height, num: n, sub: yh0 / sch, src: sch, target: 192, outSub: 2, dst: 96}
			for _, flt := range []Filter{FilterBox, FilterLanczos} {
				b.Run(fmt.Sprintf("resize/yuv-%d-%s", n, flt), func(b *testing.B) {
					var s scratch
					var tmp []byte
					y, cb, cr := make([]byte, 256*192), make([]byte, 128*96), make([]byte, 128*96)
					c0 := cpuTime()
					for b.Loop() {
						resample(p.Y, p.YStride, 1, y, 256, yh, yv, flt, &tmp, &s.taps)
						resample(p.Cb, p.CStride, 1, cb, 128, ch, cv, flt, &tmp, &s.taps)
						resample(p.Cr, p.CStride, 1, cr, 128, ch, cv, flt, &tmp, &s.taps)
					}
					reportCPU(b, c0)
				})
			}
		}
		pix, w, h, _ := d.Decode(src, num, turbojpeg.RGB, nil)
		scaled = pixbuf{pix: pix, w: w, h: h, c: 3}
	}
	for _, flt := range []Filter{FilterBox, FilterLinear, FilterLanczos} {
		b.Run("resize/full-"+flt.String(), func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				_ = resize(full, 256, 192, flt)
			}
			reportCPU(b, c0)
		})
		if scaled.w != full.w {
			b.Run("resize/scaled-"+flt.String(), func(b *testing.B) {
				c0 := cpuTime()
				for b.Loop() {
					_ = resize(scaled, 256, 192, flt)
				}
				reportCPU(b, c0)
			})
		}
	}
	small := resize(full, 256, 192, FilterBox)
	b.Run("encode/go", func(b *testing.B) {
		c0 := cpuTime()
		for b.Loop() {
			var buf bytes.Buffer
			if err := jpeg.Encode(&buf, toImage(small), &jpeg.Options{Quality: 90}); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, c0)
	})
	if turbojpeg.Available() {
		e, _ := turbojpeg.NewEncoder()
		defer e.Close()
		b.Run("encode/turbo", func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				if _, err := e.Encode(small.pix, small.w, small.h, turbojpeg.RGB, 90, turbojpeg.Samp420); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, c0)
		})
	}
}

// reportCPU reports images per second of wall time and, where measurable, the process CPU
// time per image and images per second per core (CPU time includes the garbage collector).
// On a loaded machine the CPU figures are the ones to compare.
func reportCPU(b *testing.B, c0 int64) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "images/s")
	if c1 := cpuTime(); c0 > 0 && c1 > c0 {
		per := float64(c1-c0) / float64(b.N)
		b.ReportMetric(per/1e3, "cpu-µs/img")
		b.ReportMetric(1e9/per, "img/s/core")
	}
}

// BenchmarkEncodeParallel runs the jpeg job (max 256, q90) on every core at once
// (GOMAXPROCS goroutines, one pooled codec each): images/s for the whole machine.
func BenchmarkEncodeParallel(b *testing.B) {
	src := benchJPEG(b)
	for _, f := range variants(b, Options{Mode: ModeJPEG, MaxResolution: 256, JPEGQuality: 90}) {
		b.Run("jpeg256q90/"+pathName(f), func(b *testing.B) {
			c0 := cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				meta := make([]byte, mldf.ImageMetaSize)
				v := sample.Value{Kind: sample.KindBytes, Bytes: src, Name: "bench.jpg"}
				for pb.Next() {
					if _, err := f.Encode(v, meta); err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportCPU(b, c0)
		})
	}
}

// BenchmarkFolder encodes the images of the folder named by $MLDF_BENCH_IMAGES (for example
// the output of bench/genimages), reading each file, on every core. Skipped when unset.
//
//	go run ./bench/genimages -out /tmp/imgs -n 2000
//	MLDF_BENCH_IMAGES=/tmp/imgs go test ./encoders/imagefield -run XXX -bench Folder -benchtime 2000x
func BenchmarkFolder(b *testing.B) {
	dir := os.Getenv("MLDF_BENCH_IMAGES")
	if dir == "" {
		b.Skip("MLDF_BENCH_IMAGES not set")
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		b.Skip("no files")
	}
	for _, o := range []Options{
		{Mode: ModeJPEG, MaxResolution: 256, JPEGQuality: 90},
		{Mode: ModeSmart, MaxResolution: 512},
	} {
		for _, f := range variants(b, o) {
			b.Run(fmt.Sprintf("%s%d/%s", o.Mode, o.MaxResolution, pathName(f)), func(b *testing.B) {
				var next atomic.Int64
				c0 := cpuTime()
				b.RunParallel(func(pb *testing.PB) {
					meta := make([]byte, mldf.ImageMetaSize)
					for pb.Next() {
						p := files[int(next.Add(1)-1)%len(files)]
						if _, err := f.Encode(sample.Value{Kind: sample.KindFile, Path: p}, meta); err != nil {
							b.Error(err)
							return
						}
					}
				})
				reportCPU(b, c0)
			})
		}
	}
}

// BenchmarkFolderStages splits the jpeg job (max 256, q90) on the real files of
// $MLDF_BENCH_IMAGES into its stages, on one core, one image per iteration (cycling through
// the folder): what each costs beside TurboJPEG's floor. decode-yuv-1 decodes at 1/8 scale,
// which still entropy-decodes every coefficient: the Huffman decoding alone, the floor of any
// DCT-scaled decode. Skipped when unset, or without TurboJPEG.
//
//	MLDF_BENCH_IMAGES=bench/data/images2000 go test ./encoders/imagefield -run XXX -bench FolderStages -benchtime 2000x
func BenchmarkFolderStages(b *testing.B) {
	dir := os.Getenv("MLDF_BENCH_IMAGES")
	if dir == "" {
		b.Skip("MLDF_BENCH_IMAGES not set")
	}
	if !turbojpeg.Available() {
		b.Skip("no TurboJPEG in this build")
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		b.Skip("no files")
	}
	data := make([][]byte, len(files))
	for i, p := range files {
		var err error
		if data[i], err = os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	}
	f, err := New("image", Options{Mode: ModeJPEG, MaxResolution: 256, JPEGQuality: 90})
	if err != nil {
		b.Fatal(err)
	}
	d, _ := turbojpeg.NewDecoder()
	defer d.Close()
	e, _ := turbojpeg.NewEncoder()
	defer e.Close()
	// stage runs fn on image i of each iteration.
	stage := func(name string, fn func(i int) error) {
		b.Run(name, func(b *testing.B) {
			i := 0
			c0 := cpuTime()
			for b.Loop() {
				if err := fn(i % len(data)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			reportCPU(b, c0)
		})
	}
	var buf []byte
	stage("read", func(i int) (err error) {
		buf, err = inputfile.ReadFileInto(files[i], buf)
		return err
	})
	var p turbojpeg.Planes
	stage("decode-yuv-1", func(i int) error { return d.DecodeYUV(data[i], 1, &p) })
	stage("decode-yuv-scaled", func(i int) error {
		hdr, err := SniffHeader(data[i])
		if err != nil {
			return err
		}
		sw, sh := f.target(hdr.Width, hdr.Height)
		return d.DecodeYUV(data[i], f.dctScale(hdr, sw, sh), &p)
	})
	// The encoder's input: one image's planes at the target size, as the field makes them.
	small := turbojpeg.Planes{Width: 256, Height: 192, Subsampling: turbojpeg.Samp420,
		Y: make([]byte, 256*192), YStride: 256, Cb: make([]byte, 128*96), Cr: make([]byte, 128*96), CStride: 128}
	if err := d.DecodeYUV(data[0], 4, &p); err != nil {
		b.Fatal(err)
	}
	for y := range 192 {
		for x := range 256 {
			small.Y[y*256+x] = p.Y[min(y, p.Height-1)*p.YStride+min(x, p.Width-1)]
		}
	}
	for y := range 96 {
		for x := range 128 {
			small.Cb[y*128+x] = p.Cb[min(y, p.Height/2-1)*p.CStride+min(x, p.Width/2-1)]
			small.Cr[y*128+x] = p.Cr[min(y, p.Height/2-1)*p.CStride+min(x, p.Width/2-1)]
		}
	}
	stage("encode-yuv-256", func(int) error {
		_, err := e.EncodeYUV(&small, 90)
		return err
	})
	meta := make([]byte, mldf.ImageMetaSize)
	stage("field-encode", func(i int) error {
		_, err := f.Encode(sample.Value{Kind: sample.KindFile, Path: files[i]}, meta)
		return err
	})
}
