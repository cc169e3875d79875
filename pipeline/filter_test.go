package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
)

// A sample a field's options leave out (encoders.ErrFiltered) is recorded but is not an
// error: it neither fails a run under Fail nor uses up MaxErrors.
func TestFilteredIsNotAnError(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "f.mldf")
	var samples []sample.Sample
	for i := range 10 {
		samples = append(samples, sample.Sample{Index: int64(i), Key: fmt.Sprint(i), Origin: fmt.Sprintf("s%d", i),
			Values: sample.ColumnsOf(map[string]sample.Value{"v": {Kind: sample.KindInt, Int: int64(i)}})})
	}
	rep, err := Run(context.Background(), Config{Source: newSource(samples), Fields: []Binding{{Field: filterField{}, Column: "v"}},
		Output: out, OnError: Fail, MaxErrors: 1, RejectsPath: filepath.Join(dir, "rej.jsonl"), Checksums: true})
	if err != nil {
		t.Fatalf("filtered samples failed the run: %v", err)
	}
	if rep.Samples != 7 || rep.Filtered != 3 || rep.Rejected != 0 || rep.RejectsByReason["filtered"] != 3 {
		t.Fatalf("report %+v", rep)
	}
	rej, _ := os.ReadFile(filepath.Join(dir, "rej.jsonl"))
	if n := strings.Count(string(rej), `"reason":"filtered"`); n != 3 {
		t.Fatalf("rejects file has %d filtered lines:\n%s", n, rej)
	}
}

// filterField is an INT field that leaves out 3, 6 and 9 (like on_long: skip).
type filterField struct{}

func (filterField) Name() string                            { return "v" }
func (filterField) Type() mldf.TypeID                       { return mldf.TypeInt }
func (filterField) Arguments() (a [mldf.ArgumentsSize]byte) { return a }
func (filterField) Encode(v sample.Value, meta []byte) ([]byte, error) {
	if v.Int%3 == 0 && v.Int > 0 {
		return nil, fmt.Errorf("value %d: %w", v.Int, encoders.ErrFiltered)
	}
	mldf.PutInt(meta, v.Int)
	return nil, nil
}
