package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mldf/convert/sample"
)

// FuzzExtract checks the line → columns mapping against encoding/json: the same lines are
// valid, and the extracted values equal what encoding/json decodes.
func FuzzExtract(f *testing.F) {
	for _, name := range []string{"broken.jsonl", "gsm8k_head8.jsonl"} {
		data, err := os.ReadFile(filepath.Join(fixtures, name))
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			f.Add(l)
		}
	}
	for _, s := range []string{`{"text":"x","a":{"b":[1,{"c":null}]},"n":-0.5e-3,"i":7,"arr":[[],{}]}`,
		`{"a":{"b":1},"a":2}`, `{"text":"\ud83d\ude00\u00e9\"\\\/\b\f\n\r\t"}`, `{"text":"` + strings.Repeat("é", 40) + `"}`,
		`{"arr":["x"],"arr":{"0":"y"}}`, `{"e\u0301":1}`, "{\"text\":\"\xe2\x82\"}"} {
		f.Add([]byte(s))
	}
	for _, l := range boundaryLines() {
		f.Add(l)
	}
	x, sc := fuzzExtractor(f)
	f.Fuzz(func(t *testing.T, line []byte) { checkExtract(t, x, sc, line) })
}

// boundaryLines are real-text-like lines (fortune and man-page shapes) with escapes,
// multi-byte UTF-8 and bad bytes placed at every offset around the 8-byte words and 32-byte
// blocks the string scanner reads.
func boundaryLines() [][]byte {
	var out [][]byte
	for _, piece := range []string{`\n\t\t-- `, `\"`, `\\fB`, `\u00e9`, `\ud83d\ude00`, "ж", "漢", "😀", "\xd0", "\xe2\x82", "\x01", "\xed\xa0\x80"} {
		for pad := 0; pad < 40; pad += 3 {
			for _, fill := range []string{"x", "ж"} {
				text := strings.Repeat(fill, pad) + piece + strings.Repeat("ы", pad%7) + strings.Repeat("z", 40-pad)
				out = append(out, []byte(`{"id":"fortunes/ru/2001.03:`+strings.Repeat("9", pad%5)+`","lang":"ru","i":7,"text":"`+text+`","n":1.5}`))
			}
		}
	}
	return out
}

// fuzzExtractor returns the extractor of FuzzExtract and TestExtractRandomLines.
func fuzzExtractor(tb testing.TB) (*extractor, *scanner) {
	x, err := newExtractor(extractCols)
	if err != nil {
		tb.Fatal(err)
	}
	return x, &scanner{}
}

// TestExtractRandomLines runs random real-text-like and hostile lines (strScan pieces:
// every UTF-8 length, invalid sequences, escapes, control bytes) through FuzzExtract's
// comparison with encoding/json.
func TestExtractRandomLines(t *testing.T) {
	x, sc := fuzzExtractor(t)
	for _, l := range boundaryLines() {
		checkExtract(t, x, sc, l)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		line := []byte(`{"id":"` + string(randStr(r, r.IntN(20))) + `","text":"` + string(randStr(r, r.IntN(400))) + `","i":` + strconv.Itoa(r.IntN(100)) + `}`)
		checkExtract(t, x, sc, line)
	}
}

// extractCols are the columns FuzzExtract extracts.
var extractCols = []Column{
	{Key: "text", Kind: sample.KindString},
	{Key: "a.b", Kind: sample.KindJSON},
	{Key: "n", Kind: sample.KindFloat},
	{Key: "i", Kind: sample.KindInt},
	{Key: "arr.0", Kind: sample.KindJSON},
}

