package recipe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mldf/convert/internal/inputfile"
)

// validateErr parses and validates src, returning the error (nil when valid).
func validateErr(t *testing.T, src string) error {
	t.Helper()
	r, err := Parse([]byte(src), env(nil))
	if err != nil {
		return err
	}
	r.Defaults()
	return r.Validate()
}

const baseImages = "source: {type: images, path: p}\noutput: o.mldf\n"

// A value of the wrong type is a problem naming its key and line; an integer key refuses a
// number with a fraction instead of truncating it.
func TestTypeProblemsNameKeyAndLine(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{baseImages + "fields:\n  - name: image\n    type: image\n    jpeg_quality: 90.5\n",
			`line 6: field "image": jpeg_quality: "90.5" is not an integer`},
		{baseImages + "fields:\n  - name: image\n    type: image\n    max_resolution: big\n",
			`line 6: field "image": max_resolution: "big" is not an integer`},
		{baseImages + "fields:\n  - name: image\n    type: image\n    max_resolution: '256'\n",
			`line 6: field "image": max_resolution: "256" is not an integer`},
		{baseImages + "fields:\n  - type: image\n    max_pixels: 1.5\n",
			`line 5: fields[0]: max_pixels: "1.5" is not an integer`},
		{baseImages + "fields: [{name: a, type: int}]\nworkers: 2.0\n", `line 4: workers: "2.0" is not an integer`},
		{baseImages + "fields: [{name: a, type: int}]\nworkers: 1e3\n", `line 4: workers: "1e3" is not an integer`},
		{baseImages + "fields: [{name: a, type: int}]\nshards: 99999999999999999999\n", `line 4: shards: "99999999999999999999" is not an integer`},
		{baseImages + "fields: [{name: a, type: int}]\nchecksums: maybe\n", `line 4: checksums: "maybe" is not true or false`},
		{baseImages + "fields: [{name: a, type: int}]\ndirect_io: maybe\n", `line 4: direct_io: "maybe" is not true or false`},
		{baseImages + "fields: [{name: a, type: int}]\ndirect_io: 'false'\n", `line 4: direct_io: "false" is not true or false`},
		{baseImages + "fields: [{name: a, type: int}]\ndirect_io: 0\n", `line 4: direct_io: "0" is not true or false`},
		{baseImages + "fields: [{name: a, type: int}]\ndirect_io: {off: true}\n", `line 4: direct_io: want true or false, got a mapping`},
		{baseImages + "fields: [{name: a, type: int}]\ndirect_oi: false\n", `line 4: unknown key "direct_oi" (did you mean direct_io?)`},
		{baseImages + "fields: [{name: a, type: int}]\npage_size: 2XB\n", `line 4: page_size: "2XB" is not a size`},
		{"source: {type: images, path: p}\nfields: [{name: a, type: int}]\noutput: [a, b]\n", `line 3: output: want a string, got a list`},
		{baseImages + "fields: {name: a, type: int}\n", `line 3: fields: want a list, got a mapping`},
		{"source: [images]\noutput: o\nfields: [{name: a, type: int}]\n", `line 1: source: want a mapping of keys, got a list`},
		{"source: {type: tar, inputs: a.tar}\noutput: o\nfields: [{name: a, type: bytes}]\n", `line 1: source.inputs: want a list, got a value`},
		{"source: {type: images, path: p, flat: 1}\noutput: o\nfields: [{name: a, type: int}]\n", `line 1: source.flat: "1" is not true or false`},
		{baseImages + "fields: [{name: a, type: audio, max_duration: long}]\n", `line 3: field "a": max_duration: "long" is not a number`},
		{baseImages + "fields: [{name: x, type: ndarray, dtype: <f4, shape: [3, -1]}]\n", `line 3: field "x": shape[1]: "-1" is not a non-negative integer`},
		{baseImages + "fields: [{name: x, type: packed, seq_len: 12.5}]\n", `line 3: field "x": seq_len: "12.5" is not an integer`},
		{baseImages + "fields: [{name: a, type: int}]\nworker: 4\n", `line 4: unknown key "worker" (did you mean workers?)`},
		// The nearest known key, not the first within two edits (shard), and a swap is one edit.
		{baseImages + "fields: [{name: a, type: int}]\nshadrs: 4\n", `line 4: unknown key "shadrs" (did you mean shards?)`},
		{baseImages + "fields: [{name: x, type: ndarray, dytpe: <f4, shape: [3]}]\n", `line 3: field "x": unknown key "dytpe" (did you mean dtype?)`},
		{"source: {type: images, path: p}\noutput: o\nfeilds: [{name: a, type: int}]\n", `line 3: unknown key "feilds" (did you mean fields?)`},
		{baseImages + "fields: [{name: a, type: image, max_resolutoin: 256}]\n", `line 3: field "a": unknown key "max_resolutoin" (did you mean max_resolution?)`},
		{baseImages + "fields: [{name: a, type: image, jpg_quality: 90}]\n", `line 3: field "a": unknown key "jpg_quality" (did you mean jpeg_quality?)`},
		{baseImages + "fields: [{name: a, type: int}]\noutput: p.mldf\n", `line 4: output is given twice (also line 2)`},
		{baseImages + "fields: [{name: a, type: int, colour: red}]\n", `line 3: field "a": unknown key "colour"`},
	} {
		err := validateErr(t, c.src)
		if err == nil || !errors.Is(err, ErrRecipe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %q", c.src, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "cannot unmarshal") {
			t.Errorf("%q: yaml's own message: %v", c.src, err)
		}
	}
}

