package scdl

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

func writeSmall(t *testing.T) (string, []*memInput) {
	t.Helper()
	a := randomInput("a.h5ad", 11, 30, 300, 0.1)
	b := randomInput("b.h5ad", 12, 20, 100, 0.2)
	dir := filepath.Join(t.TempDir(), "arch")
	if _, err := Write(context.Background(), dir, []Input{a, b}, Options{Workers: 2, ChunkNNZ: 64}); err != nil {
		t.Fatal(err)
	}
	return dir, []*memInput{a, b}
}

// TestPythonNumpyReadsArchive opens the archive with numpy as BioNeMo's loader does
// (np.memmap with the header's dtypes) and compares every cell.
func TestPythonNumpyReadsArchive(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import numpy").Run(); err != nil {
		t.Skipf("no python3 with numpy (%v): scripts/deps test installs it", err)
	}
	dir, inputs := writeSmall(t)
	out, err := exec.Command(py, "testdata/check_scdl.py", dir).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("check_scdl.py: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var got struct {
		NumRows  int64                     `json:"num_rows"`
		Version  string                    `json:"version"`
		DTypes   map[string]string         `json:"dtypes"`
		Rows     [][2][]float64            `json:"rows"`
		Features map[string]map[string]any `json:"features"`
		Header   struct {
			Version []int `json:"version"`
			Chunked *int  `json:"chunked"`
		} `json:"header"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.NumRows != 50 || len(got.Rows) != 50 || got.Version != LibraryVersion || !slices.Equal(got.Header.Version, []int{0, 1, 0}) ||
		got.Header.Chunked == nil || *got.Header.Chunked != 0 {
		t.Fatalf("python saw %d rows, version %q, header %+v", got.NumRows, got.Version, got.Header)
	}
	if got.DTypes["DATA"] != "float32" || got.DTypes["COLPTR"] != "uint16" || got.DTypes["ROWPTR"] != "uint16" {
		t.Fatalf("dtypes %v", got.DTypes)
	}
	var_ := got.Features["var_features"]
	if var_["cumsum_dtype"] != "int64" || var_["version"] != LibraryVersion {
		t.Fatalf("var features %v", var_)
	}
	row := 0
	for _, in := range inputs {
		for i := int64(0); i < in.rows; i++ {
			lo, hi := in.indptr[i], in.indptr[i+1]
			vals, cols := got.Rows[row][0], got.Rows[row][1]
			if len(vals) != int(hi-lo) {
				t.Fatalf("row %d: %d values, want %d", row, len(vals), hi-lo)
			}
			for k := range vals {
				if float32(vals[k]) != in.vals[lo+int64(k)] || uint32(cols[k]) != in.indices[lo+int64(k)] {
					t.Fatalf("row %d value %d: %v@%v, want %v@%v", row, k, vals[k], cols[k], in.vals[lo+int64(k)], in.indices[lo+int64(k)])
				}
			}
			row++
		}
	}
}

func TestOpenVerifyBadArchives(t *testing.T) {
	type damage struct {
		name, rule string
		verify     bool // the rule is found by Verify, not Open
		do         func(t *testing.T, dir string)
	}
	patch := func(file string, f func(b []byte) []byte) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, file)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []damage{
		{"magic", "magic", false, patch(HeaderFile, func(b []byte) []byte { b[1] = 'X'; return b })},
		{"endianness", "endianness", false, patch(HeaderFile, func(b []byte) []byte { b[7] = 0; return b })},
		{"data too short", "array length", false, patch(DataFile, func(b []byte) []byte { return b[:len(b)-4] })},
		{"col_ptr too long", "array length", false, patch(ColPtrFile, func(b []byte) []byte { return append(b, 0, 0) })},
		{"metadata", "num_rows", false, patch(MetadataFile, func(b []byte) []byte { return []byte(`{"num_rows": 7}`) })},
		{"cumsum", "feature index length", false, func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, VarFeatures, CumSumFile), encodeInt64NPY([]int64{-1, 30, 49}), 0o644)
		}},
		{"labels", "blocks", false, patch(filepath.Join(VarFeatures, LabelsFile), func(b []byte) []byte { return []byte(`["a"]`) })},
		{"missing parquet", "index files", false, func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, ObsFeatures, "dataframe_0.parquet"))
		}},
		{"row_ptr start", "row_ptr starts at 0", true, patch(RowPtrFile, func(b []byte) []byte { b[0] = 1; return b })},
		{"row_ptr decreasing", "row_ptr monotonic", true, patch(RowPtrFile, func(b []byte) []byte {
			binary.LittleEndian.PutUint16(b[20:], 0)
			return b
		})},
		{"row_ptr end", "row_ptr ends at nnz", true, patch(RowPtrFile, func(b []byte) []byte {
			n := len(b)
			binary.LittleEndian.PutUint16(b[n-2:], binary.LittleEndian.Uint16(b[n-2:])-1)
			return b
		})},
		{"gene index", "column index < genes", true, patch(ColPtrFile, func(b []byte) []byte {
			// The last cell is in b.h5ad's block (100 genes).
			binary.LittleEndian.PutUint16(b[len(b)-2:], 150)
			return b
		})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := writeSmall(t)
			c.do(t, dir)
			r, err := Open(dir)
			if err == nil {
				defer r.Close()
				if !c.verify {
					t.Fatal("Open accepted it")
				}
				_, err = r.Verify()
			} else if c.verify {
				t.Fatalf("Open: %v (want Verify to find it)", err)
			}
			var re *RuleError
			if !errors.As(err, &re) || re.Rule != c.rule {
				t.Fatalf("error %v, want rule %q", err, c.rule)
			}
		})
	}
}
