package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/textfield"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources/jsonl"
)

// BenchmarkJSONLTiny converts 1 M tiny JSONL lines ({"id": N, "word": "wN"}, an INT and a
// TEXT_RAW field) through the whole pipeline and reports the heap allocations per sample and
// per chunk of DefaultChunkSize samples (the adaptive default makes chunks of up to 1024 such
// samples): the path must allocate per chunk, not per sample.
func BenchmarkJSONLTiny(b *testing.B) {
	const n = 1_000_000
	var buf bytes.Buffer
	for i := range n {
		fmt.Fprintf(&buf, "{\"id\": %d, \"word\": \"w%d\"}\n", i, i%1000)
	}
	dir := b.TempDir()
	in := filepath.Join(dir, "tiny.jsonl")
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	src, err := jsonl.New([]string{in}, []jsonl.Column{{Key: "id", Kind: sample.KindInt, Required: true},
		{Key: "word", Kind: sample.KindString, Required: true}}, jsonl.Options{})
	if err != nil {
		b.Fatal(err)
	}
	id, _ := encoders.NewInt("id")
	word, err := textfield.NewRaw("word")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for b.Loop() {
		out := filepath.Join(dir, "out.mldf")
		rep, err := Run(context.Background(), Config{Source: src, Fields: []Binding{{Field: id, Column: "id"}, {Field: word, Column: "word"}},
			Output: out, Workers: 2, Checksums: true})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Samples != n {
			b.Fatalf("%d samples", rep.Samples)
		}
		os.Remove(out)
	}
	runtime.ReadMemStats(&ms1)
	perSample := float64(ms1.Mallocs-ms0.Mallocs) / float64(b.N) / n
	b.ReportMetric(perSample, "allocs/sample")
	b.ReportMetric(perSample*DefaultChunkSize, "allocs/chunk")
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}
