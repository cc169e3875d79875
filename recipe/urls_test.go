package recipe

import (
	"strings"
	"testing"
)

// TestSourceURLs: a source's path and inputs are well-formed names, and a name in a bucket
// is refused for a source type that reads local files only, naming the key, its line and the
// types that read buckets; a file:// URL is a local file.
func TestSourceURLs(t *testing.T) {
	const out = "output: o.mldf\nfields: [{name: a, type: int}]\n"
	for _, c := range []struct {
		src  string
		want string // "" for no problem with the name
	}{
		{"source: {type: mtx10x, path: s3://bkt/mtx}\n",
			`line 1: source.path "s3://bkt/mtx": a mtx10x source reads local files only (sources that read buckets: `},
		{"source: {type: mtx10x, path: 'gs://bkt/mtx/'}\n", `source.path "gs://bkt/mtx/": a mtx10x source reads local files only`},
		{"source: {type: h5ad, path: 'az://c/x.h5ad'}\n", `source.path "az://c/x.h5ad": a h5ad source reads local files only`},
		{"source:\n  type: h5ad\n  inputs: [a.h5ad, 'azblob://c/b.h5ad']\n",
			`line 3: source.inputs "azblob://c/b.h5ad": a h5ad source reads local files only`},
		{"source: {type: mtx10x, path: 'file:///data/mtx'}\n", ""},
		{"source: {type: mtx10x, path: ./data/mtx}\n", ""},
		{"source: {type: images, path: s3://bkt/images}\n", ""},
		{"source:\n  type: tar\n  inputs: ['ftp://x/y.tar']\n", `line 3: source.inputs: objstore: parse ftp://x/y.tar: bad URL (unsupported scheme "ftp"`},
		{"source:\n  type: tar\n  inputs: ['s3:///y.tar']\n", `line 3: source.inputs: objstore: parse s3:///y.tar: bad URL (no bucket`},
		{"source: {type: mtx10x, path: 'file://host/x'}\n", `line 1: source.path: objstore: parse file://host/x: bad URL (file URLs name a local path`},
	} {
		err := validateErr(t, c.src+out)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		switch {
		case c.want == "" && (strings.Contains(msg, "source.path") || strings.Contains(msg, "source.inputs")):
			t.Errorf("%s: %s, want no problem with the name", c.src, msg)
		case c.want != "" && !strings.Contains(msg, c.want):
			t.Errorf("%s: %q, want it to say %q", c.src, msg, c.want)
		}
	}
}