// A refused value is one problem: its default applies for the other checks.
func TestRefusedValueIsOneProblem(t *testing.T) {
	err := validateErr(t, baseImages+"fields:\n  - name: image\n    type: image\n    jpeg_quality: 90.5\n")
	var p Problems
	if !errors.As(err, &p) || len(p) != 1 {
		t.Fatalf("want one problem, got %v", err)
	}
}

// Problems are listed up to MaxProblems, in line order, then counted; thousands of them
// cost time linear in their number.
func TestManyProblemsCapped(t *testing.T) {
	for _, n := range []int{MaxProblems + 1, 40000} {
		var b strings.Builder
		b.WriteString(baseImages + "fields: [{name: a, type: int}]\n")
		for i := range n {
			fmt.Fprintf(&b, "k%d: 1\n", i)
		}
		err := validateErr(t, b.String())
		var p Problems
		if !errors.As(err, &p) || len(p) != MaxProblems+1 {
			t.Fatalf("%d unknown keys: want %d lines, got %d", n, MaxProblems+1, len(p))
		}
		if !strings.HasPrefix(p[0], `line 4: unknown key "k0"`) || p[MaxProblems] != fmt.Sprintf("(and %d more)", n-MaxProblems) {
			t.Fatalf("%d unknown keys: first %q, last %q", n, p[0], p[MaxProblems])
		}
		if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("%d problems (the first %d by line)", n, MaxProblems)) || len(msg) > 400*MaxProblems {
			t.Fatalf("%d unknown keys: message of %d bytes: %.200s", n, len(msg), msg)
		}
	}
}

// Aliases cannot expand a recipe of a few MB into billions of values.
func TestAliasExpansionBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(baseImages + "x: &f {name: a, type: int")
	for i := range 20000 {
		fmt.Fprintf(&b, ", k%d: 1", i)
	}
	b.WriteString("}\nfields: [*f")
	for range 50000 {
		b.WriteString(", *f")
	}
	b.WriteString("]\n")
	if b.Len() > MaxRecipeBytes {
		t.Fatalf("test recipe of %d bytes", b.Len())
	}
	err := validateErr(t, b.String())
	if err == nil || !strings.Contains(err.Error(), "aliases (*name) expand to more values") {
		t.Fatalf("got %.300v", err)
	}
}

// The recipe file is a regular file of at most MaxRecipeBytes; anything else is refused
// before it is read (a named pipe without blocking).
func TestLoadRefusesHostileFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("#"+strings.Repeat(" ", MaxRecipeBytes)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want error
	}{
		{big, ErrTooLarge},
		{fifo, inputfile.ErrNotRegular},
		{"/dev/zero", inputfile.ErrNotRegular},
		{dir, inputfile.ErrNotRegular},
	} {
		if _, err := Load(c.path); !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("Load(%s) = %v, want %v naming the file", c.path, err, c.want)
		}
	}
	if _, err := Parse(make([]byte, MaxRecipeBytes+1), env(nil)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Parse of %d bytes: %v", MaxRecipeBytes+1, err)
	}
}

// Relative paths in a recipe are relative to the recipe's folder; absolute paths and URLs
// are kept.
func TestLoadResolvesPathsAgainstTheRecipe(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "configs")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		yaml string
		get  func(*Recipe) []string
		want []string
	}{
		{"source: {type: images, path: ../data/train}\noutput: out/x.mldf\nrejects: r.jsonl\nreport: /abs/rep.json\n",
			func(r *Recipe) []string { return []string{r.Source.Path, r.Output, r.Rejects, r.Report} },
			[]string{filepath.Join(dir, "data/train"), filepath.Join(sub, "out/x.mldf"), filepath.Join(sub, "r.jsonl"), "/abs/rep.json"}},
		{"source: {type: tar, inputs: ['shards/s-{000..009}.tar', 's3://b/x-*.tar', 'file:///abs/y.tar', /abs/z.tar]}\noutput: s3://b/out.mldf\n",
			func(r *Recipe) []string { return append(append([]string{}, r.Source.Inputs...), r.Output) },
			[]string{filepath.Join(sub, "shards/s-{000..009}.tar"), "s3://b/x-*.tar", "file:///abs/y.tar", "/abs/z.tar", "s3://b/out.mldf"}},
		{"source: {type: images, path: 'gs://b/train'}\noutput: ${OUT:-out}/x.mldf\n",
			func(r *Recipe) []string { return []string{r.Source.Path, r.Output} },
			[]string{"gs://b/train", filepath.Join(sub, "out/x.mldf")}},
	} {
		p := filepath.Join(sub, "r.yaml")
		if err := os.WriteFile(p, []byte(c.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.get(r); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%q:\n got %q\nwant %q", c.yaml, got, c.want)
		}
	}
}