// checkExtract compares what x extracts from line with encoding/json's view of it.
func checkExtract(t *testing.T, x *extractor, sc *scanner, line []byte) {
	t.Helper()
	// The scanner remembers the members of earlier lines (shared across fuzz inputs): the
	// result must be what a scanner that saw no line gives.
	checkShape(t, x, sc, line)
	cols := extractCols
	{
		var arena arena
		vals, _, err := x.extract(sc, line, &arena, nil)
		trimmed := bytes.TrimLeft(line, " \t\r\n")
		valid := json.Valid(line) && utf8.Valid(line) && len(trimmed) > 0 && trimmed[0] == '{'
		if !valid {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrUTF8) {
				t.Fatalf("invalid line accepted (err %v): %q", err, line)
			}
			return
		}
		if err != nil {
			// encoding/json replaces unpaired surrogate escapes; we reject them. Values of
			// the wrong type for a column are errors too.
			if errors.Is(err, ErrUTF8) && bytes.Contains(line, []byte(`\u`)) || errors.Is(err, ErrType) || errors.Is(err, ErrValue) {
				return
			}
			if errors.Is(err, ErrSyntax) && bytes.Count(line, []byte("["))+bytes.Count(line, []byte("{")) > 9000 {
				return // nesting limit
			}
			t.Fatalf("valid line rejected: %v: %q", err, line)
		}
		var ref map[string]any
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		if err := d.Decode(&ref); err != nil {
			t.Fatalf("reference decode: %v", err)
		}
		for _, c := range cols {
			rv, ok := lookup(ref, c.Key)
			v, have := (&sample.Sample{Values: vals}).Get(c.Key)
			if !ok || rv == nil {
				if have {
					t.Fatalf("%s: extracted %+v, encoding/json has none", c.Key, v)
				}
				continue
			}
			if !have {
				t.Fatalf("%s: missing, encoding/json has %v", c.Key, rv)
			}
			switch c.Kind {
			case sample.KindString:
				if string(v.Bytes) != rv.(string) {
					t.Fatalf("%s: %q vs %q", c.Key, v.Bytes, rv)
				}
				// The mark lets text fields skip their own check: it must never lie.
				if !v.UTF8 || !utf8.Valid(v.Bytes) {
					t.Fatalf("%s: %q marked UTF8 %v", c.Key, v.Bytes, v.UTF8)
				}
			case sample.KindJSON:
				var got any
				d := json.NewDecoder(bytes.NewReader(v.Bytes))
				d.UseNumber()
				if err := d.Decode(&got); err != nil || !reflect.DeepEqual(got, rv) {
					t.Fatalf("%s: %s decodes to %v (%v), want %v", c.Key, v.Bytes, got, err, rv)
				}
				var cb bytes.Buffer
				if json.Compact(&cb, v.Bytes) != nil || !bytes.Equal(cb.Bytes(), v.Bytes) {
					t.Fatalf("%s: %s is not compact", c.Key, v.Bytes)
				}
			case sample.KindFloat:
				want, _ := rv.(json.Number).Float64()
				if v.Float != want {
					t.Fatalf("%s: %v vs %v", c.Key, v.Float, want)
				}
			case sample.KindInt:
				var want int64
				switch r := rv.(type) {
				case bool:
					if r {
						want = 1
					}
				case json.Number:
					n, err := r.Int64()
					if err != nil {
						fl, _ := r.Float64()
						n = int64(fl)
					}
					want = n
				}
				if v.Int != want {
					t.Fatalf("%s: %v vs %v", c.Key, v.Int, want)
				}
			}
		}
	}
}

func lookup(v any, path string) (any, bool) {
	for _, seg := range strings.Split(path, ".") {
		switch m := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = m[seg]; !ok {
				return nil, false
			}
		case []any:
			if seg != "0" || len(m) == 0 {
				return nil, false
			}
			v = m[0]
		default:
			return nil, false
		}
	}
	return v, true
}

