package appendfile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mldf/convert/format/mldf"
)

// labelled returns samples whose labels index names (-1 every fifth: no label).
func labelled(n int, seed uint64, names []string) []sample {
	s := genSamples(n, seed)
	for i := range s {
		s[i].Label = int64(i % len(names))
		if i%5 == 4 {
			s[i].Label = -1
		}
	}
	return s
}

// relabel maps the labels of s from names to the ids of the same names in all.
func relabel(s []sample, names, all []string) []sample {
	out := slices.Clone(s)
	for i := range out {
		if out[i].Label >= 0 {
			out[i].Label = int64(slices.Index(all, names[out[i].Label]))
		}
	}
	return out
}

func classFields(names []string) []mldf.FieldDesc {
	return []mldf.FieldDesc{{Name: "label", Type: mldf.TypeInt, ClassNames: names}, {Name: "data", Type: mldf.TypeBytes}}
}

// TestAppendMergesClassNames: the base's classes keep their ids, the delta's new classes get
// the next ids in its order, and the result is the bytes of one run over both inputs with the
// merged names; also when the merged names no longer fit before the data region (it moves by
// a page) and when the delta has no new class.
func TestAppendMergesClassNames(t *testing.T) {
	long := func(prefix string, n int) []string {
		var s []string
		for i := range n {
			s = append(s, fmt.Sprintf("%s-%03d-%s", prefix, i, "padding-padding-padding-padding"))
		}
		return s
	}
	for _, tc := range []struct {
		name             string
		baseNames, delta []string
		moves            bool
	}{
		{"new classes", []string{"cat", "dog"}, []string{"dog", "emu", "ant"}, false},
		{"same classes", []string{"cat", "dog"}, []string{"dog", "cat"}, false},
		{"names outgrow the page", long("a", 80), append(long("a", 3), long("b", 60)...), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			merged := slices.Clone(tc.baseNames)
			for _, n := range tc.delta {
				if !slices.Contains(merged, n) {
					merged = append(merged, n)
				}
			}
			bs, as := labelled(30, 1, tc.baseNames), labelled(25, 2, tc.delta)
			base, add, one := filepath.Join(dir, "base.mldf"), filepath.Join(dir, "add.mldf"), filepath.Join(dir, "one.mldf")
			writeFile(t, base, 4096, classFields(tc.baseNames), true, bs)
			writeFile(t, add, 4096, classFields(tc.delta), true, as)
			writeFile(t, one, 4096, classFields(merged), true, append(relabel(bs, tc.baseNames, merged), relabel(as, tc.delta, merged)...))
			rep, err := Append(context.Background(), base, add, base)
			if err != nil {
				t.Fatal(err)
			}
			if (rep.Moved != 0) != tc.moves || rep.NewClasses != len(merged)-len(tc.baseNames) {
				t.Fatalf("moved %d, new classes %d; want moved: %v, %d new", rep.Moved, rep.NewClasses, tc.moves, len(merged)-len(tc.baseNames))
			}
			want, _ := os.ReadFile(one)
			got, _ := os.ReadFile(base)
			if !bytes.Equal(got, want) {
				t.Fatalf("append: %d bytes; one run: %d bytes; they differ", len(got), len(want))
			}
			r, err := mldf.Open(base)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.VerifyWith(context.Background(), mldf.VerifyOptions{}); err != nil {
				t.Fatal(err)
			}
			if names, _ := r.ClassNames(0); !slices.Equal(names, merged) {
				t.Fatalf("names %q, want %q", names, merged)
			}
		})
	}
}
