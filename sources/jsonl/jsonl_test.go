package jsonl

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"go.uber.org/goleak"
	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const fixtures = "../../testdata/text"
const shared = "../../../shared/testdata/mini/text/jsonl"

func collect(t testing.TB, src *Source) []sample.Sample {
	t.Helper()
	var out []sample.Sample
	if err := src.Run(context.Background(), func(s sample.Sample) error {
		out = append(out, s)
		return nil
	}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out
}

func mustNew(t testing.TB, paths []string, cols []Column, opt Options) *Source {
	t.Helper()
	s, err := New(paths, cols, opt)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func write(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var textLabel = []Column{
	{Key: "text", Kind: sample.KindString, Required: true},
	{Key: "label", Kind: sample.KindInt, Required: true},
	{Key: "meta.lang", Name: "lang", Kind: sample.KindString},
}

func TestBrokenFixture(t *testing.T) {
	path := filepath.Join(fixtures, "broken.jsonl")
	got := collect(t, mustNew(t, []string{path}, textLabel, Options{}))
	type want struct {
		line int64
		err  error
		key  string
		text string
	}
	wants := []want{
		{1, nil, "", "ok line"},
		{3, ErrSyntax, "", ""},      // missing closing brace
		{4, ErrMissing, "text", ""}, // no "text"
		{5, ErrType, "text", ""},    // text is a number
		{7, ErrUTF8, "text", ""},    // \ud800 alone
		{8, ErrSyntax, "", ""},      // an array, not an object
		{9, ErrSyntax, "", ""},      // garbage after the object
		{10, ErrValue, "label", ""}, // 6.5 is not an integer
		{11, nil, "", "last good"},  // good
		{12, ErrUTF8, "text", ""},   // \xff\xfe
		{13, ErrSyntax, "", ""},     // raw NUL inside a string
		{14, ErrSyntax, "", ""},     // truncated last line, no newline
	}
	if len(got) != len(wants) {
		for _, s := range got {
			t.Logf("%s: %v", s.Key, s.Err)
		}
		t.Fatalf("got %d samples, want %d", len(got), len(wants))
	}
	for i, w := range wants {
		s := got[i]
		key := fmt.Sprintf("%s:%d", path, w.line)
		if s.Key != key || s.Origin != key || s.Index != int64(i) {
			t.Errorf("sample %d: key %q origin %q index %d, want %q, %d", i, s.Key, s.Origin, s.Index, key, i)
		}
		if w.err == nil {
			if s.Err != nil {
				t.Errorf("%s: unexpected error %v", key, s.Err)
			} else if g := string(s.Value("text").Bytes); g != w.text {
				t.Errorf("%s: text %q, want %q", key, g, w.text)
			}
			continue
		}
		var le *LineError
		if !errors.As(s.Err, &le) || !errors.Is(s.Err, w.err) {
			t.Errorf("%s: error %v, want %v", key, s.Err, w.err)
			continue
		}
		if le.Line != w.line || le.File != path || le.Key != w.key {
			t.Errorf("%s: LineError %+v, want line %d key %q", key, le, w.line, w.key)
		}
		if !strings.Contains(s.Err.Error(), key) {
			t.Errorf("%s: message %q does not name file:line", key, s.Err)
		}
	}
	if l := got[0].Value("lang"); string(l.Bytes) != "en" || l.Kind != sample.KindString {
		t.Errorf("meta.lang = %+v", l)
	}
	if v := got[8].Value("label"); v.Kind != sample.KindInt || v.Int != 7 {
		t.Errorf("label = %+v", v)
	}
}

// reference decodes line with encoding/json and returns the value at a dotted path.
func reference(line []byte, path string) (any, bool) {
	var v any
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return nil, false
	}
	for _, seg := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return v, true
}

func TestRealFilesMatchEncodingJSON(t *testing.T) {
	cases := []struct {
		file  string
		lines int
		cols  []Column
	}{
		{"real/gsm8k_test.jsonl", 1319, []Column{{Key: "question", Kind: sample.KindString, Required: true}, {Key: "answer", Kind: sample.KindString, Required: true}}},
		{"real/humaneval_HumanEval.jsonl.gz", 164, []Column{{Key: "prompt", Kind: sample.KindString, Required: true}, {Key: "task_id", Kind: sample.KindString, Required: true}, {Key: "test", Kind: sample.KindString}}},
		{"fortunes_ru_head200.jsonl", 0, []Column{{Key: "text", Kind: sample.KindString, Required: true}, {Key: "lang", Kind: sample.KindString}}},
		{"fortunes_en_riddles.jsonl", 0, []Column{{Key: "text", Kind: sample.KindString, Required: true}, {Key: "id", Kind: sample.KindString}}},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			path := filepath.Join(shared, c.file)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("shared testdata absent: %v", err)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(path, ".gz") {
				zr, err := gzip.NewReader(bytes.NewReader(raw))
				if err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				if _, err := b.ReadFrom(zr); err != nil {
					t.Fatal(err)
				}
				raw = b.Bytes()
			}
			lines := bytes.Split(bytes.TrimRight(raw, "\n"), []byte("\n"))
			got := collect(t, mustNew(t, []string{path}, c.cols, Options{Workers: 2, ChunkSize: 8 << 10}))
			if c.lines > 0 && len(got) != c.lines {
				t.Fatalf("%d samples, want %d", len(got), c.lines)
			}
			if len(got) != len(lines) {
				t.Fatalf("%d samples for %d lines", len(got), len(lines))
			}
			for i, s := range got {
				if s.Err != nil {
					t.Fatalf("line %d: %v", i+1, s.Err)
				}
				for _, col := range c.cols {
					ref, ok := reference(lines[i], col.Key)
					v, have := s.Get(col.Key)
					if ok != have || ok && ref.(string) != string(v.Bytes) {
						t.Fatalf("line %d key %s: got %q, encoding/json %q", i+1, col.Key, v.Bytes, ref)
					}
				}
			}
		})
	}
}

