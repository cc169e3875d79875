package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

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

// BenchmarkJSONLFortune converts 200 000 fortune-sized JSONL lines (about 270 bytes:
// {"id", "text", "meta": {"lang", "score"}}, the shape of bench/genjsonl -words 14) to one
// TEXT_RAW field, through the whole pipeline with 1 and 2 workers. Besides MB/s it reports MB per CPU-second (user+sys of the process, steadier than wall time on a
// shared machine) and the heap bytes allocated per sample.
func BenchmarkJSONLFortune(b *testing.B) {
	const n = 200_000
	words := strings.Fields(`the of and to a in is that for it as was with be by on not he I this are or his
		from at which but have an they you were her she there been one all we their has would when if so no
		model token data forêt Straße café дом naïve 42 1999 "quoted" O'Brien`)
	r := rand.New(rand.NewPCG(1, 2))
	var buf bytes.Buffer
	var t strings.Builder
	for i := range n {
		t.Reset()
		for k := range 30 + r.IntN(30) {
			if k > 0 {
				t.WriteByte(' ')
			}
			t.WriteString(words[r.IntN(len(words))])
		}
		text, _ := json.Marshal(t.String())
		fmt.Fprintf(&buf, `{"id":%d,"text":%s,"meta":{"lang":"en","score":0.%04d}}`+"\n", i, text, r.IntN(10000))
	}
	dir := b.TempDir()
	in := filepath.Join(dir, "fortune.jsonl")
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	src, err := jsonl.New([]string{in}, []jsonl.Column{{Key: "text", Kind: sample.KindString, Required: true}}, jsonl.Options{})
	if err != nil {
		b.Fatal(err)
	}
	text, err := textfield.NewRaw("text")
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			b.SetBytes(int64(buf.Len()))
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			cpu0 := cpuSeconds()
			for b.Loop() {
				out := filepath.Join(dir, "out.mldf")
				rep, err := Run(context.Background(), Config{Source: src, Fields: []Binding{{Field: text, Column: "text"}},
					Output: out, Workers: w, Checksums: true})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Samples != n {
					b.Fatalf("%d samples", rep.Samples)
				}
				os.Remove(out)
			}
			runtime.ReadMemStats(&ms1)
			if cpu := cpuSeconds() - cpu0; cpu > 0 {
				b.ReportMetric(float64(buf.Len())*float64(b.N)/1e6/cpu, "MB/cpu-s")
			}
			b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(b.N)/n, "heapB/sample")
		})
	}
}

// cpuSeconds returns the process's user+system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
