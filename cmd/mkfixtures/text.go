package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/mldf/convert/encoders"

	"github.com/mldf/convert/manifest"
	"github.com/mldf/convert/sample"
)

// stand-in TEXT fields: encoders/textfield did not exist when this program was written. They
// follow docs/FORMAT.md's TextMeta (encoding 0 UTF-8, 1 int32 ids, 2 int16 ids) and leave the
// arguments zero. TODO: switch to encoders/textfield once it lands.

// textRaw stores UTF-8 text (TEXT_RAW, encoding 0).
type textRaw struct{ name string }

func (f textRaw) Name() string                                { return f.name }
func (f textRaw) Type() manifest.TypeID                       { return manifest.TypeTextRaw }
func (f textRaw) Arguments() (a [manifest.ArgumentsSize]byte) { return a }
func (f textRaw) Encode(v sample.Value, meta []byte) ([]byte, error) {
	b, err := v.Load()
	if err != nil {
		return nil, err
	}
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("field %q: text is not UTF-8", f.name)
	}
	n := utf8.RuneCount(b)
	manifest.TextMeta{NumTokens: uint16(min(n, math.MaxUint16)), Encoding: manifest.TextUTF8}.Put(meta)
	return append([]byte(nil), b...), nil
}

// textTokens stores token ids (TEXT_TOKENIZED) as int32 or int16 little-endian; the value's
// bytes are whitespace-separated words, "tokenised" as their byte sums (a stand-in tokenizer).
type textTokens struct {
	name  string
	wide  bool // int32 ids; else int16
	large bool // add a large offset so ids need 32 bits
}

func (f textTokens) Name() string                                { return f.name }
func (f textTokens) Type() manifest.TypeID                       { return manifest.TypeTextTokenized }
func (f textTokens) Arguments() (a [manifest.ArgumentsSize]byte) { return a }
func (f textTokens) Encode(v sample.Value, meta []byte) ([]byte, error) {
	b, err := v.Load()
	if err != nil {
		return nil, err
	}
	var ids []int64
	cur, in := int64(0), false
	for _, c := range append(b, ' ') {
		if c == ' ' || c == '\n' {
			if in {
				ids = append(ids, cur)
			}
			cur, in = 0, false
			continue
		}
		cur, in = cur*31+int64(c), true
	}
	var out []byte
	for k, id := range ids {
		if f.wide {
			id = id % 100000
			if f.large {
				id = id*1000 - int64(k)
			}
			out = binary.LittleEndian.AppendUint32(out, uint32(int32(id)))
		} else {
			out = binary.LittleEndian.AppendUint16(out, uint16(int16(id%30000)))
		}
	}
	enc := manifest.TextTokens16
	if f.wide {
		enc = manifest.TextTokens32
	}
	manifest.TextMeta{NumTokens: uint16(min(len(ids), math.MaxUint16)), Encoding: enc}.Put(meta)
	return out, nil
}

// textFixture: UTF-8 text (with an empty one), int32 and int16 token ids.
func textFixture() fixture {
	texts := []string{
		"hello world",
		"",
		"Grüße aus Köln — 東京 🚀 tabs\tand\nnewlines",
		"the quick brown fox jumps over the lazy dog again and again",
		"a",
		"  leading and trailing spaces  ",
	}
	var ss []sample.Sample
	for i, t := range texts {
		ss = append(ss, mk(i, map[string]sample.Value{
			"text": {Kind: sample.KindString, Bytes: []byte(t)},
		}))
	}
	var fs fieldSet
	for _, f := range []encoders.Field{textRaw{"text"}, textTokens{name: "tok32", wide: true, large: true}, textTokens{name: "tok16"}} {
		fs.add(f, nil, "text", false)
	}
	return fixture{name: "text", fields: fs.b, samples: ss}
}