func TestCompressedAndGlobsInOrder(t *testing.T) {
	cols := []Column{{Key: "question", Kind: sample.KindString, Required: true}}
	// The zst file holds GSM8K lines 9..12, the plain one lines 1..8.
	got := collect(t, mustNew(t, []string{filepath.Join(fixtures, "gsm8k_head8.jsonl"), filepath.Join(fixtures, "*.zst")}, cols, Options{}))
	if len(got) != 12 {
		t.Fatalf("%d samples, want 12", len(got))
	}
	for i, s := range got {
		if s.Err != nil || s.Index != int64(i) {
			t.Fatalf("sample %d: %v (index %d)", i, s.Err, s.Index)
		}
	}
	if !strings.HasSuffix(got[8].Key, "gsm8k_9to12.jsonl.zst:1") {
		t.Errorf("sample 8 key %q", got[8].Key)
	}
	gz := collect(t, mustNew(t, []string{filepath.Join(fixtures, "*.gz")}, []Column{
		{Key: "task_id", Kind: sample.KindString, Required: true},
		{Key: "entry_point", Kind: sample.KindString, Required: true},
	}, Options{}))
	if len(gz) != 3 || string(gz[2].Value("task_id").Bytes) != "HumanEval/2" || gz[0].Err != nil {
		t.Fatalf("gzip fixture: %d samples, %+v", len(gz), gz)
	}

	// Order is the order given; a glob's matches are sorted; a file named twice is read once.
	dir := t.TempDir()
	for _, n := range []string{"b.jsonl", "a.jsonl", "c.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(`{"question":"`+n+`"}`+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := mustNew(t, []string{filepath.Join(dir, "c.jsonl"), filepath.Join(dir, "*.jsonl")}, cols, Options{})
	var names []string
	for _, s := range collect(t, src) {
		names = append(names, string(s.Value("question").Bytes))
	}
	if want := []string{"c.jsonl", "a.jsonl", "b.jsonl"}; !reflect.DeepEqual(names, want) {
		t.Errorf("order %v, want %v", names, want)
	}
	if _, err := New([]string{filepath.Join(dir, "*.none")}, cols, Options{}); !errors.Is(err, ErrNoFiles) {
		t.Errorf("empty glob: %v", err)
	}
	if _, err := New([]string{filepath.Join(dir, "missing.jsonl")}, cols, Options{}); err == nil {
		t.Error("missing file accepted")
	}
}

func TestValueKinds(t *testing.T) {
	line := `{"s":"a\u00e9\ud83d\ude00\n","i":-42,"big":9223372036854775807,"f":1.5e3,"fi":3.0,` +
		`"j":{ "x" : [1, 2, {"y": "a b"}] },"js":"str","b":"aGVsbG8=","braw":"aGVsbG8","t":true,` +
		`"n":null,"arr":[{"c":"zero"},{"c":"one"}],"dup":1,"dup":2,"e\u0073c":"escaped key"}`
	cases := []struct {
		col  Column
		want sample.Value
		err  error
	}{
		{Column{Key: "s", Kind: sample.KindString}, sample.Value{Kind: sample.KindString, UTF8: true, Bytes: []byte("aé😀\n")}, nil},
		{Column{Key: "i", Kind: sample.KindInt}, sample.Value{Kind: sample.KindInt, Int: -42}, nil},
		{Column{Key: "big", Kind: sample.KindInt}, sample.Value{Kind: sample.KindInt, Int: 9223372036854775807}, nil},
		{Column{Key: "fi", Kind: sample.KindInt}, sample.Value{Kind: sample.KindInt, Int: 3}, nil},
		{Column{Key: "t", Kind: sample.KindInt}, sample.Value{Kind: sample.KindInt, Int: 1}, nil},
		{Column{Key: "f", Kind: sample.KindFloat}, sample.Value{Kind: sample.KindFloat, Float: 1500}, nil},
		{Column{Key: "i", Kind: sample.KindFloat}, sample.Value{Kind: sample.KindFloat, Float: -42}, nil},
		{Column{Key: "j", Kind: sample.KindJSON}, sample.Value{Kind: sample.KindJSON, Bytes: []byte(`{"x":[1,2,{"y":"a b"}]}`)}, nil},
		{Column{Key: "js", Kind: sample.KindJSON}, sample.Value{Kind: sample.KindJSON, Bytes: []byte(`"str"`)}, nil},
		{Column{Key: "b", Kind: sample.KindBytes}, sample.Value{Kind: sample.KindBytes, Bytes: []byte("hello")}, nil},
		{Column{Key: "braw", Kind: sample.KindBytes}, sample.Value{Kind: sample.KindBytes, Bytes: []byte("hello")}, nil},
		{Column{Key: "arr.1.c", Kind: sample.KindString}, sample.Value{Kind: sample.KindString, UTF8: true, Bytes: []byte("one")}, nil},
		{Column{Key: "j.x.2.y", Kind: sample.KindString}, sample.Value{Kind: sample.KindString, UTF8: true, Bytes: []byte("a b")}, nil},
		{Column{Key: "dup", Kind: sample.KindInt}, sample.Value{Kind: sample.KindInt, Int: 2}, nil},
		{Column{Key: "esc", Kind: sample.KindString}, sample.Value{Kind: sample.KindString, UTF8: true, Bytes: []byte("escaped key")}, nil},
		{Column{Key: "n", Kind: sample.KindString}, sample.Value{}, nil}, // null = absent
		{Column{Key: "n", Kind: sample.KindString, Required: true}, sample.Value{}, ErrMissing},
		{Column{Key: "nope.deeper", Kind: sample.KindString, Required: true}, sample.Value{}, ErrMissing},
		{Column{Key: "s.deeper", Kind: sample.KindString, Required: true}, sample.Value{}, ErrMissing},
		{Column{Key: "s", Kind: sample.KindInt}, sample.Value{}, ErrType},
		{Column{Key: "j", Kind: sample.KindString}, sample.Value{}, ErrType},
		{Column{Key: "f", Kind: sample.KindBytes}, sample.Value{}, ErrType},
		{Column{Key: "t", Kind: sample.KindFloat}, sample.Value{}, ErrType},
		{Column{Key: "s", Kind: sample.KindBytes}, sample.Value{}, ErrValue},
		{Column{Key: "f", Kind: sample.KindInt}, sample.Value{Kind: sample.KindInt, Int: 1500}, nil},
	}
	for _, c := range cases {
		x, err := newExtractor([]Column{c.col})
		if err != nil {
			t.Fatal(err)
		}
		var arena arena
		vals, key, err := x.extract(&scanner{}, []byte(line), &arena, nil)
		if !errors.Is(err, c.err) || (err != nil && key != c.col.Key) {
			t.Errorf("%s as %d: error %v (key %q), want %v", c.col.Key, c.col.Kind, err, key, c.err)
			continue
		}
		if err != nil {
			continue
		}
		got, ok := (&sample.Sample{Values: vals}).Get(c.col.Key)
		if !ok && c.want.Kind != sample.KindNone || ok && !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s as %d: got %+v (%q), want %+v", c.col.Key, c.col.Kind, got, got.Bytes, c.want)
		}
	}
	for _, bad := range [][]Column{nil, {{Key: "a..b", Kind: sample.KindString}}, {{Key: "a", Kind: sample.KindFile}},
		{{Key: "a", Kind: sample.KindString}, {Key: "b", Name: "a", Kind: sample.KindString}}} {
		if _, err := newExtractor(bad); !errors.Is(err, ErrColumn) {
			t.Errorf("columns %+v: %v", bad, err)
		}
	}
}

