package loader

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/format/beton"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/s3test"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sample"
)

// sliceSource yields fixed samples to the pipeline.
type sliceSource []sample.Sample

func (s sliceSource) Len() int64 { return int64(len(s)) }

func (s sliceSource) Run(ctx context.Context, emit func(sample.Sample) error) error {
	for _, x := range s {
		x.Values = append([]sample.Column(nil), x.Values...)
		if err := emit(x); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// convertBoth converts the same n photo-like JPEGs (sizes vary) and scalars with the
// project's pipeline into an .mldf and a .beton, and returns their paths.
func convertBoth(t testing.TB, n int) (mldfPath, betonPath string) {
	t.Helper()
	return convertBothSized(t, n, 60, 44)
}

// convertBothSized is convertBoth with images of about w×h pixels.
func convertBothSized(t testing.TB, n, w, h int) (mldfPath, betonPath string) {
	t.Helper()
	var src sliceSource
	for i := range n {
		var b bytes.Buffer
		if err := jpeg.Encode(&b, testPhoto(w+i%17, h+i%11, uint32(i)), &jpeg.Options{Quality: 90}); err != nil {
			t.Fatal(err)
		}
		arr := make([]byte, 12)
		for k := range 3 {
			binary.LittleEndian.PutUint32(arr[4*k:], math.Float32bits(float32(i)+float32(k)/4))
		}
		v := map[string]sample.Value{
			"image": {Kind: sample.KindBytes, Bytes: b.Bytes(), Name: fmt.Sprintf("img%d.jpg", i)},
			"label": {Kind: sample.KindInt, Int: int64(i % 10)},
			"score": {Kind: sample.KindFloat, Float: float64(i) / 8},
			"meta":  {Kind: sample.KindJSON, Bytes: []byte(fmt.Sprintf(`{"i":%d}`, i))},
			"blob":  {Kind: sample.KindBytes, Bytes: bytes.Repeat([]byte{byte(i)}, i%9+1)},
			"arr":   {Kind: sample.KindBytes, Bytes: npyF4(arr, 3)},
		}
		src = append(src, sample.Sample{Origin: fmt.Sprintf("s%d", i), Key: fmt.Sprint(i), Values: sample.ColumnsOf(v)})
	}
	dir := t.TempDir()
	run := func(out string, ctr mldf.ContainerFunc) {
		cfg := pipeline.Config{Source: src, Fields: bindings(t), Output: out, PageSize: 2 << 20, Workers: 2, ChunkSize: 8}
		if ctr != nil {
			cfg.Container = ctr
		}
		if _, err := pipeline.Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	mldfPath, betonPath = filepath.Join(dir, "d.mldf"), filepath.Join(dir, "d.beton")
	run(mldfPath, nil)
	run(betonPath, beton.NewContainer)
	return mldfPath, betonPath
}

// npyF4 wraps n little-endian float32s in a .npy header.
func npyF4(data []byte, n int) []byte {
	hdr := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }", n)
	for (10+len(hdr)+1)%64 != 0 {
		hdr += " "
	}
	hdr += "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(hdr)))
	return append(append(b, hdr...), data...)
}

func bindings(t testing.TB) []pipeline.Binding {
	t.Helper()
	img, err := imagefield.New("image", imagefield.Options{Mode: imagefield.ModeJPEG, JPEGQuality: 90})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := imagefield.New("raw", imagefield.Options{Mode: imagefield.ModeRaw, MaxResolution: 32})
	if err != nil {
		t.Fatal(err)
	}
	label, _ := encoders.NewInt("label")
	score, _ := encoders.NewFloat("score")
	meta, _ := encoders.NewJSON("meta")
	blob, _ := encoders.NewBytes("blob")
	arr, err := encoders.NewNDArray("arr", "<f4", []uint64{3})
	if err != nil {
		t.Fatal(err)
	}
	return []pipeline.Binding{{Field: img, Column: "image"}, {Field: raw, Column: "image"}, {Field: label, Column: "label"},
		{Field: score, Column: "score"}, {Field: meta, Column: "meta"}, {Field: blob, Column: "blob"}, {Field: arr, Column: "arr"}}
}

// betonPlans are the plans both files must decode alike: every image decoder and transform
// on a JPEG and a raw image field, and every op of the scalar and payload fields.
var betonPlans = []string{
	`{"seed":3,"fields":[{"field":"image","ops":[{"op":"RandomResizedCrop","size":[40,48]},{"op":"RandomHorizontalFlip"},
		{"op":"Normalize","mean":[0.485,0.456,0.406],"std":[0.229,0.224,0.225],"dtype":"float16"},{"op":"ToCHW"}]},
		{"field":"label","ops":[{"op":"Int"}]}]}`,
	`{"seed":4,"fields":[{"field":"image","ops":[{"op":"CenterCrop","size":32}]},{"field":"raw","ops":[{"op":"Resize","size":[20,24]},{"op":"Flip","p":0.5}]},
		{"field":"score","ops":[{"op":"Float"}]},{"field":"meta","ops":[{"op":"JSON"}]},{"field":"blob","ops":[{"op":"Bytes"}]},
		{"field":"arr","ops":[{"op":"NDArray"}]}]}`,
	`{"seed":5,"fields":[{"field":"raw","ops":[{"op":"RandomResizedCrop","size":16},{"op":"Normalize","mean":[120],"std":[60]},{"op":"ToCHW"}]},
		{"field":"image","ops":[{"op":"Bytes"}]}]}`,
}

// sameBatches runs every plan over all samples of a and b, in a random order of batches of
// 16, and fails unless each batch is byte for byte the same.
func sameBatches(t *testing.T, a, b *Loader) {
	t.Helper()
	for k, js := range betonPlans {
		pa, pb := planT(t, a, js), planT(t, b, js)
		if fmt.Sprint(pa.Outputs()) != fmt.Sprint(pb.Outputs()) {
			t.Fatalf("plan %d: outputs %v and %v", k, pa.Outputs(), pb.Outputs())
		}
		o, err := a.Order(OrderSpec{Mode: OrderRandom, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		idx := make([]int64, o.Len())
		o.Fill(0, idx)
		for lo := 0; lo < len(idx); lo += 16 {
			batch := idx[lo:min(lo+16, len(idx))]
			ba, err := runT(t, pa, batch, 2)
			if err != nil {
				t.Fatalf("plan %d, %s: %v", k, a.Describe().Path, err)
			}
			bb, err := runT(t, pb, batch, 2)
			if err != nil {
				t.Fatalf("plan %d, %s: %v", k, b.Describe().Path, err)
			}
			for j := range ba {
				if !bytes.Equal(ba[j].Data, bb[j].Data) || fmt.Sprint(ba[j].Offsets) != fmt.Sprint(bb[j].Offsets) {
					t.Fatalf("plan %d, batch at %d: output %s differs between the .mldf and the .beton", k, lo, pa.Outputs()[j].Name)
				}
			}
		}
	}
}

// The loader decodes a .beton exactly as the .mldf of the same images, for every op.
func TestBetonMatchesMLDF(t *testing.T) {
	mp, bp := convertBoth(t, 50)
	m := openT(t, mp, Options{Threads: 3})
	b := openT(t, bp, Options{Threads: 2})
	d := b.Describe()
	if d.Format != "FFCV .beton" || d.NumSamples != 50 || d.Checksummed || len(d.Fields) != 7 {
		t.Fatalf("describe: %+v", d)
	}
	for _, f := range d.Fields {
		if f.Name == "image" && strings.Join(f.Ops, ",") != "RandomResizedCrop,CenterCrop,Resize,Bytes" ||
			f.Name == "arr" && (f.DType != "<f4" || fmt.Sprint(f.Shape) != "[3]") {
			t.Fatalf("field %+v", f)
		}
	}
	if m.Describe().Format != "MLDF" {
		t.Fatalf("%+v", m.Describe())
	}
	if b.PageSamples() != 50 {
		t.Fatalf("page samples %d: one 2 MiB page holds the 50 samples", b.PageSamples())
	}
	sameBatches(t, m, b)
}

// verify_checksums on a .beton is refused, saying the format has none; a plan asking a .beton
// field for an op it does not decode names the op and the field.
func TestBetonRefusals(t *testing.T) {
	_, bp := convertBoth(t, 4)
	_, err := Open(context.Background(), bp, Options{VerifyChecksums: true})
	if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "FFCV .beton file carries no checksums") || !strings.Contains(err.Error(), bp) {
		t.Fatalf("verify on a .beton: %v", err)
	}
	l := openT(t, bp, Options{})
	if _, err := l.NewPlan(PlanSpec{Fields: []FieldSpec{{Field: "label", Ops: []json.RawMessage{json.RawMessage(`{"op":"Text"}`)}}}}); !errors.Is(err, ErrPlan) {
		t.Fatalf("Text on an Int field: %v", err)
	}
	// a .beton whose name does not say so is read as MLDF, whose reader names the problem
	b, _ := os.ReadFile(bp)
	other := filepath.Join(t.TempDir(), "d.bin")
	if err := os.WriteFile(other, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), other, Options{}); err == nil || !strings.Contains(err.Error(), "d.bin") {
		t.Fatalf("unnamed .beton: %v", err)
	}
}

// A damaged .beton row is an error naming the file and the sample, never a panic.
func TestBetonCorruptRow(t *testing.T) {
	_, bp := convertBoth(t, 6)
	b, err := os.ReadFile(bp)
	if err != nil {
		t.Fatal(err)
	}
	// point sample 4's blob at an address no allocation holds
	br, err := beton.NewReader(bytes.NewReader(b), int64(len(b)), bp)
	if err != nil {
		t.Fatal(err)
	}
	k := -1
	for i, f := range br.Fields() {
		if f.Name == "blob" {
			k = i
		}
	}
	off := beton.MetadataOffset(len(br.Fields())) + 4*int64(br.Layout().Size) + int64(br.Layout().Offsets[k])
	binary.LittleEndian.PutUint64(b[off:], 12345)
	bad := filepath.Join(t.TempDir(), "bad.beton")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	lb := openT(t, bad, Options{})
	_, err = runT(t, planT(t, lb, betonPlans[1]), []int64{0, 4}, 0)
	if !errors.Is(err, beton.ErrCorrupt) || !strings.Contains(err.Error(), "bad.beton: sample 4") {
		t.Fatalf("corrupt row: %v", err)
	}
}

// A .beton in a bucket decodes as the local one.
func TestBetonBucket(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an S3 server")
	}
	mp, bp := convertBoth(t, 30)
	srv := s3test.Start(t)
	srv.MakeBucket(t, "bkt")
	s3test.Env(t, srv.Endpoint, s3test.SecretKey)
	b, err := os.ReadFile(bp)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(srv.Dir, "bkt", "train.beton"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	remote := openT(t, "s3://bkt/train.beton", Options{Threads: 3, CacheBytes: 2 << 20})
	if remote.src.cache == nil || remote.Describe().Format != "FFCV .beton" {
		t.Fatalf("%+v", remote.Describe())
	}
	sameBatches(t, openT(t, mp, Options{}), remote)
	if _, misses := remote.src.cache.stats(); misses == 0 {
		t.Fatal("no reads through the cache")
	}
}

// BenchmarkRunFormats decodes batches of 128 random-resized crops to 160 (and flips) of the
// same photo-like ~256×192 JPEGs from the .mldf and from the .beton, reporting images/s and
// CPU per image of each.
func BenchmarkRunFormats(b *testing.B) {
	mp, bp := convertBothSized(b, 256, 256, 192)
	for _, c := range []struct{ name, path string }{{"mldf", mp}, {"beton", bp}} {
		b.Run(c.name, func(b *testing.B) {
			l, err := Open(context.Background(), c.path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			var spec PlanSpec
			jsonUnmarshal(`{"fields":[{"field":"image","ops":[{"op":"RandomResizedCrop","size":160},{"op":"RandomHorizontalFlip"}]},{"field":"label","ops":[{"op":"Int"}]}]}`, &spec)
			p, err := l.NewPlan(spec)
			if err != nil {
				b.Fatal(err)
			}
			o, _ := l.Order(OrderSpec{Mode: OrderRandom})
			idx := make([]int64, 128)
			bufs := []Buffer{{Data: make([]byte, 128*160*160*3)}, {Data: make([]byte, 128*8)}}
			b.ResetTimer()
			cpu0 := cpuTime()
			for it := 0; it < b.N; it++ {
				o.Fill(it%2*128, idx)
				if err := p.Run(context.Background(), idx, int64(it), bufs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*128)/b.Elapsed().Seconds(), "images/s")
			if cpu := cpuTime() - cpu0; cpu > 0 {
				b.ReportMetric(cpu.Seconds()*1e6/float64(b.N*128), "cpu-us/image")
			}
		})
	}
}
