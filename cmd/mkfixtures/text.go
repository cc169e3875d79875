package main

import (
	"encoding/binary"
	"math"

	"github.com/mldf/convert/encoders/textfield"
	"github.com/mldf/convert/pipeline"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
)

// Stand-in TEXT fields, kept for what encoders/textfield cannot produce: int16 token ids (the
// built-in vocabularies all need int32). They follow docs/FORMAT.md's TextMeta (encoding 0
// UTF-8, 1 int32 ids, 2 int16 ids) and leave the arguments zero.

// textTokens stores token ids (TEXT_TOKENIZED) as int32 or int16 little-endian; the value's
// bytes are whitespace-separated words, "tokenised" as their byte sums (a stand-in tokenizer).
type textTokens struct {
	name  string
	wide  bool // int32 ids; else int16
	large bool // add a large offset so ids need 32 bits
}

func (f textTokens) Name() string                            { return f.name }
func (f textTokens) Type() mldf.TypeID                       { return mldf.TypeTextTokenized }
func (f textTokens) Arguments() (a [mldf.ArgumentsSize]byte) { return a }
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
	enc := mldf.TextTokens16
	if f.wide {
		enc = mldf.TextTokens32
	}
	mldf.TextMeta{NumTokens: uint16(min(len(ids), math.MaxUint16)), Encoding: enc}.Put(meta)
	return out, nil
}

// textFixture: UTF-8 text (with an empty one) and cl100k token ids (int32) from
// encoders/textfield, plus int16 ids from the stand-in field (no built-in vocabulary fits
// int16).
func textFixture() fixture {
	texts := []string{
		"hello world",
		"",
		"Grüße aus Köln — 東京 🚀 tabs\tand\nnewlines",
		"the quick brown fox jumps over the lazy dog again and again",
		"a",
		"  leading and trailing spaces <|endoftext|> as text",
	}
	var ss []sample.Sample
	for i, t := range texts {
		ss = append(ss, mk(i, map[string]sample.Value{
			"text": {Kind: sample.KindString, Bytes: []byte(t)},
		}))
	}
	var fs fieldSet
	raw, err := textfield.NewRaw("text")
	fs.add(raw, err, "text", false)
	tok, err := textfield.NewTokenized("cl100k", textfield.TokenizedOptions{AppendEnd: true})
	fs.add(tok, err, "text", false)
	fs.add(textTokens{name: "tok16"}, nil, "text", false)
	return fixture{name: "text", fields: fs.b, samples: ss, err: fs.err}
}

// packedFixture: TEXT_PACKED rows of 7 cl100k ids cut from the documents, the last row padded.
func packedFixture() fixture {
	docs := []string{"one two three four five", "", "six seven", "Grüße 東京 🚀", "the end of the packed stream"}
	var ss []sample.Sample
	for i, t := range docs {
		ss = append(ss, mk(i, map[string]sample.Value{"doc": {Kind: sample.KindString, Bytes: []byte(t)}}))
	}
	opt := textfield.PackOptions{SeqLen: 7, PadLast: true, Workers: 1}
	f, err := textfield.NewPacked("tokens", opt)
	if err != nil {
		return fixture{name: "packed", err: err}
	}
	return fixture{name: "packed", fields: []pipeline.Binding{{Field: f, Column: f.Column()}},
		source: f.Pack(memSource(ss), "doc")}
}
