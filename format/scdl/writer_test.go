package scdl

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/mldf/convert/pagewriter"
)

// readDir returns every file of dir (relative path → bytes).
func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checkCells(t *testing.T, r *Reader, inputs ...*memInput) {
	t.Helper()
	row := int64(0)
	for _, in := range inputs {
		for i := int64(0); i < in.rows; i++ {
			vals, cols, err := r.Row(row, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := in.indptr[i], in.indptr[i+1]
			if !slices.Equal(vals, in.vals[lo:hi]) || !slices.Equal(cols, in.indices[lo:hi]) {
				t.Fatalf("%s cell %d (archive row %d): got %v %v, want %v %v", in.name, i, row, vals, cols, in.vals[lo:hi], in.indices[lo:hi])
			}
			row++
		}
	}
	if row != r.NumRows() {
		t.Fatalf("archive has %d rows, inputs %d", r.NumRows(), row)
	}
}

func TestWriteReadBackAnyWorkerCount(t *testing.T) {
	mk := func() []Input {
		return []Input{
			randomInput("a.h5ad", 1, 700, 300, 0.05),
			randomInput("b.h5ad", 2, 1, 300, 0.5),
			randomInput("c.h5ad", 3, 333, 40, 0.2),
		}
	}
	var first map[string][]byte
	for _, workers := range []int{1, 2, 7} {
		dir := filepath.Join(t.TempDir(), "out.scdl")
		inputs := mk()
		rep, err := Write(context.Background(), dir, inputs, Options{Workers: workers, ChunkNNZ: 97})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Cells != 1034 || rep.Genes != 300 || rep.ColPtr != Uint16 || rep.VarBlocks != 2 || rep.ObsBlocks != 1 {
			t.Fatalf("report %+v", rep)
		}
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		vr, err := r.Verify()
		if err != nil {
			t.Fatal(err)
		}
		if vr.Cells != 1034 || vr.NNZ != rep.NNZ {
			t.Fatalf("verify %+v", vr)
		}
		var ins []*memInput
		for _, in := range inputs {
			ins = append(ins, in.(*memInput))
		}
		checkCells(t, r, ins...)
		r.Close()
		files := readDir(t, dir)
		if first == nil {
			first = files
			names := make([]string, 0, len(files))
			for n := range files {
				names = append(names, n)
			}
			sort.Strings(names)
			want := []string{"col_ptr.npy", "data.npy", "header.sch", "metadata.json",
				"obs_features/cumulative_sum_index.npy", "obs_features/dataframe_0.parquet", "obs_features/labels.json", "obs_features/labels.npy", "obs_features/version.npy",
				"row_ptr.npy",
				"var_features/cumulative_sum_index.npy", "var_features/dataframe_0.parquet", "var_features/dataframe_1.parquet",
				"var_features/labels.json", "var_features/labels.npy", "var_features/version.npy", "version.json"}
			if !slices.Equal(names, want) {
				t.Fatalf("files %v\nwant %v", names, want)
			}
			continue
		}
		for name, b := range first {
			if !bytes.Equal(files[name], b) {
				t.Fatalf("workers=%d: %s differs from the 1-worker archive", workers, name)
			}
		}
		if len(files) != len(first) {
			t.Fatalf("workers=%d: %d files, want %d", workers, len(files), len(first))
		}
	}
}

func TestWriteDTypesAndMetadata(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	in := randomInput("only.h5ad", 4, 50, 256, 0.1)
	rep, err := Write(context.Background(), dir, []Input{in}, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	// 256 genes: the largest index 255 fits uint8; nnz < 65536 fits uint16.
	if rep.ColPtr != Uint8 || rep.RowPtr != SmallestUint(uint64(rep.NNZ)) || rep.Data != Float32 {
		t.Fatalf("dtypes %+v", rep)
	}
	files := readDir(t, dir)
	if got := string(files["metadata.json"]); got != `{"num_rows": 50}` {
		t.Fatalf("metadata.json %q", got)
	}
	if got := string(files["version.json"]); got != `"0.1.0"` {
		t.Fatalf("version.json %q", got)
	}
	if got := string(files["var_features/labels.json"]); got != `["only.h5ad"]` {
		t.Fatalf("labels %q", got)
	}
	// labels.npy is what np.save(["only.h5ad"]) writes: '<U9', no pickle.
	if got, want := files["var_features/labels.npy"], numpyFile("{'descr': '<U9', 'fortran_order': False, 'shape': (1,), }",
		[]byte("o\x00\x00\x00n\x00\x00\x00l\x00\x00\x00y\x00\x00\x00.\x00\x00\x00h\x00\x00\x005\x00\x00\x00a\x00\x00\x00d\x00\x00\x00")); !bytes.Equal(got, want) {
		t.Fatalf("labels.npy\n got %q\nwant %q", got, want)
	}
	cum, err := decodeInt64NPY(files["obs_features/cumulative_sum_index.npy"], "x")
	if err != nil || !slices.Equal(cum, []int64{-1, 50}) {
		t.Fatalf("cumsum %v %v", cum, err)
	}
	h, err := ParseHeader(files["header.sch"])
	if err != nil {
		t.Fatal(err)
	}
	if h.Array(ArrayRowPtr).Length != 51 || h.Array(ArrayColPtr).DType != Uint8 || h.Feature(ObsFeatures).Length != 50 {
		t.Fatalf("header %+v", h)
	}
	if want := []string{"var_features/cumulative_sum_index.npy", "var_features/labels.npy", "var_features/version.npy", "var_features/dataframe_0.parquet"}; !slices.Equal(h.Feature(VarFeatures).Files, want) {
		t.Fatalf("var files %v", h.Feature(VarFeatures).Files)
	}
	if _, err := os.Stat(filepath.Join(dir, rowSpill)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("row spill left behind: %v", err)
	}
}

func TestWriteFeatureBlocks(t *testing.T) {
	a := randomInput("a", 1, 10, 20, 0.3)
	b := randomInput("b", 2, 5, 20, 0.3) // same var table as a: merged
	c := randomInput("c", 3, 7, 20, 0.3)
	c.vars[1].Strings[3] = "renamed" // a different var table: a new block
	c.obs = c.obs[:2]                // other obs columns: a new obs block
	d := randomInput("d", 4, 4, 20, 0.3)
	d.obs = d.obs[:1] // only the index: stored as obs_feature_id
	dir := filepath.Join(t.TempDir(), "x")
	rep, err := Write(context.Background(), dir, []Input{a, b, c, d}, Options{Workers: 3, ChunkNNZ: 7})
	if err != nil {
		t.Fatal(err)
	}
	if rep.VarBlocks != 3 || rep.ObsBlocks != 3 {
		t.Fatalf("blocks %+v", rep)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	checkCells(t, r, a, b, c, d)
	if got := []int64{r.Var.Blocks[0].End, r.Var.Blocks[1].End, r.Var.Blocks[2].End}; !slices.Equal(got, []int64{15, 22, 26}) {
		t.Fatalf("var blocks end at %v", got)
	}
	if r.Var.Blocks[0].Label != "a" || r.Var.Blocks[1].Label != "c" || r.Obs.Blocks[2].Label != "d" {
		t.Fatalf("labels %+v %+v", r.Var.Blocks, r.Obs.Blocks)
	}
	tb, err := ReadTable(r.Obs.Blocks[0])
	if err != nil {
		t.Fatal(err)
	}
	if tb.Rows != 15 || len(tb.Columns) != 3 || tb.Columns[0].Name != "n_genes" || tb.Columns[2].Name != "cell_type" {
		t.Fatalf("obs block 0: %d rows, %+v", tb.Rows, tb.Columns)
	}
	if !tb.Columns[2].IsNull(3) || tb.Columns[2].Strings[1] != "B" || tb.Columns[0].Ints[12] != b.obs[1].Ints[2] {
		t.Fatalf("obs values %+v", tb.Columns[2])
	}
	last, err := ReadTable(r.Obs.Blocks[2])
	if err != nil {
		t.Fatal(err)
	}
	if len(last.Columns) != 1 || last.Columns[0].Name != ObsIndexColumn || last.Columns[0].Strings[1] != "d-cell1" {
		t.Fatalf("index-only obs block %+v", last.Columns)
	}
	vt, err := ReadTable(r.Var.Blocks[1])
	if err != nil {
		t.Fatal(err)
	}
	if vt.Rows != 20 || len(vt.Columns) != 1 || vt.Columns[0].Name != "gene_symbols" || vt.Columns[0].Strings[3] != "renamed" {
		t.Fatalf("var block 1 %+v", vt.Columns)
	}
}

func TestWriteFailureLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "x")
	bad := randomInput("bad", 1, 500, 30, 0.2)
	bad.failAt = 321
	_, err := Write(context.Background(), dir, []Input{randomInput("ok", 2, 100, 30, 0.2), bad}, Options{Workers: 3, ChunkNNZ: 50})
	if err == nil {
		t.Fatal("no error")
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
	// Cancelled: also nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Write(ctx, dir, []Input{randomInput("ok", 2, 100, 30, 0.2)}, Options{Workers: 2}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Fatalf("left %v", entries)
	}
}

func TestWriteBadInputs(t *testing.T) {
	cases := map[string]func(m *memInput){
		"gene index out of range": func(m *memInput) { m.indices[3] = 999 },
		"no cells":                func(m *memInput) { m.rows = 0; m.indptr = m.indptr[:1] },
		"no stored values": func(m *memInput) {
			m.indices, m.vals = nil, nil
			for i := range m.indptr {
				m.indptr[i] = 0
			}
		},
		"short obs column": func(m *memInput) { m.obs[1].Ints = m.obs[1].Ints[:5] },
		"short var column": func(m *memInput) { m.vars[1].Strings = m.vars[1].Strings[:5] },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			in := randomInput("in.h5ad", 1, 40, 30, 0.2)
			mutate(in)
			_, err := Write(context.Background(), filepath.Join(parent, "x"), []Input{in}, Options{Workers: 2})
			if !errors.Is(err, ErrInput) {
				t.Fatalf("error %v, want ErrInput", err)
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Fatalf("left %v", entries)
			}
		})
	}
}

