package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
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
	cols := []Column{
		{Key: "text", Kind: sample.KindString},
		{Key: "a.b", Kind: sample.KindJSON},
		{Key: "n", Kind: sample.KindFloat},
		{Key: "i", Kind: sample.KindInt},
		{Key: "arr.0", Kind: sample.KindJSON},
	}
	x, err := newExtractor(cols)
	if err != nil {
		f.Fatal(err)
	}
	sc := &scanner{}
	f.Fuzz(func(t *testing.T, line []byte) {
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
	})
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
