package textfield

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tiktoken-go/tokenizer"
	"go.uber.org/goleak"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources/jsonl"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const fixtures = "../../testdata/text"
const shared = "../../../shared/testdata/mini/text/jsonl"

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
	read(filepath.Join(fixtures, "gsm8k_head8.jsonl"), "answer")
	read(filepath.Join(fixtures, "humaneval_head3.jsonl.gz"), "prompt")
	if p := filepath.Join(shared, "fortunes_ru_head200.jsonl"); exists(p) {
		read(p, "text")
	}
	return out
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func str(s string) sample.Value { return sample.Value{Kind: sample.KindString, Bytes: []byte(s)} }

func TestRaw(t *testing.T) {
	f, err := NewRaw("text")
	if err != nil {
		t.Fatal(err)
	}
	if f.Type() != mldf.TypeTextRaw || f.Arguments()[0] != ArgsVersion {
		t.Fatal("type or arguments")
	}
	in := []byte("Привет, мир — hello\n")
	meta := make([]byte, mldf.TextMetaSize)
	p, err := f.Encode(sample.Value{Kind: sample.KindString, Bytes: in}, meta)
	if err != nil || !bytes.Equal(p, in) {
		t.Fatalf("payload %q err %v", p, err)
	}
	if m := mldf.GetTextMeta(meta); m.NumTokens != 0 || m.Encoding != mldf.TextUTF8 {
		t.Fatalf("meta %+v", m)
	}
	if p, err := f.Encode(str(""), meta); err != nil || p != nil {
		t.Fatalf("empty: %v %v", p, err)
	}
	for _, bad := range []sample.Value{
		{Kind: sample.KindString, Bytes: []byte("ok \xff\xfe")},
		{Kind: sample.KindString, Bytes: []byte("\xed\xa0\x80")}, // surrogate encoded
		{Kind: sample.KindInt, Int: 3},
		{Kind: sample.KindFile, Path: "/nonexistent/file.txt"},
	} {
		if _, err := f.Encode(bad, meta); err == nil || !strings.Contains(err.Error(), `"text"`) {
			t.Errorf("%+v: error %v", bad, err)
		}
	}
	if _, err := f.Encode(str("a\xffb"), meta); !errors.Is(err, ErrUTF8) || !strings.Contains(err.Error(), "byte 1") {
		t.Errorf("invalid UTF-8: %v", err)
	}
	// A source's UTF8 mark is trusted for in-memory bytes (the source checked them), never
	// for a file's contents, which the field reads itself.
	marked := sample.Value{Kind: sample.KindString, UTF8: true, Bytes: []byte("a\xffb")}
	if p, err := f.Encode(marked, meta); err != nil || string(p) != "a\xffb" {
		t.Errorf("marked value checked again: %q %v", p, err)
	}
	file := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(file, []byte("a\xffb"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Encode(sample.Value{Kind: sample.KindFile, UTF8: true, Path: file}, meta); !errors.Is(err, ErrUTF8) {
		t.Errorf("marked file not checked: %v", err)
	}
	// The mark does not make another kind text, and an empty marked string is an empty
	// payload with its meta written.
	if _, err := f.Encode(sample.Value{Kind: sample.KindJSON, UTF8: true, Bytes: []byte(`"a"`)}, meta); !errors.Is(err, ErrKind) {
		t.Errorf("marked JSON value: %v", err)
	}
	for i := range meta {
		meta[i] = 0xAA
	}
	if p, err := f.Encode(sample.Value{Kind: sample.KindBytes, UTF8: true}, meta); err != nil || p != nil || mldf.GetTextMeta(meta) != (mldf.TextMeta{Encoding: mldf.TextUTF8}) {
		t.Errorf("empty marked value: %q %v, meta % x", p, err, meta)
	}
	if _, err := NewRaw(""); err == nil {
		t.Error("empty name accepted")
	}
}

func TestTokenizedMatchesTokenizer(t *testing.T) {
	docs := texts(t)
	for _, name := range Tokenizers() {
		t.Run(name, func(t *testing.T) {
			ref, err := tokenizer.Get(tokenizer.Encoding(name))
			if err != nil {
				t.Fatal(err)
			}
			f, err := NewTokenized("tokens", TokenizedOptions{Tokenizer: name, AppendEnd: true})
			if err != nil {
				t.Fatal(err)
			}
			if f.Width() != 4 {
				t.Fatalf("width %d: every built-in vocabulary has ids above 32767", f.Width())
			}
			for _, d := range docs {
				meta := make([]byte, mldf.TextMetaSize)
				p, err := f.Encode(str(d), meta)
				if err != nil {
					t.Fatal(err)
				}
				want, _, _ := ref.Encode(d)
				got, err := DecodeIDs(p, mldf.GetTextMeta(meta).Encoding)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want)+1 || got[len(got)-1] != f.Tokenizer().EOT() {
					t.Fatalf("%d ids, want %d + end id", len(got), len(want))
				}
				for i, id := range want {
					if got[i] != uint32(id) {
						t.Fatalf("id %d: %d, want %d", i, got[i], id)
					}
				}
				m := mldf.GetTextMeta(meta)
				if m.Encoding != mldf.TextTokens32 || int(m.NumTokens) != len(got) || len(p) != 4*len(got) {
					t.Fatalf("meta %+v for %d ids", m, len(got))
				}
				back, err := f.Tokenizer().Decode(got[:len(got)-1])
				if err != nil || back != d {
					t.Fatalf("decode: %v %q", err, back)
				}
			}
		})
	}
}

func TestTokenizedOptionsAndArguments(t *testing.T) {
	if _, err := NewTokenized("t", TokenizedOptions{Tokenizer: "gpt9"}); !errors.Is(err, ErrTokenizer) {
		t.Errorf("unknown tokenizer: %v", err)
	}
	if _, err := NewTokenized("t", TokenizedOptions{Tokenizer: "r50k_base", IDWidth: 2}); !errors.Is(err, ErrOption) {
		t.Errorf("int16 for r50k: %v", err)
	}
	if _, err := NewTokenized("t", TokenizedOptions{IDWidth: 3}); !errors.Is(err, ErrOption) {
		t.Errorf("width 3: %v", err)
	}
	f, err := NewTokenized("t", TokenizedOptions{Tokenizer: "o200k_base", AppendEnd: true, EndID: 200018})
	if err != nil {
		t.Fatal(err)
	}
	a := f.Arguments()
	want := make([]byte, mldf.ArgumentsSize)
	want[0], want[1] = ArgsVersion, 4
	binary.LittleEndian.PutUint16(want[2:], FlagEndID)
	binary.LittleEndian.PutUint32(want[4:], 200018)
	binary.LittleEndian.PutUint32(want[8:], 200019)
	copy(want[24:], "o200k_base")
	if !bytes.Equal(a[:], want) {
		t.Fatalf("arguments\n got %x\nwant %x", a, want)
	}
	// Without the end id the id field is zero and the flag clear.
	g, _ := NewTokenized("t", TokenizedOptions{})
	if a := g.Arguments(); a[2] != 0 || binary.LittleEndian.Uint32(a[4:]) != 0 || string(bytes.TrimRight(a[24:56], "\x00")) != "cl100k_base" {
		t.Fatalf("default arguments %x", a)
	}
	meta := make([]byte, mldf.TextMetaSize)
	if p, err := g.Encode(str(""), meta); err != nil || p != nil || mldf.GetTextMeta(meta).Encoding != mldf.TextTokens32 {
		t.Fatalf("empty text: %v %v", p, err)
	}
	if _, err := g.Encode(str("\xc3\x28"), meta); !errors.Is(err, ErrUTF8) {
		t.Fatalf("invalid UTF-8: %v", err)
	}
}

func TestNumTokensSaturates(t *testing.T) {
	f, _ := NewTokenized("t", TokenizedOptions{})
	text := strings.Repeat("a b c d e f g h ", 10000) // 80000 tokens
	meta := make([]byte, mldf.TextMetaSize)
	p, err := f.Encode(str(text), meta)
	if err != nil {
		t.Fatal(err)
	}
	if n := mldf.GetTextMeta(meta).NumTokens; n != MaxNumTokens || len(p)/4 <= MaxNumTokens {
		t.Fatalf("num_tokens %d for %d ids", n, len(p)/4)
	}
}

func TestTokenizedConcurrent(t *testing.T) {
	f, _ := NewTokenized("t", TokenizedOptions{Tokenizer: "p50k_base"})
	docs := texts(t)
	want := make([][]byte, len(docs))
	for i, d := range docs {
		want[i], _ = f.Encode(str(d), make([]byte, 16))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			for i, d := range docs {
				p, err := f.Encode(str(d), make([]byte, 16))
				if err != nil || !bytes.Equal(p, want[i]) {
					errs <- fmt.Errorf("doc %d differs (%v)", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestPackedEncodeChecksRow(t *testing.T) {
	f, err := NewPacked("p", PackOptions{SeqLen: 4})
	if err != nil {
		t.Fatal(err)
	}
	meta := make([]byte, mldf.TextMetaSize)
	if _, err := f.Encode(sample.Value{Kind: sample.KindBytes, Bytes: make([]byte, 12)}, meta); !errors.Is(err, ErrRow) {
		t.Errorf("short row: %v", err)
	}
	if _, err := f.Encode(str("text"), meta); !errors.Is(err, ErrRow) {
		t.Errorf("string value: %v", err)
	}
	for _, bad := range []PackOptions{{SeqLen: 0}, {SeqLen: MaxSeqLen + 1}, {SeqLen: 8, Tokenizer: "x"}, {SeqLen: 8, IDWidth: 2}} {
		if _, err := NewPacked("p", bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	g, _ := NewPacked("p", PackOptions{SeqLen: 2048, PadLast: true, Tokenizer: "r50k_base"})
	a := g.Arguments()
	le := binary.LittleEndian
	if a[0] != 1 || a[1] != 4 || le.Uint16(a[2:]) != FlagEndID|FlagPadLast || le.Uint32(a[4:]) != 50256 ||
		le.Uint32(a[8:]) != 50257 || le.Uint32(a[12:]) != 2048 || le.Uint32(a[16:]) != 50256 ||
		string(bytes.TrimRight(a[24:56], "\x00")) != "r50k_base" || !bytes.Equal(a[56:], make([]byte, 72)) {
		t.Fatalf("packed arguments %x", a)
	}
}

func TestTokenLossIsAnError(t *testing.T) {
	f, _ := NewTokenized("t", TokenizedOptions{})
	_, err := f.Encode(str("a\x7fb"), make([]byte, mldf.TextMetaSize))
	if !errors.Is(err, ErrTokenLoss) {
		t.Skipf("tiktoken-go no longer drops U+007F (err %v): ErrTokenLoss check can stay as a guard", err)
	}
}

func TestSegmentedEncodeMatchesWhole(t *testing.T) {
	docs := append(texts(t), segmentSeeds...)
	if p := filepath.Join(shared, "fortunes_en_riddles.jsonl"); exists(p) {
		b, _ := os.ReadFile(p)
		docs = append(docs, string(b)) // a whole file as one text: JSON punctuation, escapes
	}
	for _, n := range Tokenizers() {
		tk, _ := NewTokenizer(n)
		for pass := range 2 {
			for _, d := range docs {
				got, err := tk.Encode([]byte(d), nil)
				want, _ := tk.EncodeWhole([]byte(d))
				if err != nil || !slicesEqual(got, want) {
					t.Fatalf("%s pass %d: %.60q: ids differ (%v)", n, pass, d, err)
				}
			}
		}
	}
}

func TestSegmentedEncodeRealCorpora(t *testing.T) {
	if testing.Short() {
		t.Skip("tokenizes ~1 MB four times")
	}
	var docs []string
	for _, c := range []struct{ file, key string }{
		{"real/gsm8k_test.jsonl", "answer"}, {"real/gsm8k_test.jsonl", "question"},
		{"real/humaneval_HumanEval.jsonl.gz", "prompt"}, {"real/humaneval_HumanEval.jsonl.gz", "canonical_solution"},
		{"fortunes_ru_head200.jsonl", "text"}, {"fortunes_en_riddles.jsonl", "text"},
	} {
		p := filepath.Join(shared, c.file)
		if !exists(p) {
			t.Skip("shared testdata absent")
		}
		src, _ := jsonl.New([]string{p}, []jsonl.Column{{Key: c.key, Kind: sample.KindString, Required: true}}, jsonl.Options{})
		if err := src.Run(context.Background(), func(s sample.Sample) error {
			docs = append(docs, string(s.Value(c.key).Bytes))
			return s.Err
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range Tokenizers() {
		tk, _ := NewTokenizer(n)
		for _, d := range docs {
			got, err := tk.Encode([]byte(d), nil)
			want, _ := tk.EncodeWhole([]byte(d))
			if err != nil || !slicesEqual(got, want) {
				t.Fatalf("%s: %.60q: ids differ (%v)", n, d, err)
			}
		}
	}
}

// TestSegmentedEncodeRandom compares segmented and whole tokenization on random strings
// over an alphabet of the characters the pre-tokenizers treat differently.
func TestSegmentedEncodeRandom(t *testing.T) {
	alphabet := []string{" ", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u2003", "\u3000", "\u0085", "\v", "\f",
		"a", "Z", "é", "É", "ß", "я", "Я", "中", "ǅ", "ʰ", "\u0301", "\u0903", "1", "٣", "½", "Ⅻ",
		"'", "'s", "'S", "'ll", "’", ".", ",", "(", "/", "//", "-", "$", "€", "😀", "\u200b", "\ufeff", "_", "#"}
	r := rand.New(rand.NewPCG(5, 5))
	var toks []*Tokenizer
	for _, n := range Tokenizers() {
		tk, _ := NewTokenizer(n)
		toks = append(toks, tk)
	}
	for range 3000 {
		var b strings.Builder
		for range r.IntN(24) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := []byte(b.String())
		for _, tk := range toks {
			got, err := tk.Encode(s, nil)
			want, _ := tk.EncodeWhole(s)
			if err != nil || !slicesEqual(got, want) {
				t.Fatalf("%s: %q: segmented %v (%v), whole %v", tk.Name(), s, got, err, want)
			}
		}
	}
}
