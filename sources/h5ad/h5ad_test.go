package h5ad

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/format/scdl"
	"github.com/mldf/convert/internal/cells"
)

// The fixtures in testdata/scdl were written by AnnData itself (make_fixtures.py there);
// expected.json holds every cell as AnnData reads it back.
const fixtures = "../../testdata/scdl"

type expectedFile struct {
	Rows [][2][]float64   `json:"rows"`
	Obs  map[string][]any `json:"obs"`
	Var  map[string][]any `json:"var"`
}

func loadExpected(t *testing.T) map[string]expectedFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]expectedFile
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func need(t *testing.T) {
	t.Helper()
	if !Available() {
		t.Skip("built without cgo: no h5ad")
	}
}

// compareRows checks every cell of rows [0, len(want)) read by read.
func compareRows(t *testing.T, name string, want [][2][]float64, read func(i int64) ([]float32, []uint32)) {
	t.Helper()
	for i, w := range want {
		vals, cols := read(int64(i))
		if len(vals) != len(w[0]) {
			t.Fatalf("%s cell %d: %d values, want %d", name, i, len(vals), len(w[0]))
		}
		for k := range vals {
			if vals[k] != float32(w[0][k]) || float64(cols[k]) != w[1][k] {
				t.Fatalf("%s cell %d value %d: %v at gene %d, want %v at %v", name, i, k, vals[k], cols[k], w[0][k], w[1][k])
			}
		}
	}
}