func TestWriteReplacesArchiveNotOtherDirs(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "x")
	if _, err := Write(context.Background(), dir, []Input{randomInput("a", 1, 10, 10, 0.5)}, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(context.Background(), dir, []Input{randomInput("b", 2, 12, 10, 0.5)}, Options{}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil || r.NumRows() != 12 {
		t.Fatalf("replaced archive: %v", err)
	}
	r.Close()
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Fatalf("parent holds %v", entries)
	}
	other := filepath.Join(parent, "mine")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("keep"), 0o644)
	if _, err := Write(context.Background(), other, []Input{randomInput("a", 1, 10, 10, 0.5)}, Options{}); !errors.Is(err, ErrExists) {
		t.Fatalf("writing over a user's directory: %v", err)
	}
}

// TestArchiveAsInput re-archives an archive: the same cells, obs values and var table.
func TestArchiveAsInput(t *testing.T) {
	a := randomInput("a", 1, 300, 40, 0.1)
	b := randomInput("b", 2, 50, 40, 0.1)
	b.obs = b.obs[:2] // another obs block: the union schema gives b's cells nulls
	src := filepath.Join(t.TempDir(), "src")
	if _, err := Write(context.Background(), src, []Input{a, b}, Options{Workers: 2, ChunkNNZ: 50}); err != nil {
		t.Fatal(err)
	}
	r, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	in := NewArchiveInput(r)
	defer in.Close()
	dst := filepath.Join(t.TempDir(), "dst")
	if _, err := Write(context.Background(), dst, []Input{in}, Options{Workers: 3, ChunkNNZ: 70}); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	checkCells(t, r2, a, b)
	obs, err := ReadTable(r2.Obs.Blocks[0])
	if err != nil {
		t.Fatal(err)
	}
	if obs.Rows != 350 || len(obs.Columns) != 3 || obs.Columns[1].Floats[7] != a.obs[2].Floats[7] || !obs.Columns[1].IsNull(320) || obs.Columns[0].Ints[310] != b.obs[1].Ints[10] {
		t.Fatalf("obs %d rows %+v", obs.Rows, obs.Columns[0].ColumnSpec)
	}
}

