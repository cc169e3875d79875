//go:build cgo

package hdf5

import (
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// makeFile writes an HDF5 file with h5py (Debian python3-h5py), or skips.
func makeFile(t *testing.T) string {
	t.Helper()
	if !Available() {
		t.Skip("built without cgo")
	}
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import h5py").Run(); err != nil {
		t.Skipf("no python3-h5py (%v): scripts/deps test installs it", err)
	}
	path := filepath.Join(t.TempDir(), "t.h5")
	script := `
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "w")
g = f.create_group("grp")
g.attrs["encoding-type"] = "csr_matrix"
g.attrs["shape"] = np.array([3, 4])
g.attrs["column-order"] = np.array(["b", "a"], dtype=object)
g.attrs["empty"] = np.array([], dtype=float)
g.create_dataset("ints", data=np.array([5, -2, 7, 9], dtype=np.int32), compression="gzip", chunks=(2,))
g.create_dataset("dense", data=np.arange(12, dtype=np.float64).reshape(3, 4))
g.create_dataset("vstr", data=np.array(["alpha", "", "gamma", "δέλτα"], dtype=object), dtype=h5py.string_dtype())
g.create_dataset("fstr", data=np.array([b"ab", b"c", b"def"], dtype="S3"))
g.create_dataset("flags", data=np.array([True, False, True]))
f.create_group("grp/sub")
f.close()
`
	if out, err := exec.Command(py, "-c", script, path).CombinedOutput(); err != nil {
		t.Fatalf("h5py: %v\n%s", err, out)
	}
	return path
}

func TestReadBack(t *testing.T) {
	path := makeFile(t)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for p, want := range map[string]Kind{"/grp": KindGroup, "grp/ints": KindDataset, "grp/nope": KindNone, "nope/x": KindNone} {
		if k, err := f.Kind(p); err != nil || k != want {
			t.Fatalf("Kind(%s) = %v %v, want %v", p, k, err, want)
		}
	}
	names, err := f.List("grp")
	if err != nil || !slices.Equal(names, []string{"dense", "flags", "fstr", "ints", "sub", "vstr"}) {
		t.Fatalf("List: %v %v", names, err)
	}
	if s, err := f.AttrStrings("grp", "encoding-type", 1<<10); err != nil || !slices.Equal(s, []string{"csr_matrix"}) {
		t.Fatalf("attr: %v %v", s, err)
	}
	if s, err := f.AttrStrings("grp", "column-order", 1<<10); err != nil || !slices.Equal(s, []string{"b", "a"}) {
		t.Fatalf("column-order: %v %v", s, err)
	}
	if s, err := f.AttrStrings("grp", "empty", 1<<10); err != nil || len(s) != 0 {
		t.Fatalf("empty: %v %v", s, err)
	}
	if v, err := f.AttrInts("grp", "shape"); err != nil || !slices.Equal(v, []int64{3, 4}) {
		t.Fatalf("shape: %v %v", v, err)
	}
	if _, err := f.AttrStrings("grp", "missing", 1<<10); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing attr: %v", err)
	}

	d, err := f.OpenDataset("grp/ints")
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 4 || d.Type.Class != ClassInteger || !d.Type.Signed || d.Type.Size != 4 {
		t.Fatalf("ints: %+v", d)
	}
	i64 := make([]int64, 3)
	if err := d.ReadInt64(1, i64); err != nil || !slices.Equal(i64, []int64{-2, 7, 9}) {
		t.Fatalf("ReadInt64: %v %v", i64, err)
	}
	f32 := make([]float32, 2)
	if err := d.ReadFloat32(0, f32); err != nil || !slices.Equal(f32, []float32{5, -2}) {
		t.Fatalf("ReadFloat32: %v %v", f32, err)
	}
	if err := d.ReadInt64(3, i64); err == nil {
		t.Fatal("read past the end")
	}
	d.Close()

	dense, err := f.OpenDataset("grp/dense")
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]float32, 8)
	if err := dense.ReadRowsFloat32(1, 2, rows); err != nil || !slices.Equal(rows, []float32{4, 5, 6, 7, 8, 9, 10, 11}) {
		t.Fatalf("rows: %v %v", rows, err)
	}
	block := make([]float32, 4)
	if err := dense.ReadBlockFloat32(1, 2, 1, 2, block); err != nil || !slices.Equal(block, []float32{5, 6, 9, 10}) {
		t.Fatalf("block: %v %v", block, err)
	}
	if err := dense.ReadBlockFloat32(1, 2, 3, 2, block); err == nil {
		t.Fatal("block past the last column")
	}
	cols := make([]float32, 3)
	if err := dense.ReadColsFloat32(2, 1, cols); err != nil || !slices.Equal(cols, []float32{2, 6, 10}) {
		t.Fatalf("cols: %v %v", cols, err)
	}
	dense.Close()

	for name, want := range map[string][]string{"grp/vstr": {"", "gamma", "δέλτα"}, "grp/fstr": {"c", "def"}} {
		s, err := f.OpenDataset(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.ReadStrings(1, int64(len(want)))
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%s: %q %v", name, got, err)
		}
		s.Close()
	}
	// A read over its byte bound fails as the library allocates (variable-length strings) or
	// before it reads (fixed-length ones), and frees what it allocated.
	for _, name := range []string{"grp/vstr", "grp/fstr"} {
		s, err := f.OpenDataset(name)
		if err != nil {
			t.Fatal(err)
		}
		for range 100 {
			if _, err := readStrings(s.id, false, 0, s.Len(), 8, 8, s.name); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("%s over its bound: %v", name, err)
			}
		}
		if got, err := readStrings(s.id, false, 0, 2, 64, 64, s.name); err != nil || len(got) != 2 {
			t.Fatalf("%s after failed reads: %q %v", name, got, err)
		}
		s.Close()
	}
	b, err := f.OpenDataset("grp/flags")
	if err != nil {
		t.Fatal(err)
	}
	if b.Type.Class != ClassEnum {
		t.Fatalf("bool class %v", b.Type.Class)
	}
	if err := b.ReadInt64(0, i64); err != nil || !slices.Equal(i64, []int64{1, 0, 1}) {
		t.Fatalf("bools: %v %v", i64, err)
	}
	b.Close()
	if _, err := Open(filepath.Join(t.TempDir(), "none.h5")); !errors.Is(err, ErrHDF5) {
		t.Fatalf("open missing: %v", err)
	}
}
