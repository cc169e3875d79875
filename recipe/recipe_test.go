package recipe

import (
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func parseValid(t *testing.T, src string, vars map[string]string) *Recipe {
	t.Helper()
	r, err := Parse([]byte(src), env(vars))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	r.Defaults()
	if err := r.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return r
}

func TestValidRecipe(t *testing.T) {
	r := parseValid(t, `
source:
  type: images
  path: ${DATA}/train
fields:
  - name: image
    type: image
    mode: smart
    max_resolution: 256
  - name: label
    type: int
output: ${OUT:-out}/train.mldf
page_size: 4MiB
max_errors: 1%
`, map[string]string{"DATA": "/data"})
	if r.Source.Path != "/data/train" || r.Output != "out/train.mldf" || r.PageSize != 4<<20 {
		t.Fatalf("got %+v", r)
	}
	if f := r.Fields[0]; f.JPEGQuality != 90 || f.Filter != "box" || f.From != "image" {
		t.Fatalf("defaults not applied: %+v", f)
	}
	if r.Rejects != "out/train.mldf.rejects.jsonl" || !*r.Checksums || r.OnError != "skip" {
		t.Fatalf("run defaults: %+v", r)
	}
}

// Every problem is reported at once, each with its line.
func TestAllProblemsWithLines(t *testing.T) {
	src := `source:
  type: images
  path: x
  colour: red
fields:
  - name: image
    type: image
    jpeg_quality: 0
    mode: fancy
  - name: image
    type: int
    max_resolution: 3
  - name: t
    type: nosuch
output: o.mldf
page_size: 3000
workers: many
on_error: explode
max_errors: lots
`
	// Unknown keys and wrong types come with the semantic problems, not in a first phase
	// of their own.
	r, err := Parse([]byte(src), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	r.Defaults()
	err = r.Validate()
	if !errors.Is(err, ErrRecipe) {
		t.Fatalf("want ErrRecipe, got %v", err)
	}
	for _, want := range []string{
		`line 4: source: unknown key "colour"`,
		`line 8: field "image": jpeg_quality 0 must be 1..100`,
		`line 9: field "image": mode: "fancy"`,
		`line 10: field "image" is defined twice`,
		`line 12: field "image": max_resolution does not apply to a int field`,
		`line 14: field "t": type "nosuch"`,
		`line 16: page_size 3000`,
		`line 17: workers: "many" is not an integer`,
		`line 18: on_error: "explode"`,
		`line 19: max_errors`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}

func TestEnv(t *testing.T) {
	r, err := Parse([]byte("source:\n  type: images\n  path: ${NOPE}\n"), env(nil))
	if err == nil {
		r.Defaults()
		err = r.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "line 3: environment variable NOPE is not set") {
		t.Fatalf("got %v", err)
	}
}

func TestSourceRules(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"source: {type: tar}\nfields: [{name: a, type: bytes}]\noutput: o", "needs at least one input"},
		{"source: {type: images}\nfields: [{name: a, type: bytes}]\noutput: o", "source.path is required"},
		{"source: {type: jsonl, inputs: [a]}\nfields: [{name: a, type: packed}]\noutput: o", "seq_len is required"},
		{"source: {type: images, path: p}\nfields: [{name: a, type: audio}]\noutput: o\nformat: beton", "cannot store a audio field"},
		{"source: {type: images, path: p}\nfields: [{name: a, type: image, mode: png}]\noutput: o\nformat: beton", "use mode jpeg, smart or raw"},
		{"source: {type: images, path: p}\nfields: [{name: a, type: image, channels: '1'}]\noutput: o\nformat: beton", "3-channel RGB"},
		{"source: {type: images, path: p}\nfields: [{name: a_very_long_field_name, type: int}]\noutput: o\nformat: beton", "at most 16 bytes"},
		{"source: {type: images, path: p}\nfields: []\n", "output is required"},
		{"source: {type: images, path: p}\nfields: [{name: a, type: int}]\noutput: o\nshard: 3\nshards: 2", "shard 3 of 2"},
		{"source: {type: jsonl, inputs: [a]}\nfields: [{name: a, type: int, from: k}, {name: b, type: text, from: k}]\noutput: o", `key "k" is read as an integer by another field and as a string here`},
	} {
		r, err := Parse([]byte(c.src), env(nil))
		if err == nil {
			r.Defaults()
			err = r.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.src, err, c.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"4096": 4096, "2MiB": 2 << 20, "64K": 64 << 10, "1GiB": 1 << 30, "8 MB": 8 << 20} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "x", "-1", "2TiBB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("source: {type: images, path: p}\nfields: [{name: a, type: int}]\noutput: o\n"))
	f.Add([]byte("fields:\n  - name: ${X:-y}\n    type: image\n    jpeg_quality: 500\n"))
	f.Add([]byte("page_size: 2MiB\nmax_errors: 5%\n"))
	f.Add([]byte("base: &b {type: int}\nfields: [{<<: *b, name: a, jpeg_quality: 90.5}, *b]\nworkers: [1]\n"))
	f.Add([]byte("source: {type: images, path: p, flat: yes, <<: [{x: 1}]}\n? [a]\n: b\nshape: [1, -2]\n"))
	f.Add([]byte("fields:\n  - name: x\n    type: ndarray\n    shape: [3, 1e3]\n    pad_id: ~\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		r, err := Parse(src, env(map[string]string{"X": "1"}))
		if err != nil {
			return
		}
		r.Defaults()
		_ = r.Validate()
	})
}

// Each problem is reported once.
func TestProblemsNotRepeated(t *testing.T) {
	r, err := Parse([]byte("source: {type: jsonl, inputs: [a]}\nfields: [{name: a, type: int, from: k}, {name: b, type: text, from: k}]\noutput: o\n"), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	r.Defaults()
	err = r.Validate()
	if err == nil || strings.Count(err.Error(), `key "k" is read as`) != 1 {
		t.Fatalf("want the problem exactly once, got %v", err)
	}
}

// direct_io: false turns direct writes off; unset it stays nil (the default, direct where
// the file system takes it) and is left out of the marshalled recipe, which the recipe's
// hash is taken of, so recipes without it hash as before.
func TestDirectIO(t *testing.T) {
	const base = "source: {type: images, path: p}\noutput: o.mldf\nfields: [{name: a, type: int}]\n"
	for _, c := range []struct {
		src  string
		want *bool
	}{
		{base, nil},
		{base + "direct_io: false\n", new(bool)},
		{base + "direct_io: true\n", func() *bool { b := true; return &b }()},
		{base + "direct_io:\n", nil},
	} {
		r := parseValid(t, c.src, nil)
		if (r.DirectIO == nil) != (c.want == nil) || (r.DirectIO != nil && *r.DirectIO != *c.want) {
			t.Errorf("%q: DirectIO %v, want %v", c.src, r.DirectIO, c.want)
		}
		b, err := yaml.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(b), "direct_io"); got != (c.want != nil) {
			t.Errorf("%q: marshalled with direct_io %v:\n%s", c.src, got, b)
		}
	}
}
