package export

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sample"
)

// benchFile writes n samples: a JPEG image (64x64), an INT label and a BYTES blob of blob bytes.
func benchFile(b *testing.B, n, blob int) *mldf.Reader {
	b.Helper()
	img := must[*imagefield.Field](b)(imagefield.New("image", imagefield.Options{Mode: imagefield.ModeJPEG}))
	lab := must[*encoders.Int](b)(encoders.NewInt("label"))
	bl := must[*encoders.Bytes](b)(encoders.NewBytes("blob"))
	src := pngBytes(b, 64, 64, 3)
	var samples []sample.Sample
	for i := range n {
		samples = append(samples, sample.Sample{Index: int64(i), Values: sample.ColumnsOf(map[string]sample.Value{
			"image": {Kind: sample.KindBytes, Name: "x.png", Bytes: src},
			"label": {Kind: sample.KindInt, Int: int64(i % 100)},
			"blob":  {Kind: sample.KindBytes, Bytes: bytes.Repeat([]byte{byte(i)}, blob)},
		})})
	}
	out := filepath.Join(b.TempDir(), "bench.mldf")
	if _, err := pipeline.Run(context.Background(), pipeline.Config{Source: sliceSource(samples), Output: out,
		Fields: []pipeline.Binding{{Field: img, Column: "image"}, {Field: lab, Column: "label"}, {Field: bl, Column: "blob"}}}); err != nil {
		b.Fatal(err)
	}
	r := must[*mldf.Reader](b)(mldf.Open(out))
	b.Cleanup(func() { r.Close() })
	return r
}

func BenchmarkWebDataset(b *testing.B) {
	r := benchFile(b, 2000, 32<<10)
	b.SetBytes(r.Size())
	for i := 0; b.Loop(); i++ {
		if _, err := WebDataset(context.Background(), r, filepath.Join(b.TempDir(), fmt.Sprint(i)), WebDatasetOptions{ShardSize: 16 << 20}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.NumSamples()*b.N)/b.Elapsed().Seconds(), "samples/s")
}

func BenchmarkFolder(b *testing.B) {
	r := benchFile(b, 2000, 0)
	for i := 0; b.Loop(); i++ {
		if _, err := Folder(context.Background(), r, filepath.Join(b.TempDir(), fmt.Sprint(i)), FolderOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.NumSamples()*b.N)/b.Elapsed().Seconds(), "samples/s")
}
