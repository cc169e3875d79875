package loader

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/imgdec"
)

// testPhoto is a deterministic photo-like image: gradients, edges, a disc and noise.
func testPhoto(w, h int, seed uint32) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	s := seed*2654435761 + 1
	for y := range h {
		for x := range w {
			s = s*1664525 + 1013904223
			n := float64(s>>24)/255*16 - 8
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			v := [3]float64{120 + 100*math.Sin(5*fx+3*fy+float64(seed)), 100 + 80*math.Cos(4*fy-2*fx), 60 + 90*fx + 60*fy}
			if (x/23+y/31)%4 == 0 {
				v = [3]float64{220 - v[0]/3, 50 + v[1]/4, 200 - v[2]/2}
			}
			o := img.PixOffset(x, y)
			for c := range 3 {
				img.Pix[o+c] = byte(max(0, min(255, v[c]+n)))
			}
			img.Pix[o+3] = 255
		}
	}
	return img
}

// imageFile writes n photo-like JPEGs of w×h (q90) in field "image" and labels i%10; sample
// bad (if >= 0) holds a JPEG cut in half and followed by garbage.
func imageFile(t testing.TB, n, w, h, bad int) string {
	t.Helper()
	fields := []mldf.FieldDesc{{Name: "image", Type: mldf.TypeImageJPEG}, {Name: "label", Type: mldf.TypeInt}}
	return writeMLDF(t, t.TempDir(), 1<<16, fields, n, func(i int) []tval {
		var b bytes.Buffer
		if err := jpeg.Encode(&b, testPhoto(w, h, uint32(i)), &jpeg.Options{Quality: 90}); err != nil {
			t.Fatal(err)
		}
		p := b.Bytes()
		if i == bad {
			p = append(p[:len(p)/2:len(p)/2], bytes.Repeat([]byte{0x13}, 64)...) // truncated, garbage
		}
		return []tval{{Payload: p, Img: mldf.ImageMeta{Width: uint16(w), Height: uint16(h), Channels: 3, Mode: 1}}, {Int: int64(i % 10)}}
	})
}

const rrcPlan = `{"seed":11,"fields":[{"field":"image","ops":[{"op":"RandomResizedCrop","size":64},{"op":"RandomHorizontalFlip"}]},{"field":"label","ops":[{"op":"Int"}]}]}`

// TestImageBatchMatchesPerSample decodes batches and compares each sample with a decode of
// the same sample, alone, through the reader and imgdec; with 1 and 4 threads and with the
// samples in other batches.
func TestImageBatchMatchesPerSample(t *testing.T) {
	path := imageFile(t, 40, 128, 96, -1)
	idx := []int64{3, 17, 0, 39, 22, 5, 8, 31}
	var first []byte
	for _, threads := range []int{1, 4} {
		l := openT(t, path, Options{Threads: threads})
		p := planT(t, l, rrcPlan)
		bufs, err := runT(t, p, idx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = bufs[0].Data
		} else if !bytes.Equal(first, bufs[0].Data) {
			t.Fatalf("threads=%d gave other pixels than threads=1", threads)
		}
	}
	l := openT(t, path, Options{Threads: 3})
	p := planT(t, l, rrcPlan)
	st := p.fields[0].st.(*imageStage)
	r, err := mldf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := imgdec.NewDecoder()
	defer d.Close()
	item := 64 * 64 * 3
	flips := 0
	for j, i := range idx {
		m, payload, err := r.Image(int(i), 0)
		if err != nil {
			t.Fatal(err)
		}
		rc := runCtx{seed: 11, epoch: 2, sample: i, field: 0}
		crop := st.box(rc, int(m.Width), int(m.Height))
		fr := rc.rand(1)
		flip := fr.float64() < 0.5
		if flip {
			flips++
		}
		want := make([]byte, item)
		if err := d.DecodeResized(imgdec.Image{Data: payload}, crop, 64, 64, 3, flip, want); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first[j*item:(j+1)*item], want) {
			t.Fatalf("sample %d differs from its own decode", i)
		}
		// the same sample alone in a batch
		one, err := runT(t, p, []int64{i}, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(one[0].Data, want) {
			t.Fatalf("sample %d alone differs", i)
		}
	}
	if flips == 0 || flips == len(idx) {
		t.Errorf("%d of %d flipped", flips, len(idx))
	}
	// another epoch draws other crops
	other, _ := runT(t, p, idx, 3)
	if bytes.Equal(other[0].Data, first) {
		t.Error("epoch 3 gave the pixels of epoch 2")
	}
}

