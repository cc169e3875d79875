package recipe

import (
	"errors"
	"strings"
	"testing"
)

func TestCellSourceRecipes(t *testing.T) {
	ok := []string{
		"source: {type: mtx10x, path: d}\nformat: scdl\noutput: o.scdl\n",
		"source: {type: scdl, inputs: [a.scdl, b.scdl]}\nformat: scdl\noutput: o.scdl\n",
		"source: {type: scdl, path: a.scdl}\nfields: [{name: values, type: ndarray}]\noutput: o.mldf\n",
	}
	for _, src := range ok {
		parseValid(t, src, nil)
	}
	bad := []struct{ src, want string }{
		{"source: {type: h5ad}\nformat: scdl\noutput: o\n", "source.inputs: an h5ad source needs"},
		{"source: {type: h5ad, path: x.h5ad, inputs: [x.h5ad]}\nformat: scdl\noutput: o\n", "source.path does not apply to an h5ad source"},
		{"source: {type: mtx10x}\nformat: scdl\noutput: o\n", "source.path (or inputs, for several) is required"},
		{"source: {type: mtx10x, path: d, matrix: raw}\nformat: scdl\noutput: o\n", "line 1: source.matrix applies only to an h5ad source"},
		{"source: {type: h5ad, inputs: [a], matrix: layers}\nformat: scdl\noutput: o\n", "source.matrix: \"layers\" is not one of X, raw"},
		{"source: {type: mtx10x, path: d}\nformat: scdl\nfields: [{name: x, type: int}]\noutput: o\n", "line 3: fields do not apply to format scdl"},
		{"source: {type: tar, inputs: [a.tar]}\nformat: scdl\noutput: o\n", "line 2: format scdl needs a single-cell source"},
		{"source: {type: scdl, path: a}\nformat: scdl\noutput: o\nshards: 2\nshard: 1\n", "format scdl cannot be sharded"},
		{"source: {type: scdl, path: a}\noutput: o\n", "fields: at least one field is required"},
	}
	for _, c := range bad {
		r, err := Parse([]byte(c.src), env(nil))
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		r.Defaults()
		err = r.Validate()
		if !errors.Is(err, ErrRecipe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}
