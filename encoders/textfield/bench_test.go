package textfield

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources/jsonl"
)

// benchCorpus writes ~2 MB of GSM8K lines (the fixture repeated) and returns its path.
func benchCorpus(b *testing.B) string {
	seed, err := os.ReadFile(filepath.Join(fixtures, "gsm8k_head8.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	for buf.Len() < 2<<20 {
		buf.Write(seed)
	}
	p := filepath.Join(b.TempDir(), "corpus.jsonl")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkTokenize is one goroutine tokenizing text (MB/s of UTF-8 text).
func BenchmarkTokenize(b *testing.B) {
	docs := texts(b)
	f, _ := NewTokenized("t", TokenizedOptions{})
	n := 0
	for _, d := range docs {
		n += len(d)
	}
	b.SetBytes(int64(n))
	meta := make([]byte, mldf.TextMetaSize)
	defer reportCPU(b, int64(n), cpuTime())
	for b.Loop() {
		for _, d := range docs {
			if _, err := f.Encode(str(d), meta); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkPack is JSONL → packed rows of 2048 cl100k ids of the "answer" column, MB/s of
// JSONL input: the GSM8K test split (1319 lines, 750 KB) when the shared test data is present,
// else the fixture repeated. Every pass starts with an empty segment cache.
func BenchmarkPack(b *testing.B) {
	p := filepath.Join(shared, "real/gsm8k_test.jsonl")
	if !exists(p) {
		p = benchCorpus(b)
	}
	st, _ := os.Stat(p)
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			src, err := jsonl.New([]string{p}, []jsonl.Column{{Key: "question", Kind: sample.KindString, Required: true}, {Key: "answer", Kind: sample.KindString, Required: true}}, jsonl.Options{Workers: w})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(st.Size())
			defer reportCPU(b, st.Size(), cpuTime())
			for b.Loop() {
				pk, err := Pack(src, "answer", PackOptions{SeqLen: 2048, Workers: w})
				if err != nil {
					b.Fatal(err)
				}
				if err := pk.Run(context.Background(), func(s sample.Sample) error { return s.Err }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTokenizeWhole is tiktoken-go on each whole text, the speed without Encode's
// segment cache.
func BenchmarkTokenizeWhole(b *testing.B) {
	docs := texts(b)
	tk, _ := NewTokenizer("cl100k_base")
	n := 0
	for _, d := range docs {
		n += len(d)
	}
	b.SetBytes(int64(n))
	defer reportCPU(b, int64(n), cpuTime())
	for b.Loop() {
		for _, d := range docs {
			if _, err := tk.EncodeWhole([]byte(d)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds MB per CPU-second, which the load of a shared machine does not change.
func reportCPU(b *testing.B, bytes int64, start time.Duration) {
	if cpu := (cpuTime() - start).Seconds(); cpu > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/1e6/cpu, "MB/cpu-s")
	}
}

// zipfCorpus returns about mb MB of English-like documents: words drawn from a Zipf law over
// a vocabulary of 30 000 made-up words, with capitals, commas, full stops, numbers and a few
// non-ASCII words, as bench/genjsonl writes them (the shape of a web-text corpus: a few
// thousand words make most of the text, a long tail of rare ones).
func zipfCorpus(mb int) [][]byte {
	r := rand.New(rand.NewPCG(5, 6))
	onsets := []string{"b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "v", "w", "st", "tr", "pl", "ch", "th", "sh", ""}
	nuclei := []string{"a", "e", "i", "o", "u", "ea", "ou", "io", "é", "ö"}
	codas := []string{"", "n", "r", "s", "t", "l", "nd", "st", "ng", "ck", "tion", "ment", "ly"}
	vocab := strings.Fields("the of and to a in is that for it as was with be by on not he I this are or his from at")
	for len(vocab) < 30000 {
		var w strings.Builder
		for range 1 + r.IntN(3) {
			w.WriteString(onsets[r.IntN(len(onsets))] + nuclei[r.IntN(len(nuclei))] + codas[r.IntN(len(codas))])
		}
		vocab = append(vocab, w.String())
	}
	z := rand.NewZipf(r, 1.05, 2.7, uint64(len(vocab)-1))
	var docs [][]byte
	for n := 0; n < mb<<20; {
		var d strings.Builder
		for range 10 + r.IntN(60) {
			w := vocab[z.Uint64()]
			switch p := r.IntN(100); {
			case p < 3:
				w = strconv.Itoa(r.IntN(10000))
			case p < 8 && w[0] >= 'a' && w[0] <= 'z':
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			if d.Len() > 0 {
				d.WriteByte(' ')
			}
			d.WriteString(w)
			switch p := r.IntN(100); {
			case p < 6:
				d.WriteByte(',')
			case p < 12:
				d.WriteByte('.')
			}
		}
		docs = append(docs, []byte(d.String()))
		n += d.Len()
	}
	return docs
}

// BenchmarkTokenizeZipf is one goroutine tokenizing 4 MB of Zipf-distributed text with
// cl100k_base (MB/s of UTF-8 text); the tokenizer's caches stay warm across iterations, as
// they are over most of a long run.
func BenchmarkTokenizeZipf(b *testing.B) {
	docs := zipfCorpus(4)
	tok, err := NewTokenizer("cl100k_base")
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, d := range docs {
		n += len(d)
	}
	b.SetBytes(int64(n))
	defer reportCPU(b, int64(n), cpuTime())
	var ids []uint32
	for b.Loop() {
		for _, d := range docs {
			if ids, err = tok.Encode(d, ids[:0]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