func TestEveryLayoutReadsAsAnnData(t *testing.T) {
	need(t)
	exp := loadExpected(t)
	for _, c := range []struct{ file, matrix, layout, key string }{
		{"small_csr", "", "csr", "small_csr"},
		{"small_csc", "", "csc", "small_csc"},
		{"small_dense", "", "dense", "small_dense"},
		{"small_raw", "raw", "csr", "small_raw"},
		{"other_genes", "X", "csr", "other_genes"},
	} {
		t.Run(c.file+c.matrix, func(t *testing.T) {
			f, err := Open(filepath.Join(fixtures, c.file+".h5ad"), Options{Matrix: c.matrix, TempDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Layout() != c.layout {
				t.Fatalf("layout %s, want %s", f.Layout(), c.layout)
			}
			want := exp[c.key]
			rows, _ := f.Shape()
			if rows != int64(len(want.Rows)) {
				t.Fatalf("%d rows, want %d", rows, len(want.Rows))
			}
			// Read in odd ranges, one range per cell count.
			var b cells.Block
			for lo := int64(0); lo < rows; lo += 7 {
				hi := min(lo+7, rows)
				b.Reset(f.ObsSchema())
				if err := f.ReadRows(lo, hi, &b); err != nil {
					t.Fatal(err)
				}
				compareRows(t, c.file, want.Rows[lo:hi], func(i int64) ([]float32, []uint32) {
					return b.Vals[b.Indptr[i]:b.Indptr[i+1]], b.Cols[b.Indptr[i]:b.Indptr[i+1]]
				})
				for _, col := range b.Obs {
					name := col.Name
					if col.Index {
						name = "_index"
					}
					ws := want.Obs[name]
					for i := range hi - lo {
						w := ws[lo+i]
						if w == nil {
							if !col.IsNull(int(i)) {
								t.Fatalf("obs %s cell %d: %q, want missing", name, lo+i, col.Text(int(i)))
							}
							continue
						}
						if !equalValue(&col, int(i), w) {
							t.Fatalf("obs %s cell %d: %q, want %v", name, lo+i, col.Text(int(i)), w)
						}
					}
				}
			}
			vars, err := f.Var()
			if err != nil {
				t.Fatal(err)
			}
			for _, col := range vars {
				name := col.Name
				if col.Index {
					name = "_index"
				}
				for i, w := range want.Var[name] {
					if !equalValue(&col, i, w) {
						t.Fatalf("var %s gene %d: %q, want %v", name, i, col.Text(i), w)
					}
				}
			}
		})
	}
}

func equalValue(c *cells.Column, i int, w any) bool {
	switch v := w.(type) {
	case string:
		return c.Text(i) == v
	case bool:
		return c.Kind == cells.KindBool && c.Bools[i] == v
	case float64:
		if c.Kind == cells.KindInt {
			return float64(c.Ints[i]) == v
		}
		return math.Abs(c.Float(i)-v) < 1e-12
	}
	return false
}

// TestArchiveFromAnnData converts the fixtures (CSR, CSC, dense, and a file with other genes)
// into one archive and checks every cell and the feature blocks, then checks the archive with
// numpy the way BioNeMo loads it.
func TestArchiveFromAnnData(t *testing.T) {
	need(t)
	exp := loadExpected(t)
	names := []string{"small_csr", "small_csc", "small_dense", "other_genes"}
	var inputs []cells.Input
	for _, n := range names {
		f, err := Open(filepath.Join(fixtures, n+".h5ad"), Options{TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		inputs = append(inputs, f)
	}
	dir := filepath.Join(t.TempDir(), "pbmc.scdl")
	rep, err := scdl.Write(context.Background(), dir, inputs, scdl.Options{Workers: 3, ChunkNNZ: 40})
	if err != nil {
		t.Fatal(err)
	}
	// Three files share their genes (one var block), the last has others; all four share
	// their obs column names (one obs block).
	if rep.Cells != 205 || rep.VarBlocks != 2 || rep.ObsBlocks != 1 || rep.ColPtr != scdl.Uint8 {
		t.Fatalf("report %+v", rep)
	}
	r, err := scdl.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	base := int64(0)
	for _, n := range names {
		compareRows(t, n, exp[n].Rows, func(i int64) ([]float32, []uint32) {
			v, c, err := r.Row(base+i, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			return v, c
		})
		base += int64(len(exp[n].Rows))
	}
	if r.Genes(0) != 50 || r.Genes(204) != 30 {
		t.Fatalf("genes %d %d", r.Genes(0), r.Genes(204))
	}
	obs, err := scdl.ReadTable(r.Obs.Blocks[0])
	if err != nil {
		t.Fatal(err)
	}
	// BioNeMo stores the obs columns, not the index, when there are columns.
	if obs.Rows != 205 || len(obs.Columns) != 5 || obs.Columns[4].Name != "cell_type" || !obs.Columns[4].IsNull(0) {
		t.Fatalf("obs table: %d rows %+v", obs.Rows, obs.Columns)
	}
	v2, err := scdl.ReadTable(r.Var.Blocks[1])
	if err != nil {
		t.Fatal(err)
	}
	if len(v2.Columns) != 1 || v2.Columns[0].Name != scdl.VarIndexColumn || v2.Columns[0].Strings[3] != "ENSG00000000003" {
		t.Fatalf("index-only var block %+v", v2.Columns)
	}
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import numpy").Run() == nil {
		out, err := exec.Command(py, "../../format/scdl/testdata/check_scdl.py", dir).Output()
		if err != nil {
			t.Fatalf("numpy check: %v", err)
		}
		var got struct {
			Rows [][2][]float64 `json:"rows"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		var all [][2][]float64
		for _, n := range names {
			all = append(all, exp[n].Rows...)
		}
		compareRows(t, "numpy", all, func(i int64) ([]float32, []uint32) {
			v := make([]float32, len(got.Rows[i][0]))
			c := make([]uint32, len(got.Rows[i][1]))
			for k := range v {
				v[k], c[k] = float32(got.Rows[i][0][k]), uint32(got.Rows[i][1][k])
			}
			return v, c
		})
	}
}

func TestBadFiles(t *testing.T) {
	need(t)
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.h5ad")
	os.WriteFile(junk, []byte("not hdf5 at all"), 0o644)
	if _, err := Open(junk, Options{}); err == nil {
		t.Fatal("opened junk")
	}
	if _, err := Open(filepath.Join(fixtures, "small_csr.h5ad"), Options{Matrix: "raw"}); !errors.Is(err, ErrFormat) {
		t.Fatalf("no raw: %v", err)
	}
	if _, err := Open(filepath.Join(fixtures, "small_csr.h5ad"), Options{Matrix: "layers"}); !errors.Is(err, ErrFormat) {
		t.Fatalf("bad matrix option: %v", err)
	}
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import h5py").Run() != nil {
		t.Skip("no python3-h5py to write damaged files")
	}
	// A CSR matrix whose gene index is out of range, and one whose indptr decreases.
	script := `
import sys, shutil, h5py, numpy as np
src, dst1, dst2 = sys.argv[1:4]
shutil.copy(src, dst1); shutil.copy(src, dst2)
f = h5py.File(dst1, "r+"); f["X/indices"][5] = 999; f.close()
f = h5py.File(dst2, "r+"); p = f["X/indptr"][:]; p[10] = p[12]; f["X/indptr"][:] = p; f.close()
`
	bad1, bad2 := filepath.Join(dir, "bad_index.h5ad"), filepath.Join(dir, "bad_indptr.h5ad")
	if out, err := exec.Command(py, "-c", script, filepath.Join(fixtures, "small_csr.h5ad"), bad1, bad2).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, p := range []string{bad1, bad2} {
		f, err := Open(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var b cells.Block
		b.Reset(f.ObsSchema())
		err = f.ReadRows(0, 60, &b)
		f.Close()
		if !errors.Is(err, ErrFormat) {
			t.Fatalf("%s: %v, want ErrFormat", p, err)
		}
	}
}

// TestGoldenArchive converts small_csr.h5ad and compares every file with the committed
// testdata/scdl/small.scdl (written by `convert run` from the repository root; only the
// blocks' labels, the input's path as given, differ).
func TestGoldenArchive(t *testing.T) {
	need(t)
	f, err := Open(filepath.Join(fixtures, "small_csr.h5ad"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := filepath.Join(t.TempDir(), "small.scdl")
	if _, err := scdl.Write(context.Background(), dir, []cells.Input{f}, scdl.Options{Workers: 2, ChunkNNZ: 100}); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join(fixtures, "small.scdl")
	n := 0
	err = filepath.WalkDir(golden, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == scdl.LabelsFile || d.Name() == scdl.LabelsNPYFile {
			return err
		}
		rel, _ := filepath.Rel(golden, p)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from the golden archive (%v)", rel, err)
		}
		n++
		return nil
	})
	if err != nil || n != 12 {
		t.Fatalf("compared %d files: %v", n, err)
	}
}
