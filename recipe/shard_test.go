package recipe

import (
	"fmt"
	"testing"

	"github.com/mldf/convert/sources"
	"github.com/mldf/convert/sources/h5ad"
)

// shardFixtures is a recipe (source and fields) over the repository's test data for every
// source type: a new type without one fails TestEverySourceShards.
var shardFixtures = map[string]string{
	"images":        "source: {type: images, path: ../testdata/images}\nfields: [{name: image, type: image}, {name: label, type: int}]\n",
	"audio_folder":  "source: {type: audio_folder, path: ../testdata/audio/commands}\nfields: [{name: audio, type: audio}, {name: label, type: int}]\n",
	"librispeech":   "source: {type: librispeech, path: ../testdata/audio/librispeech}\nfields: [{name: audio, type: audio}, {name: text, type: text}]\n",
	"nemo_manifest": "source: {type: nemo_manifest, path: ../testdata/audio/manifest/manifest.jsonl}\nfields: [{name: audio, type: audio}, {name: text, type: text}]\n",
	"tar":           "source: {type: tar, inputs: ['../testdata/tar/wds/shard-{000000..000001}.tar']}\nfields: [{name: jpg, type: bytes}, {name: cls, type: bytes}, {name: json, type: json}]\n",
	"jsonl":         "source: {type: jsonl, inputs: [../testdata/text/gsm8k_head8.jsonl, ../testdata/text/gsm8k_9to12.jsonl.zst]}\nfields: [{name: question, type: text}]\n",
	"mds":           "source: {type: mds, path: ../testdata/mds/text}\nfields: [{name: text, type: text}, {name: label, type: int}]\n",
	"parquet":       "source: {type: parquet, inputs: [../testdata/parquet/hf-text.parquet, ../testdata/parquet/hf-images.parquet]}\nfields: [{name: label, type: int}]\n",
	"h5ad":          "source: {type: h5ad, inputs: [../testdata/scdl/small_csr.h5ad, ../testdata/scdl/small_csc.h5ad]}\nfields: [{name: values, type: ndarray}]\n",
	"mtx10x":        "source: {type: mtx10x, path: ../testdata/scdl/tenx}\nfields: [{name: values, type: ndarray}]\n",
	"scdl":          "source: {type: scdl, path: ../testdata/scdl/small.scdl}\nfields: [{name: values, type: ndarray}]\n",
}

// TestEverySourceShards builds every source type as each shard of 1 to 3 and checks that
// the source is a sources.Sharder and that the shards' slices partition its inputs.
func TestEverySourceShards(t *testing.T) {
	for _, typ := range sources.Types() {
		t.Run(typ, func(t *testing.T) {
			fix, ok := shardFixtures[typ]
			if !ok {
				t.Fatalf("no fixture for source type %s: add one to shardFixtures", typ)
			}
			if typ == "h5ad" && !h5ad.Available() {
				t.Skip("h5ad: libhdf5 not compiled in")
			}
			for n := 1; n <= 3; n++ {
				next := 0
				for i := range n {
					src := fix + "output: x.mldf\n"
					if n > 1 {
						src += fmt.Sprintf("shards: %d\nshard: %d\n", n, i)
					}
					p, err := buildYAML(t, src)
					if err != nil {
						t.Fatalf("shard %d of %d: %v", i, n, err)
					}
					if _, ok := unwrap(p.Source).(sources.Sharder); !ok && n == 1 {
						t.Fatalf("shard %d of %d: no source", i, n)
					}
					if p.Slice[0] != next || p.Slice[1] < p.Slice[0] {
						t.Errorf("shard %d of %d: slice %v after %d", i, n, p.Slice, next)
					}
					next = p.Slice[1]
					if n == 1 && p.Inputs.Len() < 1 {
						t.Errorf("no input")
					}
					if c, ok := p.Source.(interface{ Close() error }); ok {
						c.Close()
					}
					if i == n-1 && int64(next) != p.Inputs.Len() {
						t.Errorf("%d shards end at input %d of %d", n, next, p.Inputs.Len())
					}
				}
			}
		})
	}
}

// unwrap returns the source the recipe's wrappers (sources.Wrapper) are built around.
func unwrap(src sources.Source) sources.Source {
	for {
		w, ok := src.(sources.Wrapper)
		if !ok {
			return src
		}
		src = w.Unwrap()
	}
}

// TestAllowEmpty checks that allow_empty reaches the plan, and that a shard with no input
// (more shards than inputs) may write an empty part while one with inputs may not.
func TestAllowEmpty(t *testing.T) {
	base := "source: {type: jsonl, inputs: [../testdata/text/gsm8k_head8.jsonl]}\nfields: [{name: question, type: text}]\noutput: x.mldf\n"
	for _, c := range []struct {
		extra string
		want  bool
	}{
		{"", false},
		{"allow_empty: true\n", true},
		{"shards: 2\nshard: 0\n", false}, // the one input
		{"shards: 2\nshard: 1\n", true},  // none
	} {
		p, err := buildYAML(t, base+c.extra)
		if err != nil {
			t.Fatalf("%q: %v", c.extra, err)
		}
		if p.AllowEmpty != c.want {
			t.Errorf("%q: AllowEmpty %v, want %v", c.extra, p.AllowEmpty, c.want)
		}
	}
}
