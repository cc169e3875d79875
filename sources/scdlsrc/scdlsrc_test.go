package scdlsrc

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/mldf/convert/format/scdl"
	"github.com/mldf/convert/sample"
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

// TestArchiveRulesBeforeEmit: the source applies verify's rules before it emits a cell: an
// archive verify refuses yields no sample and an error naming the rule.
func TestArchiveRulesBeforeEmit(t *testing.T) {
	cases := []struct {
		name string
		file string
		off  int64
		b    []byte
		want string
	}{
		{"row_ptr[0] = 3", scdl.RowPtrFile, 0, []byte{3, 0}, `rule "row_ptr starts at 0"`},
		{"col_ptr[7] = 200 of 50 genes", scdl.ColPtrFile, 7, []byte{200}, `col_ptr[7] = 200 for cell`},
		{"row_ptr past nnz", scdl.RowPtrFile, 2, []byte{0xff, 0xff}, `rule "row_ptr within nnz"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir() + "/a.scdl"
			if err := os.CopyFS(dir, os.DirFS("../../testdata/scdl/small.scdl")); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(dir+"/"+c.file, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt(c.b, c.off)
			f.Close()
			r, err := scdl.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Verify(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("verify: %v, want %s", err, c.want)
			}
			src := New([]scdl.Input{scdl.NewArchiveInput(r)}, nil)
			defer src.Close()
			n := 0
			err = src.Run(context.Background(), func(sample.Sample) error { n++; return nil })
			if err == nil || n != 0 || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("Run: %v after %d samples, want %s", err, n, c.want)
			}
		})
	}
}

// counted is an input whose cells hold perCell values each, counted without reading.
type counted struct {
	scdl.Input
	perCell []int64
}

func (c counted) Values(lo, hi int64) (int64, error) {
	var n int64
	for _, v := range c.perCell[lo:hi] {
		n += v
	}
	return n, nil
}

// TestReadsBoundedByValues: an input that counts its values is read in pieces of at most
// valuesPerRead values (or one cell).
func TestReadsBoundedByValues(t *testing.T) {
	per := make([]int64, 3000)
	for i := range per {
		per[i] = 10
	}
	per[5] = 1 << 33 // one huge cell: read alone
	per[2000] = valuesPerRead / 2
	per[2001] = valuesPerRead / 2
	in := counted{perCell: per}
	var got [][2]int64
	for lo, hi := int64(0), int64(0); lo < int64(len(per)); lo = hi {
		var err error
		if hi, err = readEnd(in, lo, int64(len(per))); err != nil {
			t.Fatal(err)
		}
		if hi <= lo {
			t.Fatalf("no progress at %d", lo)
		}
		n, _ := in.Values(lo, hi)
		if n > valuesPerRead && hi-lo > 1 {
			t.Fatalf("cells [%d, %d) hold %d values", lo, hi, n)
		}
		got = append(got, [2]int64{lo, hi})
	}
	if got[0] != [2]int64{0, 4} || got[len(got)-1][1] != 3000 {
		t.Fatalf("reads %v", got[:min(len(got), 5)])
	}
	for _, g := range got {
		if g[0] <= 5 && 5 < g[1] && g != [2]int64{5, 6} {
			t.Fatalf("the huge cell is read with others: %v", g)
		}
	}
}