// FuzzStr checks the string scanner's fast path against its careful path: the same strings
// are accepted, ending at the same byte, with the same escape flag.
func FuzzStr(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"` + strings.Repeat("x", 100) + `\n` + strings.Repeat("é", 30) + `"`,
		`"` + strings.Repeat(`\\`, 40) + `"x`, `"` + strings.Repeat("y", 40) + "\x01\"", `"` + strings.Repeat("z", 33) + `\u12G4"`,
		"\"" + strings.Repeat("w", 50) + "\xff\"", `"` + strings.Repeat("v", 60) + `\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '"' {
			return
		}
		fast, slow := &scanner{b: b}, &scanner{b: b}
		escF, errF := fast.str()
		escS, errS := slow.strSlow()
		if (errF == nil) != (errS == nil) {
			t.Fatalf("%q: fast path error %v, careful path error %v", b, errF, errS)
		}
		if errF == nil && (fast.i != slow.i || escF != escS) {
			t.Fatalf("%q: fast path ends at %d (escaped %v), careful path at %d (escaped %v)", b, fast.i, escF, slow.i, escS)
		}
		if errF != nil && errF.Error() != errS.Error() {
			t.Fatalf("%q: errors differ: %v vs %v", b, errF, errS)
		}
	})
}

// strSeeds are string bodies for the string scanner's and unescape's fast paths: every
// script's byte pattern, escapes, and each kind of bad byte.
var strSeeds = []string{
	"Аппетит приходит... и уходит,\\n\\t\\t-- Евгений", "a😀b漢字cд\\u00e9\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\r",
	"plain ascii text long enough for words", "\xd0", "\xd0\x28", "\x80", "\xc1\xbf", "\xe0\x80\xaf",
	"\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf0\x9f\x98", "\x1f", "\\q", "\\u12G4", "\\ud83d", "\\ude00x",
	"\\ud83d\\u0041", "ж\\", "é\"", "\xff",
}

// TestStrAlignments runs the string scanner's fast path against its careful path (and the
// unescaped text against encoding/json) for each seed at every offset in two words, alone,
// repeated, and amid Cyrillic and ASCII text.
func TestStrAlignments(t *testing.T) {
	for _, body := range strSeeds {
		for pad := range 17 {
			for _, b := range []string{strings.Repeat("x", pad) + body, "é" + strings.Repeat("x", pad) + body + strings.Repeat("z", 24),
				strings.Repeat("ж", pad) + body + strings.Repeat("ы", 9),
				strings.Repeat(body+strings.Repeat("y", pad), 3)} {
				checkStr(t, []byte(`"`+b+`"`))
				checkStr(t, []byte(`"`+b))
			}
		}
	}
}

// checkStr compares str with strSlow on b, a string at the start of a line, and what
// unescape makes of the strings they accept with encoding/json.
func checkStr(t *testing.T, b []byte) {
	t.Helper()
	fast, slow := &scanner{b: b, rec: true}, &scanner{b: b}
	escF, errF := fast.str()
	escS, errS := slow.strSlow()
	if (errF == nil) != (errS == nil) || errF != nil && errF.Error() != errS.Error() {
		t.Fatalf("%q: fast path error %v, careful path error %v", b, errF, errS)
	}
	if errF != nil {
		return
	}
	if fast.i != slow.i || escF != escS {
		t.Fatalf("%q: fast path ends at %d (escaped %v), careful path at %d (escaped %v)", b, fast.i, escF, slow.i, escS)
	}
	// The text is what encoding/json decodes.
	raw := b[1 : fast.i-1]
	got, errG := unescape([]byte("abc"), raw)
	// With room after the text (as in the arena) unescape copies a word at a time.
	roomy, errR := unescape(append(make([]byte, 0, len(raw)+3), "abc"...), raw)
	if (errR == nil) != (errG == nil) || errG == nil && !bytes.Equal(roomy, got) {
		t.Fatalf("%q: unescape with room gives %q (%v), without %q (%v)", raw, roomy, errR, got, errG)
	}
	// The escapes the fast path recorded on its pass decode to the same text.
	if !fast.slow {
		if len(fast.escs) > 0 != escF {
			t.Fatalf("%q: %d escapes recorded, escaped %v", raw, len(fast.escs), escF)
		}
		for _, room := range []int{0, len(raw) + 3} {
			at, errA := unescapeAt(append(make([]byte, 0, room), "abc"...), b, 1, fast.i-1, fast.escs)
			if (errA == nil) != (errG == nil) || errG != nil && errA.Error() != errG.Error() || errG == nil && !bytes.Equal(at, got) {
				t.Fatalf("%q: unescapeAt gives %q (%v), unescape %q (%v)", raw, at, errA, got, errG)
			}
		}
	}
	var want string
	if err := json.Unmarshal(b[:fast.i], &want); err != nil {
		t.Fatalf("%q: accepted, but encoding/json fails: %v", b[:fast.i], err)
	}
	// An unpaired surrogate is an error here; encoding/json replaces it with U+FFFD.
	if errG != nil && !strings.ContainsRune(want, utf8.RuneError) {
		t.Fatalf("%q: unescape error %v, encoding/json gives %q", raw, errG, want)
	}
	if errG == nil && string(got) != "abc"+want {
		t.Fatalf("%q: unescape gives %q, encoding/json %q", raw, got, want)
	}
}

// FuzzStrText checks the string scanner's fast path against its careful path, and the
// unescaped text against encoding/json, on any string.
func FuzzStrText(f *testing.F) {
	for _, s := range strSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkStr(t, append([]byte{'"'}, b...))
	})
}
