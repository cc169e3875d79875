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
	if l, _ := json.Marshal(var_["labels"]); string(l) != `["a.h5ad","b.h5ad"]` {
		t.Fatalf("var labels %s", l)
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

// writeLabels writes labels as both label files of a feature index.
func writeLabels(t *testing.T, dir, index string, labels ...string) {
	t.Helper()
	j, _ := json.Marshal(labels)
	if err := os.WriteFile(filepath.Join(dir, index, LabelsFile), j, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, index, LabelsNPYFile), encodeLabelsNPY(labels), 0o644); err != nil {
		t.Fatal(err)
	}
}

// relist rewrites the header's feature index file lists: the file from becomes to ("" drops it).
func relist(t *testing.T, dir, from, to string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, HeaderFile))
	if err != nil {
		t.Fatal(err)
	}
	h, err := ParseHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Features {
		var files []string
		for _, f := range h.Features[i].Files {
			if f == from {
				if to == "" {
					continue
				}
				f = to
			}
			files = append(files, f)
		}
		h.Features[i].Files = files
	}
	if b, err = h.MarshalBinary(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, HeaderFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// listLabelsJSON makes the header list labels.json instead of labels.npy, as archives of
// earlier versions of this package do.
func listLabelsJSON(t *testing.T, dir string) {
	t.Helper()
	for _, n := range []string{VarFeatures, ObsFeatures} {
		relist(t, dir, n+"/"+LabelsNPYFile, n+"/"+LabelsFile)
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
		{"labels", "blocks", false, func(t *testing.T, dir string) {
			writeLabels(t, dir, VarFeatures, "a")
		}},
		{"labels.npy only, too few", "blocks", false, func(t *testing.T, dir string) {
			writeLabels(t, dir, VarFeatures, "a")
			os.Remove(filepath.Join(dir, VarFeatures, LabelsFile))
		}},
		{"labels.json only, too few", "blocks", false, func(t *testing.T, dir string) {
			writeLabels(t, dir, VarFeatures, "a")
			listLabelsJSON(t, dir)
			os.Remove(filepath.Join(dir, VarFeatures, LabelsNPYFile))
		}},
		{"labels disagree", "labels", false, patch(filepath.Join(VarFeatures, LabelsFile), func(b []byte) []byte { return []byte(`["a.h5ad", "c.h5ad"]`) })},
		{"labels count disagree", "labels", false, patch(filepath.Join(VarFeatures, LabelsFile), func(b []byte) []byte { return []byte(`["a.h5ad"]`) })},
		{"labels.json null beside labels.npy", "labels", false, patch(filepath.Join(ObsFeatures, LabelsFile), func(b []byte) []byte { return []byte(`[null]`) })},
		{"labels.json not a list", "labels", false, patch(filepath.Join(VarFeatures, LabelsFile), func(b []byte) []byte { return []byte(`{"a": 1}`) })},
		{"labels.npy pickled", "labels", false, func(t *testing.T, dir string) {
			// What np.save writes for a list holding None: an object array, read with pickle.
			os.WriteFile(filepath.Join(dir, VarFeatures, LabelsNPYFile), numpyFile("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", []byte("\x80\x03cnumpy.core.multiarray\n")), 0o644)
		}},
		{"labels.npy int64", "npy dtype", false, func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, VarFeatures, LabelsNPYFile), encodeInt64NPY([]int64{1, 2}), 0o644)
		}},
		{"labels.npy truncated", "npy size", false, patch(filepath.Join(VarFeatures, LabelsNPYFile), func(b []byte) []byte { return b[:len(b)-3] })},
		{"no labels", "feature index files", false, func(t *testing.T, dir string) {
			listLabelsJSON(t, dir) // (the header lists labels.json, which is then removed too)
			os.Remove(filepath.Join(dir, ObsFeatures, LabelsNPYFile))
			os.Remove(filepath.Join(dir, ObsFeatures, LabelsFile))
			relist(t, dir, ObsFeatures+"/"+LabelsFile, "")
		}},
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

// TestLabelLayouts: an archive's labels are read from labels.json and labels.npy (what this
// package writes), labels.json alone (what newer BioNeMo and earlier versions of this
// package write) or labels.npy alone (what bionemo-scdl 0.1.x writes).
func TestLabelLayouts(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(t *testing.T, dir string)
	}{
		{"both", func(t *testing.T, dir string) {}},
		{"labels.json only", func(t *testing.T, dir string) {
			listLabelsJSON(t, dir)
			for _, n := range []string{VarFeatures, ObsFeatures} {
				os.Remove(filepath.Join(dir, n, LabelsNPYFile))
			}
		}},
		{"labels.npy only", func(t *testing.T, dir string) {
			for _, n := range []string{VarFeatures, ObsFeatures} {
				os.Remove(filepath.Join(dir, n, LabelsFile))
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := writeSmall(t)
			c.mutate(t, dir)
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var got []string
			for _, b := range append(r.Var.Blocks, r.Obs.Blocks...) {
				got = append(got, b.Label)
			}
			if want := []string{"a.h5ad", "b.h5ad", "a.h5ad"}; !slices.Equal(got, want) {
				t.Fatalf("labels %q, want %q", got, want)
			}
		})
	}
}
