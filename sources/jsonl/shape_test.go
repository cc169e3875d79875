package jsonl

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// extractResult is what one extraction gives, for comparing two scanners.
type extractResult struct {
	vals string
	key  string
	err  string
}

func extractWith(x *extractor, sc *scanner, line []byte) extractResult {
	var arena arena
	vals, key, err := x.extract(sc, line, &arena, nil)
	r := extractResult{vals: fmt.Sprintf("%+v", vals), key: key}
	if err != nil {
		r.err = err.Error()
	}
	return r
}

// checkShape extracts line with sc (which remembers the members of earlier lines) and with
// a new scanner, and fails when they differ in any value, key or error message.
func checkShape(t *testing.T, x *extractor, sc *scanner, line []byte) {
	t.Helper()
	got, want := extractWith(x, sc, line), extractWith(x, &scanner{}, line)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: with the learned shape %+v, fresh %+v", line, got, want)
	}
}

// TestShapeMemory: lines that share a prefix of bytes with the remembered members but
// differ in them (a longer key, whitespace, escapes, a cut line, bad bytes, duplicate keys)
// extract exactly as with a scanner that has seen no line.
func TestShapeMemory(t *testing.T) {
	x, _ := fuzzExtractor(t)
	learned := []string{
		`{"id":"a","text":"hello","i":7,"n":1.5}`,
		`{"text" : "x", "i" :1}`,
		`{"te\u0078t":"esc","i":2}`,
		`{"id":"a","lang":"ru","source":"s","text":"` + strings.Repeat("ж", 40) + `"}`,
		`{"` + strings.Repeat("k", 40) + `":1,"text":"long key first"}`,
		`{"abcdefghijklmnopq":1,"text":"a key of 20 bytes with its quotes and colon"}`,
		`{"abcdefgh":1,"abcdefghijkl":2,"text":"keys of 8 to 16 bytes"}`,
	}
	lines := []string{
		`{"abcdefghijklmnopq":1,"text":"x"}`,
		`{"abcdefghijklmnopr":1,"text":"x"}`,
		`{"abcdefghijklmnopq":1}`,
		`{"abcdefghijklmnopq"`,
		`{"abcdefgh":1,"abcdefghijkl":2,"text":"y"}`,
		`{"abcdefgh":1,"abcdefghijkm":2,"text":"y"}`,
		`{"abcdefgi":1,"abcdefghijkl":2,"text":"y"}`,
		`{"abcdefgh":1,"abcdefghijkl":`,
		`{"id":"a","text":"hello","i":7,"n":1.5}`,
		`{"id":"b","textx":"no","i":7}`,
		`{"id":"b","tex":"no","i":7}`,
		`{"id":"b","text":`,
		`{"id":"b","text"`,
		`{"id":"b","text":"cut`,
		`{"id":"b","text":"x","text":"dup","i":1,"i":2}`,
		`{"id":"b","text":"x"} `,
		`{"id":"b","text":"x",}`,
		`{"id":"b","text":"x"}x`,
		`{"id":"b","text":"x""i":1}`,
		`{"id":"b" ,"text":"x"}`,
		`{"id":"b"x,"text":"x"}`,
		`{"id":"b"}`,
		`{"id":"b" }`,
		`{"id":"b"`,
		`{"id":"b",`,
		`{"id":"b", "lang":"ru"]`,
		`{"id":"\x","text":"x"}`,
		"{\"id\":\"\xd0\",\"text\":\"x\"}",
		`{"id":1,"text":"x"}`,
		`{"id":"b","lang":"ru","source":"s","text":"t"}`,
		`{"id":"b","text" : "x", "i" :1}`,
		`{"text" : "x", "i" :"not a number"}`,
		`{"te\u0078t":"esc","i":2}`,
		`{"te\u0078t":"esc","text":"plain"}`,
		`{"id":"a","lang":"ru","source":"s","text":"` + strings.Repeat("ы", 40) + "\xd0" + `"}`,
		`{"id":"a","lang":"ru","source":"s","text":"\n"}`,
		`{"id":"a","lang":"ru","source":"s","text":"\x01"}`,
		"{\"id\":\"a\",\"lang\":\"ru\",\"source\":\"s\",\"te\xd0\":\"x\"}",
		`{"id":{"text":"nested"},"text":"top"}`,
		`{"a":{"b":1},"a":2}`,
		`{}`,
		`{"id":"a"}`,
		`{"id":"a","lang":"ru","source":"s","text":"t","extra":1,"more":[1,2]}`,
		`{"` + strings.Repeat("k", 40) + `":1,"text":"long key first"}`,
		`[]`,
		``,
	}
	for _, l := range learned {
		for _, line := range lines {
			sc := &scanner{}
			extractWith(x, sc, []byte(l))
			checkShape(t, x, sc, []byte(line))
			// And a line learned after a line that failed part way.
			checkShape(t, x, sc, []byte(l))
		}
	}
	// One scanner through every line in turn, twice.
	sc := &scanner{}
	for range 2 {
		for _, line := range append(learned, lines...) {
			checkShape(t, x, sc, []byte(line))
		}
	}
	// A scanner moved to another extractor forgets the shape of the first.
	y, err := newExtractor([]Column{{Key: "id", Kind: x.cols[0].Kind}})
	if err != nil {
		t.Fatal(err)
	}
	extractWith(x, sc, []byte(lines[0]))
	if got, want := extractWith(y, sc, []byte(lines[0])), extractWith(y, &scanner{}, []byte(lines[0])); !reflect.DeepEqual(got, want) {
		t.Fatalf("after another extractor: %+v, want %+v", got, want)
	}
}

// TestStrMask: the lowest byte strMask flags is the first byte of the word that is '"',
// '\\', a control byte or >= 0x80, for every byte value at every position of a word of
// plain bytes, and for random words.
func TestStrMask(t *testing.T) {
	first := func(w [8]byte) int {
		for i, c := range w {
			if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				return i
			}
		}
		return 8
	}
	check := func(w [8]byte) {
		x := binary.LittleEndian.Uint64(w[:])
		got := bits.TrailingZeros64(strMask(x, x^(lsb*'"'), x^(lsb*'\\'))) / 8
		if want := first(w); got != want {
			t.Fatalf("% x: first flagged byte %d, want %d", w, got, want)
		}
	}
	for pos := range 8 {
		for v := range 256 {
			for _, fill := range []byte{'a', ' ', '~', '!', '#', '[', ']', 0x21} {
				var w [8]byte
				for i := range w {
					w[i] = fill
				}
				w[pos] = byte(v)
				check(w)
				// Anything above the byte: a lower flag must not be hidden by a borrow.
				for _, hi := range []byte{0, 1, '"', '\\', 0x1f, 0x20, 0x7f, 0x80, 0xff} {
					for i := pos + 1; i < 8; i++ {
						w[i] = hi
					}
					check(w)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 200000 {
		var w [8]byte
		for i := range w {
			// Mostly the bytes near the thresholds.
			switch r.IntN(4) {
			case 0:
				w[i] = byte(r.IntN(256))
			case 1:
				w[i] = []byte{0, 1, 0x1f, 0x20, 0x21, '"', '#', '\\', ']', 0x7f, 0x80, 0xa2, 0xdc}[r.IntN(13)]
			default:
				w[i] = byte(0x20 + r.IntN(0x5f))
			}
		}
		check(w)
	}
}
