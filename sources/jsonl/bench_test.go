package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mldf/convert/sample"
)

var benchOnce sync.Once
var benchPath string

// benchFile writes a ~64 MB JSONL file once per test binary: GSM8K lines repeated when the
// shared test data is present, generated lines otherwise.
func benchFile(b *testing.B) string {
	benchOnce.Do(func() {
		seed, err := os.ReadFile(filepath.Join(shared, "real/gsm8k_test.jsonl"))
		if err != nil {
			seed = genCorpus(2000, 9)
		}
		dir, err := os.MkdirTemp("", "jsonl-bench")
		if err != nil {
			panic(err)
		}
		benchPath = filepath.Join(dir, "bench.jsonl")
		var buf bytes.Buffer
		for buf.Len() < 64<<20 {
			buf.Write(seed)
		}
		if err := os.WriteFile(benchPath, buf.Bytes(), 0o644); err != nil {
			panic(err)
		}
	})
	return benchPath
}

func size(b *testing.B, p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	return st.Size()
}

// BenchmarkReadFile is the baseline: reading the file in 4 MiB blocks, nothing else.
func BenchmarkReadFile(b *testing.B) {
	p := benchFile(b)
	b.SetBytes(size(b, p))
	buf := make([]byte, 4<<20)
	defer reportCPU(b, size(b, p), cpuTime())
	for b.Loop() {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := f.Read(buf); err == io.EOF {
				break
			}
		}
		f.Close()
	}
}

// BenchmarkSource measures JSONL → one string column per line, the whole Source (read,
// split, parse, ordered emission).
func BenchmarkSource(b *testing.B) {
	p := benchFile(b)
	cols := []Column{{Key: "question", Kind: sample.KindString, Required: true}}
	if _, err := os.Stat(filepath.Join(shared, "real/gsm8k_test.jsonl")); err != nil {
		cols = []Column{{Key: "text", Kind: sample.KindString}}
	}
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			src := mustNew(b, []string{p}, cols, Options{Workers: w})
			b.SetBytes(size(b, p))
			defer reportCPU(b, size(b, p), cpuTime())
			for b.Loop() {
				n := 0
				if err := src.Run(context.Background(), func(s sample.Sample) error {
					if s.Err != nil {
						return s.Err
					}
					n++
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEncodingJSON is the comparison: encoding/json decoding each line into a struct.
func BenchmarkEncodingJSON(b *testing.B) {
	p := benchFile(b)
	data, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	defer reportCPU(b, int64(len(data)), cpuTime())
	for b.Loop() {
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			var v struct{ Question string }
			_ = json.Unmarshal(l, &v)
		}
	}
}

// BenchmarkExtract measures the line → columns mapping alone, on one goroutine.
func BenchmarkExtract(b *testing.B) {
	p := benchFile(b)
	data, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	data = data[:8<<20]
	data = data[:bytes.LastIndexByte(data, '\n')]
	lines := bytes.Split(data, []byte("\n"))
	cols := []Column{{Key: "question", Kind: sample.KindString, Required: true}}
	x, _ := newExtractor(cols)
	sc := &scanner{}
	b.SetBytes(int64(len(data)))
	defer reportCPU(b, int64(len(data)), cpuTime())
	for b.Loop() {
		var arena arena
		for _, l := range lines {
			if _, _, err := x.extract(sc, l, &arena, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkValidate is the scanner alone, no values.
func BenchmarkValidate(b *testing.B) {
	p := benchFile(b)
	data, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	data = data[:8<<20]
	data = data[:bytes.LastIndexByte(data, '\n')]
	lines := bytes.Split(data, []byte("\n"))
	x, _ := newExtractor([]Column{{Key: "question", Kind: sample.KindString, Required: true}})
	sc := &scanner{}
	b.SetBytes(int64(len(data)))
	defer reportCPU(b, int64(len(data)), cpuTime())
	for b.Loop() {
		for _, l := range lines {
			if err := sc.scan(x.root, l, 1); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// cpuTime returns the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the MB processed per CPU-second: on a shared machine wall-clock MB/s
// depends on the other load, this does not.
func reportCPU(b *testing.B, bytes int64, start time.Duration) {
	cpu := (cpuTime() - start).Seconds()
	if cpu > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/1e6/cpu, "MB/cpu-s")
	}
}

// tinyLines is the scale benchmark's shape: n short lines of an int and a one-word string.
func tinyLines(n int) []byte {
	var buf bytes.Buffer
	for i := range n {
		fmt.Fprintf(&buf, "{\"id\": %d, \"word\": \"w%d\"}\n", i, i%1000)
	}
	return buf.Bytes()
}

// BenchmarkSourceTiny measures the source on 1 M tiny lines (an int and a short string) and
// reports the allocations per line: the parse must allocate per chunk, not per line.
func BenchmarkSourceTiny(b *testing.B) {
	const n = 1_000_000
	p := filepath.Join(b.TempDir(), "tiny.jsonl")
	if err := os.WriteFile(p, tinyLines(n), 0o644); err != nil {
		b.Fatal(err)
	}
	cols := []Column{{Key: "id", Kind: sample.KindInt, Required: true}, {Key: "word", Kind: sample.KindString, Required: true}}
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			src := mustNew(b, []string{p}, cols, Options{Workers: w})
			b.SetBytes(size(b, p))
			b.ReportAllocs()
			for b.Loop() {
				if err := src.Run(context.Background(), func(s sample.Sample) error { return s.Err }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