// cancelInput cancels the run when a worker reaches row at.
type cancelInput struct {
	*memInput
	at     int64
	cancel context.CancelFunc
}

func (c *cancelInput) ReadRows(lo, hi int64, b *Block) error {
	if lo <= c.at && c.at < hi {
		c.cancel()
	}
	return c.memInput.ReadRows(lo, hi, b)
}

func TestWriteInterruptedMidwayLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "x")
	// An archive already there stays as it was.
	if _, err := Write(context.Background(), dir, []Input{randomInput("old", 1, 10, 10, 0.5)}, Options{}); err != nil {
		t.Fatal(err)
	}
	before := readDir(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	in := &cancelInput{memInput: randomInput("new", 2, 5000, 50, 0.1), at: 2500, cancel: cancel}
	_, err := Write(ctx, dir, []Input{in}, Options{Workers: 3, ChunkNNZ: 100})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Fatalf("parent holds %v", entries)
	}
	after := readDir(t, dir)
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Fatalf("%s changed", name)
		}
	}
}

// A run killed with SIGKILL leaves its temporary directory; the next run to the same archive
// removes it, but not the temporary directory of a run still going (it holds a lock on it).
func TestWriteRemovesKilledRunsLeftovers(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "x")
	dead := filepath.Join(parent, ".x.tmp-1234567")
	live := filepath.Join(parent, ".x.tmp-7654321")
	other := filepath.Join(parent, ".y.tmp-1234567")
	for _, d := range []string{dead, live, other} {
		if err := os.MkdirAll(filepath.Join(d, "features"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "data.npy"), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hold, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	pagewriter.HoldTemp(hold)

	if _, err := Write(context.Background(), dir, []Input{randomInput("ok", 2, 100, 30, 0.2)}, Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed run's leftover %s is still there (%v)", dead, err)
	}
	for _, d := range []string{live, other} {
		if _, err := os.Stat(filepath.Join(d, "data.npy")); err != nil {
			t.Errorf("%s was touched: %v", d, err)
		}
	}
	if _, err := Open(dir); err != nil {
		t.Fatal(err)
	}
}
