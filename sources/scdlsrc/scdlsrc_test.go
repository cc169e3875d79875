package scdlsrc

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/scdl"
)

// testdata/scdl/small.scdl was written by convert from small_csr.h5ad (AnnData-written);
// expected.json holds that file's cells as AnnData reads them.
func TestCellsFromArchive(t *testing.T) {
	r, err := scdl.Open("../../testdata/scdl/small.scdl")
	if err != nil {
		t.Fatal(err)
	}
	src := New([]scdl.Input{scdl.NewArchiveInput(r)}, nil)
	defer src.Close()
	b, err := os.ReadFile("../../testdata/scdl/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var exp map[string]struct {
		Rows [][2][]float64   `json:"rows"`
		Obs  map[string][]any `json:"obs"`
	}
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	want := exp["small_csr"]
	if src.Len() != int64(len(want.Rows)) {
		t.Fatalf("Len %d", src.Len())
	}
	var n int64
	err = src.Run(context.Background(), func(s sample.Sample) error {
		if s.Index != n {
			t.Fatalf("index %d, want %d", s.Index, n)
		}
		vals := npyData(t, s.Value(ColumnValues).Bytes, "<f4")
		genes := npyData(t, s.Value(ColumnGenes).Bytes, "<u4")
		w := want.Rows[n]
		if len(vals)/4 != len(w[0]) || len(genes)/4 != len(w[1]) {
			t.Fatalf("cell %d: %d values", n, len(vals)/4)
		}
		for k := range w[0] {
			v := math.Float32frombits(binary.LittleEndian.Uint32(vals[4*k:]))
			g := binary.LittleEndian.Uint32(genes[4*k:])
			if v != float32(w[0][k]) || float64(g) != w[1][k] {
				t.Fatalf("cell %d value %d: %v@%d", n, k, v, g)
			}
		}
		if got, wantN := s.Value("n_counts"), want.Obs["n_counts"][n].(float64); got.Kind != sample.KindInt || float64(got.Int) != wantN {
			t.Fatalf("cell %d n_counts %+v, want %v", n, got, wantN)
		}
		ct := s.Value("cell_type")
		if w := want.Obs["cell_type"][n]; (w == nil && string(ct.Bytes) != "") || (w != nil && string(ct.Bytes) != w.(string)) {
			t.Fatalf("cell %d cell_type %q, want %v", n, ct.Bytes, w)
		}
		n++
		return nil
	})
	if err != nil || n != 60 {
		t.Fatalf("Run: %v after %d cells", err, n)
	}
}

// npyData checks an NPY 1.0 header's dtype and returns the data.
func npyData(t *testing.T, b []byte, descr string) []byte {
	t.Helper()
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		t.Fatalf("not NPY")
	}
	hl := int(binary.LittleEndian.Uint16(b[8:]))
	h := string(b[10 : 10+hl])
	if (10+hl)%64 != 0 || !strings.Contains(h, "'descr': '"+descr+"'") {
		t.Fatalf("header %q", h)
	}
	return b[10+hl:]
}