func TestImageNormalizeCHW(t *testing.T) {
	path := imageFile(t, 6, 80, 60, -1)
	l := openT(t, path, Options{})
	base := planT(t, l, `{"fields":[{"field":"image","ops":[{"op":"CenterCrop","size":[24,32]}]}]}`)
	idx := []int64{0, 5, 2}
	hwc, err := runT(t, base, idx, 0)
	if err != nil {
		t.Fatal(err)
	}
	// uint8 CHW: the HWC bytes transposed.
	chw, err := runT(t, planT(t, l, `{"fields":[{"field":"image","ops":[{"op":"CenterCrop","size":[24,32]},{"op":"RandomHorizontalFlip","p":0},{"op":"ToCHW"}]}]}`), idx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for j := range idx {
		for c := range 3 {
			for pix := range 24 * 32 {
				if g, w := chw[0].Data[j*24*32*3+c*24*32+pix], hwc[0].Data[j*24*32*3+pix*3+c]; g != w {
					t.Fatalf("uint8 CHW: sample %d c%d px%d = %d, want %d", j, c, pix, g, w)
				}
			}
		}
	}
	mean, std := []float64{0.485, 0.456, 0.406}, []float64{0.229, 0.224, 0.225}
	// float32 HWC
	f32, err := runT(t, planT(t, l, `{"fields":[{"field":"image","ops":[{"op":"CenterCrop","size":[24,32]},{"op":"Normalize","mean":[0.485,0.456,0.406],"std":[0.229,0.224,0.225]}]}]}`), idx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for o, v := range hwc[0].Data {
		c := o % 3
		want := (float64(v)/255 - mean[c]) / std[c]
		if g := float64(math.Float32frombits(binary.LittleEndian.Uint32(f32[0].Data[4*o:]))); math.Abs(g-want) > 1e-5*math.Max(1, math.Abs(want)) {
			t.Fatalf("float32 HWC: byte %d = %v, want %v", o, g, want)
		}
	}
	for _, dt := range []string{"float32", "float16"} {
		for _, scale := range []float64{1, 255} {
			m := []float64{mean[0] * scale, mean[1] * scale, mean[2] * scale}
			s := []float64{std[0] * scale, std[1] * scale, std[2] * scale}
			js := fmt.Sprintf(`{"fields":[{"field":"image","ops":[{"op":"CenterCrop","size":[24,32]},{"op":"Normalize","mean":[%g,%g,%g],"std":[%g,%g,%g],"dtype":%q},{"op":"ToCHW"}]}]}`,
				m[0], m[1], m[2], s[0], s[1], s[2], dt)
			p := planT(t, l, js)
			out := p.Outputs()[0]
			if out.DType != dt || fmt.Sprint(out.Shape) != "[3 24 32]" {
				t.Fatalf("output %+v", out)
			}
			got, err := runT(t, p, idx, 0)
			if err != nil {
				t.Fatal(err)
			}
			for j := range idx {
				for c := range 3 {
					for pix := range 24 * 32 {
						v := hwc[0].Data[j*24*32*3+pix*3+c]
						want := (float64(v)/255 - mean[c]) / std[c]
						o := j*24*32*3 + c*24*32 + pix
						var g float64
						if dt == "float32" {
							g = float64(math.Float32frombits(binary.LittleEndian.Uint32(got[0].Data[4*o:])))
						} else {
							g = half2float(binary.LittleEndian.Uint16(got[0].Data[2*o:]))
						}
						if math.Abs(g-want) > 2e-3*math.Max(1, math.Abs(want)) {
							t.Fatalf("%s scale %g: sample %d c%d px%d = %v, want %v", dt, scale, j, c, pix, g, want)
						}
					}
				}
			}
		}
	}
}

func half2float(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	switch e {
	case 0:
		return sign * m / 1024 * math.Pow(2, -14)
	case 31:
		if m == 0 {
			return sign * math.Inf(1)
		}
		return math.NaN()
	}
	return sign * (1 + m/1024) * math.Pow(2, float64(e-15))
}

func TestFloat16(t *testing.T) {
	cases := []struct {
		f    float32
		want uint16
	}{{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {1e6, 0x7c00}, {6.1035156e-05, 0x0400}, {5.9604645e-08, 0x0001},
		{1e-9, 0}, {0.333333, 0x3555}, {float32(math.Inf(-1)), 0xfc00}, {2049, 0x6800}, {2051, 0x6802}}
	for _, c := range cases {
		if got := float16bits(c.f); got != c.want {
			t.Errorf("float16bits(%g) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
}

func TestRandomResizedCropBox(t *testing.T) {
	for _, sz := range [][2]int{{500, 375}, {256, 192}, {40, 3000}, {3000, 40}, {1, 1}} {
		for s := range 300 {
			r := prng{s: uint64(s)}
			b := randomResizedCrop(&r, sz[0], sz[1], [2]float64{0.08, 1}, [2]float64{math.Log(0.75), math.Log(4.0 / 3)}, [2]float64{0.75, 4.0 / 3})
			if b.Empty() || !b.In(image.Rect(0, 0, sz[0], sz[1])) {
				t.Fatalf("%v: box %v", sz, b)
			}
		}
	}
	// a very wide image falls back to a centre crop clamped to the ratio range
	r := prng{s: 1}
	b := randomResizedCrop(&r, 3000, 40, [2]float64{0.9, 1}, [2]float64{math.Log(0.75), math.Log(4.0 / 3)}, [2]float64{0.75, 4.0 / 3})
	if b != image.Rect(1473, 0, 1526, 40) {
		t.Fatalf("fallback box %v", b)
	}
}

func TestImageErrors(t *testing.T) {
	path := imageFile(t, 12, 64, 48, 7)
	l := openT(t, path, Options{Threads: 4})
	p := planT(t, l, rrcPlan)
	_, err := runT(t, p, []int64{1, 2, 7, 3, 4}, 0)
	if err == nil || !strings.Contains(err.Error(), "sample 7") || !strings.Contains(err.Error(), path) || !errors.Is(err, imgdec.ErrCorrupt) {
		t.Fatalf("corrupt sample: %v", err)
	}
	cases := []struct{ plan, want string }{
		{`{"fields":[{"field":"image","ops":[{"op":"RandomResizedCrop"}]}]}`, "no size"},
		{`{"fields":[{"field":"image","ops":[{"op":"RandomResizedCrop","size":[1,2,3]}]}]}`, "want an int or [height, width]"},
		{`{"fields":[{"field":"image","ops":[{"op":"RandomResizedCrop","size":0}]}]}`, "want 1..16384"},
		{`{"fields":[{"field":"image","ops":[{"op":"RandomResizedCrop","size":8,"scale":[0.5,0.1]}]}]}`, "want 0 < low <= high"},
		{`{"fields":[{"field":"image","ops":[{"op":"RandomResizedCrop","size":8,"scale":[0.5,2]}]}]}`, "high above 1"},
		{`{"fields":[{"field":"image","ops":[{"op":"CenterCrop","size":8,"ratio":1.5}]}]}`, "want a number in (0, 1]"},
		{`{"fields":[{"field":"image","ops":[{"op":"Resize","size":8,"scale":[0.1,1]}]}]}`, `unknown parameter "scale"`},
		{`{"fields":[{"field":"image","ops":[{"op":"Resize","size":8,"channels":4}]}]}`, "want 1 or 3"},
		{`{"fields":[{"field":"image","ops":[{"op":"Resize","size":8},{"op":"Normalize","mean":[1,2],"std":[1]}]}]}`, "2 means"},
		{`{"fields":[{"field":"image","ops":[{"op":"Resize","size":8},{"op":"Normalize","std":[0]}]}]}`, "zero"},
		{`{"fields":[{"field":"image","ops":[{"op":"Resize","size":8},{"op":"Normalize","dtype":"int8"}]}]}`, "want float32 or float16"},
		{`{"fields":[{"field":"image","ops":[{"op":"Resize","size":8},{"op":"ToCHW"},{"op":"Flip"}]}]}`, "op 2 Flip: must come once"},
		{`{"fields":[{"field":"image","ops":[{"op":"Resize","size":8},{"op":"Flip","p":2}]}]}`, "want 0..1"},
		{`{"fields":[{"field":"image","ops":[{"op":"Resize","size":8},{"op":"Int"}]}]}`, "not an image transform"},
		{`{"fields":[{"field":"label","ops":[{"op":"CenterCrop","size":8}]}]}`, "does not decode a INT field"},
	}
	for _, c := range cases {
		var spec PlanSpec
		if err := jsonUnmarshal(c.plan, &spec); err != nil {
			t.Fatal(err)
		}
		if _, err := l.NewPlan(spec); !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.plan, err, c.want)
		}
	}
}

// BenchmarkRun decodes batches of random-resized crops, flipped, as uint8 CHW (bench/loader.sh's
// pipeline) at 160 and 224, batch 128 and 256, and reports images/s and CPU microseconds per
// image. The file is photo-like 256×192 JPEGs (a 500×375 photo stored at max side 256), or
// the file LOADER_BENCH_FILE names (e.g. bench/out/loader.mldf of bench/loader.sh);
// LOADER_BENCH_THREADS sets the threads (default: every core).
func BenchmarkRun(b *testing.B) {
	path := os.Getenv("LOADER_BENCH_FILE")
	if path == "" {
		path = imageFile(b, 256, 256, 192, -1)
	}
	threads, _ := strconv.Atoi(os.Getenv("LOADER_BENCH_THREADS"))
	for _, size := range []int{160, 224} {
		for _, batch := range []int{128, 256} {
			b.Run(fmt.Sprintf("%d/B%d", size, batch), func(b *testing.B) {
				l, err := Open(context.Background(), path, Options{Threads: threads})
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				var spec PlanSpec
				jsonUnmarshal(fmt.Sprintf(`{"fields":[{"field":"image","ops":[{"op":"RandomResizedCrop","size":%d},{"op":"RandomHorizontalFlip"},{"op":"ToCHW"}]},{"field":"label","ops":[{"op":"Int"}]}]}`, size), &spec)
				p, err := l.NewPlan(spec)
				if err != nil {
					b.Fatal(err)
				}
				o, _ := l.Order(OrderSpec{Mode: OrderRandom})
				idx := make([]int64, batch)
				bufs := []Buffer{{Data: make([]byte, batch*size*size*3)}, {Data: make([]byte, batch*8)}}
				nb := max(o.Len()/batch, 1)
				b.ResetTimer()
				cpu0 := cpuTime()
				for it := 0; it < b.N; it++ {
					o.Fill(it%nb*batch, idx)
					if err := p.Run(context.Background(), idx, int64(it), bufs); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "images/s")
				if cpu := cpuTime() - cpu0; cpu > 0 {
					b.ReportMetric(cpu.Seconds()*1e6/float64(b.N*batch), "cpu-us/image")
				}
			})
		}
	}
}

// TestImageFastJPEG: "jpeg": "fast" decodes the same crops with the fast IDCT and chroma
// upsampling: close to the accurate pixels (PSNR >= 30 dB), not equal; any other value is a
// plan error naming the parameter, for every image decoder.
func TestImageFastJPEG(t *testing.T) {
	path := imageFile(t, 8, 128, 96, -1)
	l := openT(t, path, Options{})
	idx := []int64{0, 1, 2, 3, 4, 5, 6, 7}
	const plan = `{"seed":3,"fields":[{"field":"image","ops":[{"op":"CenterCrop","size":112,"ratio":1%s}]}]}`
	acc, err := runT(t, planT(t, l, fmt.Sprintf(plan, "")), idx, 0)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := runT(t, planT(t, l, fmt.Sprintf(plan, `,"jpeg":"fast"`)), idx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if imgdec.LibJPEG && bytes.Equal(acc[0].Data, fast[0].Data) { // image/jpeg has one way
		t.Error("jpeg fast gave the accurate pixels")
	}
	var se float64
	for i, a := range acc[0].Data {
		d := float64(a) - float64(fast[0].Data[i])
		se += d * d
	}
	if p := 10 * math.Log10(255*255/(se/float64(len(acc[0].Data)))); p < 30 {
		t.Errorf("jpeg fast: PSNR %.1f dB against accurate", p)
	}
	for _, op := range []string{`"RandomResizedCrop","size":64`, `"CenterCrop","size":64`, `"Resize","size":[64,64]`} {
		var spec PlanSpec
		jsonUnmarshal(fmt.Sprintf(`{"fields":[{"field":"image","ops":[{"op":%s,"jpeg":"turbo"}]}]}`, op), &spec)
		if _, err := l.NewPlan(spec); !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), `jpeg "turbo"`) {
			t.Errorf("%s with jpeg turbo: %v", op, err)
		}
	}
}
