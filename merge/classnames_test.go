package merge

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/format/mldf"
)

// TestMergeKeepsClassNames: parts whose label field holds its class names in the file
// (MLDF 1.1) merge into a file that holds them too.
func TestMergeKeepsClassNames(t *testing.T) {
	names := []string{"ant", "bee", "cat & dog"}
	fields := []mldf.FieldDesc{{Name: "label", Type: mldf.TypeInt, ClassNames: names}, {Name: "data", Type: mldf.TypeBytes}}
	samples := genSamples(90, 3)
	for i := range samples {
		samples[i].Label = int64(i % 3)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out.mldf")
	var parts []string
	for i := range 3 {
		p := PartPath(out, i, 3)
		res := writeFile(t, p, 4096, fields, samples[i*30:(i+1)*30])
		writeRecord(t, p, Record{Part: p, Shard: i, Shards: 3, RecipeSHA256: "r", Inputs: json.RawMessage(`[]`),
			Samples: res.Samples, Checksum: fmt.Sprintf("%016x", res.Checksum), Version: "test"})
		parts = append(parts, p)
	}
	if _, err := MergeWith(context.Background(), out, parts, Options{}); err != nil {
		t.Fatal(err)
	}
	r, err := mldf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rep, err := r.Verify()
	if err != nil || rep.ClassNames != 1 || !rep.GapsChecked {
		t.Fatalf("verify merged: %+v %v", rep, err)
	}
	got, err := r.Field("label").ClassNames()
	if err != nil || strings.Join(got, "|") != strings.Join(names, "|") || r.Header().VersionMinor != 1 {
		t.Fatalf("names %q %v", got, err)
	}
}