func TestBadLines(t *testing.T) {
	deep := strings.Repeat("[", 200000) + strings.Repeat("]", 200000)
	cases := []struct {
		name, line string
		err        error
	}{
		{"empty object ok", `{}`, ErrMissing},
		{"truncated", `{"text": "abc`, ErrSyntax},
		{"truncated escape", `{"text": "abc\`, ErrSyntax},
		{"bad escape", `{"text": "\x"}`, ErrSyntax},
		{"bad unicode escape", `{"text": "\u12g4"}`, ErrSyntax},
		{"nul outside", "{\"text\": \"a\"\x00}", ErrSyntax},
		{"nul in string", "{\"text\": \"a\x00\"}", ErrSyntax},
		{"escaped nul ok", `{"text": "a\u0000"}`, nil},
		{"deep skipped", `{"other": ` + deep + `, "text": "x"}`, ErrSyntax},
		{"deep wanted", `{"text": ` + deep + `}`, ErrSyntax},
		{"deep but legal", `{"other": ` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `, "text": "x"}`, nil},
		{"single quotes", `{'text': 'x'}`, ErrSyntax},
		{"trailing comma", `{"text": "x",}`, ErrSyntax},
		{"leading zero", `{"text": "x", "n": 01}`, ErrSyntax},
		{"bare minus", `{"text": "x", "n": -}`, ErrSyntax},
		{"bad literal", `{"text": "x", "n": nul}`, ErrSyntax},
		{"NaN", `{"text": "x", "n": NaN}`, ErrSyntax},
		{"two objects", `{"text": "x"}{"text": "y"}`, ErrSyntax},
		{"latin1 key", "{\"t\xe9xt\": \"x\", \"text\": \"y\"}", ErrUTF8},
		{"invalid utf8 in value", "{\"text\": \"\xc3\x28\"}", ErrUTF8},
		{"overlong utf8", "{\"text\": \"\xc0\xaf\"}", ErrUTF8},
		{"surrogate bytes", "{\"text\": \"\xed\xa0\x80\"}", ErrUTF8},
		{"lone low surrogate", `{"text": "\udc00"}`, ErrUTF8},
		{"crlf ok", "{\"text\": \"x\"}\r", nil},
		{"bom inside line", "\xef\xbb\xbf{\"text\": \"x\"}", ErrSyntax},
		{"string top", `"text"`, ErrSyntax},
		// Long strings, read a word of eight bytes at a time: every kind of bad byte at
		// every position of a word.
		{"cyrillic ok", `{"id": "x", "text": "` + strings.Repeat("Аппетит приходит\\n\\t", 9) + `"}`, nil},
		{"cyrillic with a bad byte", "{\"text\": \"" + strings.Repeat("Аппетит ", 5) + "\xd0\x28" + strings.Repeat("ж", 9) + "\"}", ErrUTF8},
		{"lead before the quote", "{\"text\": \"" + strings.Repeat("abcdefg", 3) + "\xd0\"}", ErrUTF8},
		{"lead before an escape", "{\"text\": \"" + strings.Repeat("abcdefg", 3) + "\xd0\\n\"}", ErrUTF8},
		{"lone continuation", "{\"text\": \"" + strings.Repeat("abcdefgh", 3) + "\x80abcdefgh\"}", ErrUTF8},
		{"C1 lead", "{\"text\": \"" + strings.Repeat("abcdefgh", 3) + "\xc1\xbfabcdefgh\"}", ErrUTF8},
		{"overlong three bytes", "{\"text\": \"" + strings.Repeat("abcdefgh", 3) + "\xe0\x80\xafabcdefgh\"}", ErrUTF8},
		{"above U+10FFFF", "{\"text\": \"" + strings.Repeat("abcdefgh", 3) + "\xf4\x90\x80\x80abcdefgh\"}", ErrUTF8},
		{"control in a long string", "{\"text\": \"" + strings.Repeat("ЖЖЖЖ", 6) + "\x1f" + strings.Repeat("ЖЖЖЖ", 6) + "\"}", ErrSyntax},
		{"bad escape in a long string", `{"text": "` + strings.Repeat("ЖЖЖЖ", 6) + `\q` + strings.Repeat("ЖЖЖЖ", 6) + `"}`, ErrSyntax},
		{"unterminated long string", `{"text": "` + strings.Repeat("ЖЖЖЖ", 6) + `\"`, ErrSyntax},
		{"emoji and CJK ok", `{"text": "` + strings.Repeat("a😀b漢字cд\\u00e9\\ud83d\\ude00", 5) + `"}`, nil},
		{"lone surrogate in a long string", `{"text": "` + strings.Repeat("ЖЖЖЖ", 6) + `\ud83d` + strings.Repeat("ЖЖЖЖ", 6) + `"}`, ErrUTF8},
	}
	x, err := newExtractor([]Column{{Key: "text", Kind: sample.KindString, Required: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		var arena arena
		_, _, err := x.extract(&scanner{}, []byte(c.line), &arena, nil)
		if !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.err)
		}
	}
}

func TestLongLines(t *testing.T) {
	big := strings.Repeat("x", 50<<20)
	var b bytes.Buffer
	b.WriteString("{\"text\": \"first\"}\n")
	b.WriteString(`{"text": "` + big + "\"}\n")
	b.WriteString("{\"text\": \"after\"}\n")
	path := write(t, "long.jsonl", b.Bytes())
	cols := []Column{{Key: "text", Kind: sample.KindString, Required: true}}

	got := collect(t, mustNew(t, []string{path}, cols, Options{Workers: 2}))
	if len(got) != 3 || got[1].Err != nil || len(got[1].Value("text").Bytes) != len(big) || string(got[2].Value("text").Bytes) != "after" {
		t.Fatalf("50 MB line with defaults: %d samples, err %v", len(got), got[1].Err)
	}
	got = nil

	// With a 1 MiB limit the line is an error and the lines around it survive, both when the
	// reader has to skip it and when it arrives whole inside one chunk.
	for _, chunk := range []int{64 << 10, 64 << 20} {
		got := collect(t, mustNew(t, []string{path}, cols, Options{Workers: 2, MaxLineSize: 1 << 20, ChunkSize: chunk}))
		if len(got) != 3 || !errors.Is(got[1].Err, ErrLineTooLong) || !strings.Contains(got[1].Err.Error(), path+":2") ||
			string(got[0].Value("text").Bytes) != "first" || string(got[2].Value("text").Bytes) != "after" || got[2].Key != path+":3" {
			t.Fatalf("chunk %d: %d samples: %+v", chunk, len(got), got)
		}
	}
	// An overlong last line without a newline.
	path2 := write(t, "longlast.jsonl", []byte("{\"text\": \"a\"}\n"+`{"text": "`+strings.Repeat("y", 3<<20)))
	got = collect(t, mustNew(t, []string{path2}, cols, Options{MaxLineSize: 1 << 20, ChunkSize: 64 << 10}))
	if len(got) != 2 || got[0].Err != nil || !errors.Is(got[1].Err, ErrLineTooLong) {
		t.Fatalf("overlong last line: %+v", got)
	}
}

// genCorpus builds a deterministic JSONL corpus with varied line lengths, blank lines, bad
// lines and multi-byte text.
func genCorpus(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	words := []string{"the", "model", "дом", "語", "token", "\\n", "\\\"q\\\"", "\\u00e9", "data", "x"}
	var b bytes.Buffer
	for i := range n {
		switch r.IntN(50) {
		case 0:
			b.WriteString("\n")
			continue
		case 1:
			b.WriteString("{\"text\": broken\n")
			continue
		case 2:
			fmt.Fprintf(&b, "{\"id\": %d}\n", i)
			continue
		}
		var t strings.Builder
		for range r.IntN(400) + 1 {
			t.WriteString(words[r.IntN(len(words))])
			t.WriteByte(' ')
		}
		fmt.Fprintf(&b, `{"id": %d, "text": "%s", "meta": {"score": %d.%d, "tags": ["a", {"k": %d}]}}`+"\n", i, t.String(), r.IntN(100), r.IntN(100), i)
	}
	return b.Bytes()
}

func TestWorkerCountInvariant(t *testing.T) {
	path := write(t, "corpus.jsonl", genCorpus(6000, 7))
	cols := []Column{
		{Key: "text", Kind: sample.KindString, Required: true},
		{Key: "id", Kind: sample.KindInt, Required: true},
		{Key: "meta.score", Name: "score", Kind: sample.KindFloat},
		{Key: "meta.tags", Name: "tags", Kind: sample.KindJSON},
	}
	base := collect(t, mustNew(t, []string{path}, cols, Options{Workers: 1}))
	if len(base) < 5000 {
		t.Fatalf("only %d samples", len(base))
	}
	for _, o := range []Options{{Workers: 2, ChunkSize: 4 << 10}, {Workers: 4, ChunkSize: 1000}, {Workers: 8, ChunkSize: 100}, {Workers: 3},
		{Workers: 2, ChunkLines: 1}, {Workers: 3, ChunkSize: 64 << 10, ChunkLines: 7}} {
		got := collect(t, mustNew(t, []string{path}, cols, o))
		if len(got) != len(base) {
			t.Fatalf("%+v: %d samples, want %d", o, len(got), len(base))
		}
		for i := range got {
			a, b := got[i], base[i]
			if a.Key != b.Key || a.Index != b.Index || fmt.Sprint(a.Err) != fmt.Sprint(b.Err) || !reflect.DeepEqual(a.Values, b.Values) || a.InputBytes != b.InputBytes {
				t.Fatalf("%+v: sample %d differs: %+v vs %+v", o, i, a, b)
			}
		}
	}
}

func TestEmitErrorAndCancel(t *testing.T) {
	path := write(t, "corpus.jsonl", genCorpus(3000, 3))
	cols := []Column{{Key: "text", Kind: sample.KindString}}
	src := mustNew(t, []string{path}, cols, Options{Workers: 2, ChunkSize: 4 << 10})
	stop := errors.New("stop")
	n := 0
	err := src.Run(context.Background(), func(sample.Sample) error {
		n++
		if n == 100 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 100 {
		t.Fatalf("emit error: %v after %d", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	err = src.Run(ctx, func(sample.Sample) error {
		n++
		if n == 50 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
}

func TestCorruptCompressedStreamFails(t *testing.T) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(genCorpus(500, 1))
	zw.Close()
	data := b.Bytes()
	path := write(t, "cut.jsonl.gz", data[:len(data)/2])
	err := mustNew(t, []string{path}, []Column{{Key: "text", Kind: sample.KindString}}, Options{}).Run(context.Background(), func(sample.Sample) error { return nil })
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("truncated gzip: %v", err)
	}
}

func TestBOMAndBlankLines(t *testing.T) {
	path := write(t, "bom.jsonl", []byte("\xef\xbb\xbf{\"text\": \"a\"}\r\n\r\n  \n{\"text\": \"b\"}"))
	got := collect(t, mustNew(t, []string{path}, []Column{{Key: "text", Kind: sample.KindString, Required: true}}, Options{}))
	if len(got) != 2 || got[0].Err != nil || got[1].Err != nil || got[1].Key != path+":4" || string(got[1].Value("text").Bytes) != "b" {
		t.Fatalf("%+v", got)
	}
}

func TestCompressedWorkerInvariant(t *testing.T) {
	raw := genCorpus(3000, 11)
	var gz, zs bytes.Buffer
	gw := kgzip.NewWriter(&gz)
	gw.Write(raw)
	gw.Close()
	zw, _ := zstd.NewWriter(&zs)
	zw.Write(raw)
	zw.Close()
	cols := []Column{{Key: "text", Kind: sample.KindString, Required: true}, {Key: "meta.tags", Kind: sample.KindJSON}}
	plain := collect(t, mustNew(t, []string{write(t, "c.jsonl", raw)}, cols, Options{Workers: 1}))
	for _, f := range []string{write(t, "c.jsonl.gz", gz.Bytes()), write(t, "c.jsonl.zst", zs.Bytes())} {
		for _, w := range []int{1, 3} {
			got := collect(t, mustNew(t, []string{f}, cols, Options{Workers: w, ChunkSize: 16 << 10}))
			if len(got) != len(plain) {
				t.Fatalf("%s workers %d: %d samples, want %d", f, w, len(got), len(plain))
			}
			for i := range got {
				if !reflect.DeepEqual(got[i].Values, plain[i].Values) || (got[i].Err == nil) != (plain[i].Err == nil) {
					t.Fatalf("%s workers %d: sample %d differs", f, w, i)
				}
			}
		}
	}
}

// TestMemoryBounded reads a 48 MB file and checks that the heap stays far below the file
// size: chunks in flight are bounded and their buffers recycled.
func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("large input")
	}
	var b bytes.Buffer
	for i := 0; b.Len() < 48<<20; i++ {
		fmt.Fprintf(&b, `{"id": %d, "text": "%s"}`+"\n", i, strings.Repeat("word ", 40+i%200))
	}
	path := write(t, "big.jsonl", b.Bytes())
	b = bytes.Buffer{}
	runtime.GC()
	var ms runtime.MemStats
	var peak uint64
	n := 0
	src := mustNew(t, []string{path}, []Column{{Key: "text", Kind: sample.KindString, Required: true}}, Options{Workers: 2, ChunkSize: 256 << 10})
	if err := src.Run(context.Background(), func(s sample.Sample) error {
		if n++; n%4000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
		return s.Err
	}); err != nil {
		t.Fatal(err)
	}
	if peak > 32<<20 {
		t.Fatalf("heap in use reached %d MB reading a 48 MB file", peak>>20)
	}
	t.Logf("%d lines, peak heap in use %.1f MB", n, float64(peak)/(1<<20))
}

func TestNewChecksFiles(t *testing.T) {
	cols := []Column{{Key: "text", Kind: sample.KindString}}
	bad := write(t, "bad.jsonl.gz", []byte{0x1f, 0x8b, 0xff, 0xff, 0, 0})
	if _, err := New([]string{bad}, cols, Options{}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("corrupt gzip header: %v", err)
	}
	if os.Getuid() != 0 {
		locked := write(t, "locked.jsonl", []byte("{}\n"))
		os.Chmod(locked, 0)
		if _, err := New([]string{locked}, cols, Options{}); !errors.Is(err, os.ErrPermission) {
			t.Errorf("unreadable file: %v", err)
		}
	}
	if _, err := New([]string{t.TempDir()}, cols, Options{}); err == nil {
		t.Error("directory accepted")
	}
	empty := write(t, "empty.jsonl", nil)
	if got := collect(t, mustNew(t, []string{empty}, cols, Options{})); len(got) != 0 {
		t.Errorf("empty file: %d samples", len(got))
	}
}

// TestRange: a range of the files gives their lines, indexed from 0, origins unchanged.
func TestRange(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("{\"t\": \"a%d\"}\n{\"t\": \"b%d\"}\n", i, i)), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	src := mustNew(t, paths, []Column{{Key: "t", Kind: sample.KindString}}, Options{})
	r, err := src.Range(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := r.Run(context.Background(), func(s sample.Sample) error {
		if s.Index != int64(len(got)) {
			t.Fatalf("index %d", s.Index)
		}
		got = append(got, string(s.Value("t").Bytes)+"@"+filepath.Base(s.Origin))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "a1@f1.jsonl:1,b1@f1.jsonl:2,a2@f2.jsonl:1,b2@f2.jsonl:2" {
		t.Fatalf("got %v", got)
	}
	for _, c := range [][2]int{{-1, 1}, {2, 1}, {0, 4}} {
		if _, err := src.Range(c[0], c[1]); !errors.Is(err, ErrRange) {
			t.Errorf("Range%v: %v", c, err)
		}
	}
}

// TestLineNum checks the in-place decimal line counter against strconv across carries.
func TestLineNum(t *testing.T) {
	for _, start := range []int64{1, 9, 98, 999_990, 1<<62 - 5} {
		var d lineNum
		d.set(start)
		for v := start; v < start+20_000; v++ {
			if got, want := string(d.text()), strconv.FormatInt(v, 10); got != want {
				t.Fatalf("from %d: %q, want %q", start, got, want)
			}
			d.inc()
		}
	}
}

// collectBatches runs src.RunBatches and decodes the batches on three goroutines, each
// reusing its own memory from batch to batch; it returns deep copies of the samples, in
// order, numbered like Run's.
func collectBatches(t testing.TB, src *Source) []sample.Sample {
	t.Helper()
	var batches []*[]sample.Sample
	work := make(chan struct {
		b   sources.Batch
		out *[]sample.Sample
	})
	g, ctx := errgroup.WithContext(context.Background())
	for range 3 {
		g.Go(func() error {
			var m sources.Memory
			for w := range work {
				w.b.Decode(&m)
				for _, s := range m.Samples {
					s.Key, s.Origin = strings.Clone(s.Key), strings.Clone(s.Origin)
					vals := make([]sample.Column, len(s.Values))
					for i, c := range s.Values {
						c.Value.Bytes = bytes.Clone(c.Value.Bytes)
						vals[i] = c
					}
					if len(s.Values) == 0 {
						vals = s.Values
					}
					s.Values = vals
					*w.out = append(*w.out, s)
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		defer close(work)
		return src.RunBatches(ctx, func(b sources.Batch) error {
			out := new([]sample.Sample)
			batches = append(batches, out)
			select {
			case work <- struct {
				b   sources.Batch
				out *[]sample.Sample
			}{b, out}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	})
	if err := g.Wait(); err != nil {
		t.Fatalf("RunBatches: %v", err)
	}
	var all []sample.Sample
	for _, b := range batches {
		for _, s := range *b {
			s.Index = int64(len(all))
			all = append(all, s)
		}
	}
	return all
}

// TestBatchesMatchRun checks that the batches RunBatches hands out, decoded into reused
// memory, are the samples Run emits: keys, origins, values (the UTF-8 mark too), input bytes
// and errors, over blank, broken and overlong lines, a value larger than an arena block, a
// BOM, base64 and several files.
func TestBatchesMatchRun(t *testing.T) {
	var long bytes.Buffer
	long.WriteString("\xef\xbb\xbf{\"text\": \"first\", \"id\": 1}\n\n")
	fmt.Fprintf(&long, "{\"text\": \"%s\", \"id\": 2, \"b\": \"aGVsbG8=\"}\n", strings.Repeat("é", 3<<19))
	fmt.Fprintf(&long, "{\"text\": \"%s\", \"id\": 3}\n", strings.Repeat("z", 5<<20))
	long.WriteString("{\"text\": \"after\", \"id\": 4}")
	paths := []string{write(t, "a.jsonl", genCorpus(4000, 5)), write(t, "long.jsonl", long.Bytes()), write(t, "b.jsonl", genCorpus(3000, 9))}
	cols := []Column{
		{Key: "text", Kind: sample.KindString, Required: true},
		{Key: "id", Kind: sample.KindInt, Required: true},
		{Key: "meta.score", Name: "score", Kind: sample.KindFloat},
		{Key: "meta.tags", Name: "tags", Kind: sample.KindJSON},
		{Key: "b", Kind: sample.KindBytes},
	}
	for _, o := range []Options{{}, {Workers: 2, ChunkSize: 64 << 10, MaxLineSize: 4 << 20}, {Workers: 3, ChunkSize: 1000, ChunkLines: 7}} {
		want := collect(t, mustNew(t, paths, cols, o))
		got := collectBatches(t, mustNew(t, paths, cols, o))
		if len(got) != len(want) || len(want) < 6000 {
			t.Fatalf("%+v: %d samples from batches, %d from Run", o, len(got), len(want))
		}
		for i := range got {
			a, b := got[i], want[i]
			if a.Key != b.Key || a.Origin != b.Origin || a.Index != b.Index || fmt.Sprint(a.Err) != fmt.Sprint(b.Err) ||
				!reflect.DeepEqual(a.Values, b.Values) || a.InputBytes != b.InputBytes {
				t.Fatalf("%+v: sample %d differs: %+v vs %+v", o, i, a, b)
			}
		}
	}
}

// TestRunBatchesStops checks that RunBatches returns emit's error, and ctx's error once
// cancelled, without emitting another batch.
func TestRunBatchesStops(t *testing.T) {
	path := write(t, "corpus.jsonl", genCorpus(3000, 3))
	cols := []Column{{Key: "text", Kind: sample.KindString}}
	src := mustNew(t, []string{path}, cols, Options{ChunkSize: 4 << 10, ChunkLines: 200})
	stop := errors.New("stop")
	n := 0
	err := src.RunBatches(context.Background(), func(sources.Batch) error {
		n++
		if n == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 10 {
		t.Fatalf("emit error: %v after %d", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	var m sources.Memory
	err = src.RunBatches(ctx, func(b sources.Batch) error {
		b.Decode(&m)
		if n++; n == 5 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 5 {
		t.Fatalf("cancel: %v after %d", err, n)
	}
}
