package jsonl

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mldf/convert/sample"
)

// decPieces are escapes, valid and not, for the strings strDecode is tested on (strPieces
// has the UTF-8 sequences and the stopping bytes).
var decPieces = []string{
	`\n`, `\t`, `\"`, `\\`, `\/`, `\b`, `\f`, `\r`, `\u00e9`, `\u0416`, `\u20AC`, `\ud83d\ude00`,
	`\uD800\uDFFF`, `\u0000`, `\u001f`, `\ud83d`, `\ude00`, `\ud83dx`, `\ud83d\u0041`, `\u12`,
	`\u12g4`, `\x`, `\`, `\\\\n`, `\u`,
}

// randDecStr returns a string body of about n bytes made of text, escapes and the pieces of
// strPieces.
func randDecStr(r *rand.Rand, n int) []byte {
	var b []byte
	for len(b) < n {
		switch k := r.IntN(10); {
		case k < 4:
			b = append(b, randStr(r, r.IntN(40))...)
		case k < 8:
			b = append(b, decPieces[r.IntN(8)]...) // the one-character escapes
		default:
			b = append(b, decPieces[r.IntN(len(decPieces))]...)
		}
	}
	return b
}

// checkDecode checks strDecode on the string that starts line (with its quote) against str
// and unescape: it must accept exactly the strings both accept, ending at the same byte, with
// the same text, and leave the scanner as it was otherwise. after is what the line's buffer
// holds past the line (strDecode may read it, and must not be misled by it).
func checkDecode(t *testing.T, line, after []byte) {
	t.Helper()
	buf := append(append([]byte(nil), line...), after...)
	checkDecodeIn(t, buf[:len(line):len(buf)])
}

// checkDecodeIn is checkDecode for the line b, with what follows it in its buffer up to its
// capacity.
func checkDecodeIn(t *testing.T, b []byte) {
	t.Helper()
	line, after := b, b[len(b):cap(b)]
	ref := &scanner{b: line[:len(line):len(line)]}
	_, errR := ref.str()
	var want []byte
	refOK := errR == nil
	if refOK {
		var errU error
		want, errU = unescape(nil, line[1:ref.i-1])
		refOK = errU == nil
	}
	a := &arena{block: 1} // a block of the size asked for
	s := &scanner{b: b, arena: a}
	got, ok := s.strDecode()
	if !hasStrBlocks {
		return // strDecode is never called
	}
	if ok != refOK {
		t.Fatalf("%q (then %q): strDecode ok %v, str and unescape %v (%v)", line, after, ok, refOK, errR)
	}
	if !ok {
		if s.i != 0 || len(a.buf) != 0 {
			t.Fatalf("%q: strDecode failed but moved to %d, kept %d bytes", line, s.i, len(a.buf))
		}
		return
	}
	if s.i != ref.i || !bytes.Equal(got, want) {
		t.Fatalf("%q (then %q): strDecode ends at %d with %q, str at %d with %q", line, after, s.i, got, ref.i, want)
	}
	if len(a.buf) != len(got) || cap(got) != len(got) {
		t.Fatalf("%q: the arena kept %d bytes for a text of %d (capacity %d)", line, len(a.buf), len(got), cap(got))
	}
}

// decAfters are what a line's buffer may hold past it: nothing, the newline and more lines,
// or (the last line of a file without a newline) stale bytes that look like a string's end.
var decAfters = []string{"", "\n", `", "more": 1}`, "\n{\"text\":\"more\"}\n", "\n" + strings.Repeat("ж", 40), `xyz\n\"", more"`, strings.Repeat(`\\`, 40) + `"`}

// TestStrDecode checks the one-pass decoding of strings on random strings of text, escapes
// and broken sequences, closed and not, and each piece at every offset of two blocks.
func TestStrDecode(t *testing.T) {
	if !hasStrBlocks {
		t.Skip("no vectorised string decoding on this CPU")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		line := append([]byte{'"'}, randDecStr(r, r.IntN(300))...)
		if r.IntN(4) != 0 {
			line = append(line, '"')
			if r.IntN(2) == 0 {
				line = append(line, `,"n":1}`...)
			}
		}
		checkDecode(t, line, []byte(decAfters[r.IntN(len(decAfters))]))
	}
	pieces := append(append([]string(nil), strPieces...), decPieces...)
	for _, p := range pieces {
		for _, fill := range []string{"x", "ж", "😀", `\n`} {
			for pad := range 70 {
				pre := strings.ToValidUTF8(strings.Repeat(fill, pad)[:pad], "x")
				for i, post := range []string{"", `"}`, strings.Repeat("y", 40) + `"`, strings.Repeat("ы", 40) + `"}`} {
					checkDecode(t, []byte(`"`+pre+p+post), []byte(decAfters[(pad+i)%len(decAfters)]))
				}
			}
		}
	}
}

// TestDecodeExtract compares extract with strDecode and without it (the scalar path, which
// scans with str and decodes with unescapeAt) on lines with the string column at every
// place: their values, and their errors, must be the same.
func TestDecodeExtract(t *testing.T) {
	x, err := newExtractor([]Column{
		{Key: "text", Kind: sample.KindString},
		{Name: "raw", Key: "text", Kind: sample.KindJSON},
		{Key: "meta.title", Kind: sample.KindString},
		{Key: "n", Kind: sample.KindInt},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	fast, scalar := &scanner{}, &scanner{scalar: true}
	var a1, a2 arena
	for range 5000 {
		text, title := randDecStr(r, r.IntN(200)), randDecStr(r, r.IntN(50))
		var line []byte
		switch r.IntN(3) {
		case 0:
			line = []byte(`{"text":"` + string(text) + `","meta":{"title":"` + string(title) + `"},"n":3}`)
		case 1:
			line = []byte(`{"n":3,"meta":{"title":"` + string(title) + `"},"text":"` + string(text) + `"}`)
		default:
			line = []byte(`{"text":"x","text":"` + string(text) + `"}`) // the last occurrence wins
		}
		buf := append(append([]byte(nil), line...), decAfters[r.IntN(len(decAfters))]...)
		line = buf[:len(line):len(buf)]
		v1, k1, e1 := x.extract(fast, line, &a1, nil)
		v2, k2, e2 := x.extract(scalar, line, &a2, nil)
		if (e1 == nil) != (e2 == nil) || e1 != nil && (e1.Error() != e2.Error() || k1 != k2) {
			t.Fatalf("%q: errors %v (%q) and %v (%q)", line, e1, k1, e2, k2)
		}
		if e1 != nil {
			continue
		}
		if len(v1) != len(v2) {
			t.Fatalf("%q: %d and %d values", line, len(v1), len(v2))
		}
		for i := range v1 {
			if v1[i].Name != v2[i].Name || v1[i].Value.Kind != v2[i].Value.Kind || !bytes.Equal(v1[i].Value.Bytes, v2[i].Value.Bytes) || v1[i].Value.Int != v2[i].Value.Int {
				t.Fatalf("%q: value %d is %+v with strDecode, %+v without", line, i, v1[i], v2[i])
			}
		}
	}
}

// FuzzStrDecode checks the one-pass decoding of a string against str and unescape on any
// bytes, with any bytes past the line.
func FuzzStrDecode(f *testing.F) {
	for i, p := range decPieces {
		f.Add([]byte(strings.Repeat("ж", 15)+p+strings.Repeat("x", 40)+`"`), []byte(decAfters[i%len(decAfters)]))
	}
	f.Fuzz(func(t *testing.T, body, after []byte) {
		checkDecode(t, append([]byte{'"'}, body...), after)
	})
}
