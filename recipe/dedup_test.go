package recipe

import (
	"errors"
	"strings"
	"testing"
)

func TestDedupKey(t *testing.T) {
	const head = "source: {type: jsonl, inputs: [a]}\nfields: [{name: image, type: bytes}, {name: label, type: int}]\noutput: o\n"
	for _, c := range []struct{ name, src, want string }{
		{"drop", head + "dedup: {fields: [image]}\n", ""},
		{"report, two fields", head + "dedup: {fields: [image, label], mode: report}\n", ""},
		{"block style", head + "dedup:\n  fields:\n    - image\n  mode: drop\n", ""},
		{"no fields", head + "dedup: {mode: drop}\n", "line 4: dedup.fields: at least one field is required"},
		{"unknown field", head + "dedup:\n  fields:\n    - image\n    - caption\n", `line 7: dedup.fields: "caption" is not a field of the recipe`},
		{"twice", head + "dedup: {fields: [image, image]}\n", `dedup.fields: "image" is given twice`},
		{"bad mode", head + "dedup:\n  fields: [image]\n  mode: keep\n", `line 6: dedup.mode: "keep" is not one of drop, report`},
		{"unknown key", head + "dedup: {fields: [image], by: sha}\n", `unknown key "by"`},
		{"sharded", head + "shards: 4\nshard: 1\ndedup: {fields: [image]}\n", "dedup does not apply to a sharded run (4 shards)"},
		{"scdl", "source: {type: h5ad, inputs: [a.h5ad]}\noutput: o\nformat: scdl\ndedup: {fields: [image]}\n", "dedup does not apply to format scdl"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Parse([]byte(c.src), env(nil))
			if err == nil {
				r.Defaults()
				err = r.Validate()
			}
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if r.Dedup == nil || len(r.Dedup.Fields) == 0 {
					t.Fatalf("dedup not parsed: %+v", r.Dedup)
				}
				return
			}
			if !errors.Is(err, ErrRecipe) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}
