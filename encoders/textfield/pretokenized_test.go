package textfield

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
)

func TestPretokenized(t *testing.T) {
	f, err := NewTokenized("ids", TokenizedOptions{Tokenizer: Pretokenized})
	if err != nil {
		t.Fatal(err)
	}
	a := f.Arguments()
	if a[0] != ArgsVersion || a[1] != 4 || string(a[24:28]) != "none" || binary.LittleEndian.Uint32(a[8:]) != 0 {
		t.Fatalf("arguments % x", a[:32])
	}
	meta := make([]byte, 16)
	p, err := f.Encode(sample.Value{Kind: sample.KindJSON, Bytes: []byte(" [1, 2 ,70000]")}, meta)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := DecodeIDs(p, mldf.TextTokens32)
	if len(ids) != 3 || ids[2] != 70000 || meta[12] != 3 || meta[14] != mldf.TextTokens32 {
		t.Fatalf("ids %v meta % x", ids, meta)
	}
	if p, err := f.Encode(sample.Value{Kind: sample.KindJSON, Bytes: []byte("[]")}, meta); err != nil || p != nil {
		t.Fatalf("empty: %v %v", p, err)
	}
	for _, bad := range []string{"", "[", "[1,]", "[-1]", "[1.5]", "[null]", `["1"]`, "[1] x", "[2147483648]", "{}"} {
		if _, err := f.Encode(sample.Value{Kind: sample.KindJSON, Bytes: []byte(bad)}, meta); !errors.Is(err, ErrKind) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := f.Encode(sample.Value{Kind: sample.KindString, Bytes: []byte("text")}, meta); !errors.Is(err, ErrKind) {
		t.Errorf("text to a pretokenized field: %v", err)
	}
	tok, err := NewTokenized("t", TokenizedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tok.Encode(sample.Value{Kind: sample.KindJSON, Bytes: []byte("[1]")}, meta); !errors.Is(err, ErrKind) {
		t.Errorf("ids to a tokenizer: %v", err)
	}
	if _, err := NewTokenized("t", TokenizedOptions{Tokenizer: Pretokenized, AppendEnd: true}); !errors.Is(err, ErrOption) {
		t.Errorf("append_eot without an id: %v", err)
	}
	f16, err := NewTokenized("t", TokenizedOptions{Tokenizer: Pretokenized, IDWidth: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f16.Encode(sample.Value{Kind: sample.KindJSON, Bytes: []byte("[32768]")}, meta); !errors.Is(err, ErrKind) {
		t.Errorf("an id above int16: %v", err)
	}
}

// FuzzParseIDs: the id parser accepts exactly the JSON arrays of integers 0..2^31-1.
func FuzzParseIDs(f *testing.F) {
	for _, s := range []string{"[]", "[1,2,3]", " [ 0 ] ", "[1,]", "[-1]", "[1e3]", "[99999999999]", "[1]]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ids, err := parseIDs("f", sample.Value{Kind: sample.KindJSON, Bytes: b}, 4)
		var ref []any
		jerr := json.Unmarshal(b, &ref)
		if err != nil {
			return // stricter than JSON is fine (floats, nulls, exponents); checked below the other way
		}
		if jerr != nil || len(ref) != len(ids) {
			t.Fatalf("%q: parsed %v, encoding/json: %v %v", b, ids, ref, jerr)
		}
		for i, v := range ref {
			if x, ok := v.(float64); !ok || x != float64(ids[i]) {
				t.Fatalf("%q: id %d is %v, encoding/json says %v", b, i, ids[i], v)
			}
		}
	})
}
