package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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

// fortuneFile writes a ~64 MB JSONL file of fortune-sized lines (about 270 bytes, the shape of
// bench/genjsonl -words 14: {"id", "text", "meta": {"lang", "score"}}), once per test binary.
var fortuneOnce sync.Once
var fortunePath string

func fortuneFile(b *testing.B) string {
	fortuneOnce.Do(func() {
		r := rand.New(rand.NewPCG(3, 4))
		words := strings.Fields(`the of and to a in is that for it as was with be by on not he I this are or his
			from at which but have an they you were her she there been one all we their has would when if so no
			will more can its who said what up out about into than them some other time could only new these two
			model token data forêt Straße café дом naïve 42 1999 "quoted" O'Brien`)
		var buf bytes.Buffer
		var t strings.Builder
		for id := 0; buf.Len() < 64<<20; id++ {
			t.Reset()
			for k := range 10 + r.IntN(40) {
				if k > 0 {
					t.WriteByte(' ')
				}
				t.WriteString(words[r.IntN(len(words))])
			}
			t.WriteByte('.')
			text, _ := json.Marshal(t.String())
			fmt.Fprintf(&buf, `{"id": %d, "text": %s, "meta": {"lang": "en", "score": 0.%04d}}`+"\n", id, text, r.IntN(10000))
		}
		dir, err := os.MkdirTemp("", "jsonl-bench")
		if err != nil {
			panic(err)
		}
		fortunePath = filepath.Join(dir, "fortune.jsonl")
		if err := os.WriteFile(fortunePath, buf.Bytes(), 0o644); err != nil {
			panic(err)
		}
	})
	return fortunePath
}

// BenchmarkSourceFortune measures the source on fortune-sized lines (the JSONL →
// TEXT_RAW shape of bench/text.sh): the "text" column of each line, with 1 and 2 parse workers.
func BenchmarkSourceFortune(b *testing.B) {
	p := fortuneFile(b)
	cols := []Column{{Key: "text", Kind: sample.KindString, Required: true}}
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			src := mustNew(b, []string{p}, cols, Options{Workers: w})
			b.SetBytes(size(b, p))
			b.ReportAllocs()
			defer reportCPU(b, size(b, p), cpuTime())
			for b.Loop() {
				if err := src.Run(context.Background(), func(s sample.Sample) error { return s.Err }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExtractFortune is the line → columns mapping alone on fortune-sized lines, on
// one goroutine.
func BenchmarkExtractFortune(b *testing.B) {
	data, err := os.ReadFile(fortuneFile(b))
	if err != nil {
		b.Fatal(err)
	}
	data = data[:8<<20]
	data = data[:bytes.LastIndexByte(data, '\n')]
	lines := bytes.Split(data, []byte("\n"))
	x, _ := newExtractor([]Column{{Key: "text", Kind: sample.KindString, Required: true}})
	sc := &scanner{}
	b.SetBytes(int64(len(data)))
	defer reportCPU(b, int64(len(data)), cpuTime())
	var vals []sample.Column
	for b.Loop() {
		var arena arena
		for _, l := range lines {
			if vals, _, err = x.extract(sc, l, &arena, vals[:0]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// realTextParts are the first 16 MiB of the parts of bench/realtext's corpus (Debian's
// fortunes and man pages as {"id", "lang", "source", "text"} lines), read from the directory
// $JSONL_REALTEXT or else bench/data/realtext when it was built (bench/text.sh builds it);
// without it, a generated stand-in of Russian fortunes.
func realTextParts(b *testing.B) map[string][]byte {
	dir := os.Getenv("JSONL_REALTEXT")
	if dir == "" {
		dir = filepath.Join("..", "..", "bench", "data", "realtext")
	}
	parts := map[string][]byte{}
	for _, p := range []string{"fortunes-en", "fortunes-ru", "manpages"} {
		data, err := os.ReadFile(filepath.Join(dir, p+".jsonl"))
		if err != nil {
			continue
		}
		data = data[:min(len(data), 16<<20)]
		parts[p] = data[:bytes.LastIndexByte(data, '\n')+1]
	}
	if len(parts) == 0 {
		r := rand.New(rand.NewPCG(5, 6))
		words := strings.Fields(`Аппетит приходит и уходит а кушать хочется всегда Беззубым остаётся в утешение
			око за око Безопасным бывает секс но не любовь -- Евгений Кащеев это что как так`)
		var buf bytes.Buffer
		var t strings.Builder
		for id := 0; buf.Len() < 16<<20; id++ {
			t.Reset()
			for k := range 5 + r.IntN(20) {
				if k > 0 {
					t.WriteByte(" \n"[min(1, r.IntN(8))])
				}
				t.WriteString(words[r.IntN(len(words))])
			}
			t.WriteString(".\n\t\t-- Автор")
			text, _ := json.Marshal(t.String())
			fmt.Fprintf(&buf, `{"id":"fortunes/ru/x:%d","lang":"ru","source":"fortunes/ru/x","text":%s}`+"\n", id, text)
		}
		parts["generated-ru"] = buf.Bytes()
	}
	return parts
}

// BenchmarkExtractRealText is the line → "text" column mapping alone on real text, per part,
// on one goroutine.
func BenchmarkExtractRealText(b *testing.B) {
	parts := realTextParts(b)
	x, _ := newExtractor([]Column{{Key: "text", Kind: sample.KindString, Required: true}})
	for _, name := range slices.Sorted(maps.Keys(parts)) {
		data := parts[name]
		lines := bytes.Split(data[:len(data)-1], []byte("\n"))
		b.Run(name, func(b *testing.B) {
			sc := &scanner{}
			b.SetBytes(int64(len(data)))
			defer reportCPU(b, int64(len(data)), cpuTime())
			var vals []sample.Column
			var err error
			var blocks [][]byte // reused, as the pipeline reuses a chunk's memory
			for b.Loop() {
				arena := arena{reuse: &blocks}
				for _, l := range lines {
					if vals, _, err = x.extract(sc, l, &arena, vals[:0]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
