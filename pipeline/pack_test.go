package pipeline_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mldf/convert/encoders/textfield"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
	"github.com/mldf/convert/sources/jsonl"
)

// The packing stage's tests (pipeline.Pack with a textfield.Packed field): the text fixtures
// of the tokenizer's tests.
const (
	packFixtures = "../testdata/text"
	packShared   = "../../shared/testdata/mini/text/jsonl"
)

// texts returns real documents: the GSM8K fixture, plus the Cyrillic fortunes when the shared
// test data is present.
func texts(t testing.TB) []string {
	t.Helper()
	var out []string
	read := func(path, key string) {
		src, err := jsonl.New([]string{path}, []jsonl.Column{{Key: key, Kind: sample.KindString, Required: true}}, jsonl.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := src.Run(context.Background(), func(s sample.Sample) error {
			if s.Err != nil {
				return s.Err
			}
			out = append(out, string(s.Value(key).Bytes))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	read(filepath.Join(packFixtures, "gsm8k_head8.jsonl"), "answer")
	read(filepath.Join(packFixtures, "humaneval_head3.jsonl.gz"), "prompt")
	if p := filepath.Join(packShared, "fortunes_ru_head200.jsonl"); exists(p) {
		read(p, "text")
	}
	return out
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func str(s string) sample.Value { return sample.Value{Kind: sample.KindString, Bytes: []byte(s)} }

// pack is the packing stage over src with a TEXT_PACKED field of options opt.
func pack(src sources.Source, column string, opt textfield.PackOptions) (sources.Source, error) {
	f, err := textfield.NewPacked("packed", opt)
	if err != nil {
		return nil, err
	}
	return pipeline.Pack(src, column, f), nil
}

// sliceSource emits fixed samples.
type sliceSource []sample.Sample

func (s sliceSource) Len() int64 { return int64(len(s)) }
func (s sliceSource) Run(ctx context.Context, emit func(sample.Sample) error) error {
	for i, x := range s {
		if err := ctx.Err(); err != nil {
			return err
		}
		x.Index = int64(i)
		if err := emit(x); err != nil {
			return err
		}
	}
	return nil
}

func docsSource(docs []string) sliceSource {
	var s sliceSource
	for i, d := range docs {
		o := fmt.Sprintf("doc:%d", i+1)
		s = append(s, sample.Sample{Key: o, Origin: o, InputBytes: int64(len(d)), Values: sample.ColumnsOf(map[string]sample.Value{"text": str(d)})})
	}
	return s
}

func run(t *testing.T, src interface {
	Run(context.Context, func(sample.Sample) error) error
}) []sample.Sample {
	t.Helper()
	var out []sample.Sample
	if err := src.Run(context.Background(), func(s sample.Sample) error { out = append(out, s); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// benchCorpus writes ~2 MB of GSM8K lines (the fixture repeated) and returns its path.
func benchCorpus(b *testing.B) string {
	seed, err := os.ReadFile(filepath.Join(packFixtures, "gsm8k_head8.jsonl"))
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

func TestPackRowsConcatenateToStream(t *testing.T) {
	docs := texts(t)
	tok, _ := textfield.NewTokenizer("cl100k_base")
	var stream []uint32
	for _, d := range docs {
		stream, _ = tok.Encode([]byte(d), stream)
		stream = append(stream, tok.EOT())
	}
	for _, L := range []int{1, 7, 128, 2048} {
		for _, pad := range []bool{false, true} {
			opt := textfield.PackOptions{SeqLen: L, PadLast: pad, PadID: 100276, Workers: 3}
			f, err := textfield.NewPacked("tokens", opt)
			if err != nil {
				t.Fatal(err)
			}
			rows := run(t, pipeline.Pack(docsSource(docs), "text", f))
			var got []uint32
			for i, r := range rows {
				if r.Err != nil || r.Index != int64(i) || r.Key != fmt.Sprintf("row:%d", i) {
					t.Fatalf("row %d: %+v", i, r)
				}
				v := r.Value("tokens")
				meta := make([]byte, mldf.TextMetaSize)
				p, err := f.Encode(v, meta)
				if err != nil {
					t.Fatal(err)
				}
				ids, _ := textfield.DecodeIDs(p, mldf.GetTextMeta(meta).Encoding)
				if len(ids) != L {
					t.Fatalf("row %d has %d ids", i, len(ids))
				}
				n := int(mldf.GetTextMeta(meta).NumTokens)
				if i < len(rows)-1 && n != min(L, textfield.MaxNumTokens) {
					t.Fatalf("row %d: num_tokens %d", i, n)
				}
				got = append(got, ids[:n]...)
				for _, id := range ids[n:] {
					if id != 100276 {
						t.Fatalf("padding id %d", id)
					}
				}
			}
			full := len(stream) / L * L
			want := stream[:full]
			if pad {
				want = stream
			}
			// slices.Equal: no rows give a nil slice, and an empty want (the fixture alone is
			// shorter than L=2048 on a plain clone, without ../shared) is not nil.
			if !slices.Equal(got, want) {
				t.Fatalf("L=%d pad=%v: %d rows give %d ids, want %d", L, pad, len(rows), len(got), len(want))
			}
			if !pad && len(rows) != len(stream)/L || pad && len(rows) != (len(stream)+L-1)/L {
				t.Fatalf("L=%d pad=%v: %d rows", L, pad, len(rows))
			}
		}
	}
}

func TestPackWorkersAndErrors(t *testing.T) {
	docs := texts(t)
	src := docsSource(docs)
	// Insert a broken line, a sample without the text and invalid UTF-8.
	src = append(src[:3:3], append(sliceSource{
		{Key: "bad:1", Origin: "bad:1", Err: errors.New("bad:1: not valid JSON")},
		{Key: "bad:2", Origin: "bad:2", Values: sample.ColumnsOf(map[string]sample.Value{})},
		{Key: "bad:3", Origin: "bad:3", Values: sample.ColumnsOf(map[string]sample.Value{"text": str("\xff")})},
	}, src[3:]...)...)
	var base []sample.Sample
	for _, w := range []int{1, 2, 5} {
		p, err := pack(src, "text", textfield.PackOptions{SeqLen: 64, Workers: w, Output: "ids", NoSeparator: w == 5})
		if err != nil {
			t.Fatal(err)
		}
		rows := run(t, p)
		var errs []string
		for _, r := range rows {
			if r.Err != nil {
				errs = append(errs, r.Key)
			}
		}
		if !reflect.DeepEqual(errs, []string{"bad:1", "bad:2", "bad:3"}) {
			t.Fatalf("workers %d: error samples %v", w, errs)
		}
		if !strings.Contains(rows[0].Origin, "doc:1") {
			t.Errorf("row 0 origin %q", rows[0].Origin)
		}
		if w == 5 {
			if reflect.DeepEqual(rows, base) {
				t.Fatal("NoSeparator changed nothing")
			}
			continue
		}
		if base == nil {
			base = rows
		} else if !reflect.DeepEqual(rows, base) {
			t.Fatalf("workers %d: rows differ from workers 1", w)
		}
	}
}

func TestPackStopsOnEmitErrorAndCancel(t *testing.T) {
	var docs []string
	for i := range 2000 {
		docs = append(docs, fmt.Sprintf("document number %d with some words in it", i))
	}
	p, _ := pack(docsSource(docs), "text", textfield.PackOptions{SeqLen: 8, Workers: 2})
	stop := errors.New("stop")
	n := 0
	if err := p.Run(context.Background(), func(sample.Sample) error {
		if n++; n == 10 {
			return stop
		}
		return nil
	}); !errors.Is(err, stop) {
		t.Fatalf("emit error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	if err := p.Run(ctx, func(sample.Sample) error {
		if n++; n == 10 {
			cancel()
		}
		return nil
	}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
}

func TestPackOverJSONLBrokenLines(t *testing.T) {
	src, err := jsonl.New([]string{filepath.Join(packFixtures, "broken.jsonl")}, []jsonl.Column{{Key: "text", Kind: sample.KindString, Required: true}}, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pack(src, "text", textfield.PackOptions{SeqLen: 3, PadLast: true, Tokenizer: "r50k_base"})
	if err != nil {
		t.Fatal(err)
	}
	rows := run(t, p)
	var good, bad int
	var ids []uint32
	for _, r := range rows {
		if r.Err != nil {
			var le *jsonl.LineError
			if !errors.As(r.Err, &le) {
				t.Fatalf("%s: error %v is not a jsonl.LineError", r.Key, r.Err)
			}
			bad++
			continue
		}
		good++
		got, _ := textfield.DecodeIDs(r.Value("tokens").Bytes, mldf.TextTokens32)
		ids = append(ids, got[:r.Value("tokens").Int]...)
	}
	tok, _ := textfield.NewTokenizer("r50k_base")
	var want []uint32
	for _, d := range []string{"ok line", "label is float", "last good"} {
		want, _ = tok.Encode([]byte(d), want)
		want = append(want, tok.EOT())
	}
	if !reflect.DeepEqual(ids, want) || bad != 9 {
		t.Fatalf("%d rows, %d errors; ids %v, want %v", good, bad, ids, want)
	}
}

// BenchmarkPack is JSONL → packed rows of 2048 cl100k ids of the "answer" column, MB/s of
// JSONL input: the GSM8K test split (1319 lines, 750 KB) when the shared test data is present,
// else the fixture repeated. Every pass starts with an empty segment cache.
func BenchmarkPack(b *testing.B) {
	p := filepath.Join(packShared, "real/gsm8k_test.jsonl")
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
			for b.Loop() {
				pk, err := pack(src, "answer", textfield.PackOptions{SeqLen: 2048, Workers: w})
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
