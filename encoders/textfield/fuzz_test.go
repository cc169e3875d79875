package textfield

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
)

// FuzzTextFields feeds arbitrary bytes to TEXT_RAW and TEXT_TOKENIZED: invalid UTF-8 is an
// error, valid text is stored as is and its ids decode back to it.
func FuzzTextFields(f *testing.F) {
	for _, s := range []string{"a\x7fb", "", "hello world", "Привет", "<|endoftext|>", "a\xffb", "\x00\x01", "  \n\n\t x", "😀😀 中文"} {
		f.Add([]byte(s))
	}
	raw, _ := NewRaw("raw")
	tok, _ := NewTokenized("tok", TokenizedOptions{Tokenizer: "r50k_base", AppendEnd: true})
	f.Fuzz(func(t *testing.T, b []byte) {
		meta := make([]byte, mldf.TextMetaSize)
		v := sample.Value{Kind: sample.KindString, Bytes: b}
		p, err := raw.Encode(v, meta)
		if utf8.Valid(b) != (err == nil) {
			t.Fatalf("raw: valid %v, err %v", utf8.Valid(b), err)
		}
		if err == nil && !bytes.Equal(p, b) {
			t.Fatalf("raw payload %q", p)
		}
		p, err = tok.Encode(v, meta)
		if errors.Is(err, ErrTokenLoss) && bytes.IndexByte(b, 0x7f) >= 0 {
			return // the known tiktoken-go bug, reported as an error
		}
		if utf8.Valid(b) != (err == nil) {
			t.Fatalf("tokenized: valid %v, err %v", utf8.Valid(b), err)
		}
		if err != nil {
			return
		}
		ids, err := DecodeIDs(p, mldf.GetTextMeta(meta).Encoding)
		if err != nil || len(ids) == 0 || ids[len(ids)-1] != 50256 {
			t.Fatalf("ids %v err %v", ids, err)
		}
		back, err := tok.Tokenizer().Decode(ids[:len(ids)-1])
		if err != nil || back != string(b) {
			t.Fatalf("decode %q (%v), want %q", back, err, b)
		}
	})
}

// FuzzSegmentedEncode checks that cutting the text into cached segments gives the ids of
// tokenizing it whole, for every built-in vocabulary.
func FuzzSegmentedEncode(f *testing.F) {
	for _, s := range segmentSeeds {
		f.Add([]byte(s))
	}
	var toks []*Tokenizer
	for _, n := range Tokenizers() {
		tk, err := NewTokenizer(n)
		if err != nil {
			f.Fatal(err)
		}
		toks = append(toks, tk)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !utf8.Valid(b) || bytes.IndexByte(b, 0x7f) >= 0 {
			return
		}
		for _, tk := range toks {
			for range 2 { // the second pass hits the cache
				got, err := tk.Encode(b, nil)
				want, werr := tk.EncodeWhole(b)
				if err != nil || werr != nil || !slicesEqual(got, want) {
					t.Fatalf("%s: %q: segmented %v (%v), whole %v (%v)", tk.Name(), b, got, err, want, werr)
				}
			}
		}
	})
}

var segmentSeeds = []string{
	"hello world", "it's a dog's life", "HELLO WORLD, ok?", "a  b   c\n d\r\n e\t f",
	"(x) y, z. \"q\" r; 1 2 3 abc 4567 d", "Привет мир — это тест. Ёжик в тумане",
	"naïve café 中文 字 日本語 text", "don't DON'T I'M you'LL", "x/ y/ z//\n w",
	"e\u0301 a\u0301 b", "x \u00a0y \u2003z", "end.  Start", "tabs\t\tand spaces  x",
	"def f(x):\n    return x  # comment\n", "12345 678 9", "a\u0300 \u0300b",
}

func slicesEqual(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
