package h5ad

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mldf/convert/format/scdl"
	"github.com/mldf/convert/internal/hdf5"
	"github.com/mldf/convert/internal/inputfile"
)

// hostileScript writes variants of small_csr.h5ad (argv[1]) into argv[2]: each reaches for
// data outside the file, or declares sizes or strings no reader should trust.
const hostileScript = `
import sys, shutil, h5py, numpy as np
src, out = sys.argv[1], sys.argv[2]
secret = out + "/secret.bin"
open(secret, "wb").write(b"SECRET!!" * 512)
sh = out + "/secret.h5"
with h5py.File(sh, "w") as g:
    g["n"] = np.frombuffer(b"SECRET!!" * 60, dtype="<i8")
    g["data"] = np.frombuffer(b"SECRET!!" * 225, dtype="<f4")
    o = g.create_group("obs")
    o["n_counts"] = np.frombuffer(b"SECRET!!" * 60, dtype="<i8")
def variant(name, fn):
    p = out + "/" + name + ".h5ad"
    shutil.copy(src, p)
    with h5py.File(p, "r+") as f:
        fn(f)
def external(f):
    del f["obs/n_counts"]
    f.create_dataset("obs/n_counts", shape=(60,), dtype="<i8", external=[(secret, 0, 480)])
def external_data(f):
    del f["X/data"]
    f.create_dataset("X/data", shape=(450,), dtype="<f4", external=[(secret, 0, 1800)])
def external_link(f):
    del f["obs/n_counts"]
    f["obs/n_counts"] = h5py.ExternalLink(sh, "/n")
def external_group(f):
    f["obs"].attrs["column-order"] = np.array(["n_counts"], dtype=object)
    f["obs2"] = h5py.ExternalLink(sh, "/obs")
    del f["obs/n_counts"]
    f["obs/n_counts"] = h5py.SoftLink("/obs2/n_counts")
def virtual(f):
    del f["obs/n_counts"]
    lay = h5py.VirtualLayout(shape=(60,), dtype="<i8")
    lay[:] = h5py.VirtualSource(sh, "n", shape=(60,))
    f["obs"].create_virtual_dataset("n_counts", lay)
def virtual_data(f):
    del f["X/data"]
    lay = h5py.VirtualLayout(shape=(450,), dtype="<f4")
    lay[:] = h5py.VirtualSource(sh, "data", shape=(450,))
    f["X"].create_virtual_dataset("data", lay)
def big_chunk(f):
    d = f["X/data"][:]
    del f["X/data"]
    f.create_dataset("X/data", data=d, maxshape=(None,), chunks=(17 << 20,), compression="gzip")
def long_encoding(f):
    f["X"].attrs["encoding-type"] = "csr_matrix" + "x" * (1 << 20)
def long_column_encoding(f):
    f["obs/donor"].attrs["encoding-type"] = "\x1b[31m" + "y" * (1 << 20)
def long_column_name(f):
    f["obs"].attrs["column-order"] = np.array(["z" * (1 << 20)], dtype=object)
def long_index(f):
    f["obs"].attrs["_index"] = "\n" * (1 << 20)
def many_order(f):
    f["obs"].attrs.create("column-order", np.array(["n" * 400] * 3000, dtype=object))
def unstored_indptr(f):
    del f["X/indptr"]
    f.create_dataset("X/indptr", shape=(1 << 40,), dtype="<i8", chunks=(1 << 16,))
    f["X"].attrs["shape"] = np.array([(1 << 40) - 1, 50])
def unstored_obs(f):
    d = f["obs/n_counts"][:]
    del f["obs/n_counts"]
    ds = f.create_dataset("obs/n_counts", shape=(60,), dtype="<i8", chunks=(10,), compression="gzip")
    ds[:10] = d[:10]
def wide_shape(f):
    f["X"].attrs["shape"] = np.array([60, 1 << 31])
def fat_cell(f):
    p = f["X/indptr"][:]
    p[1:60] = np.maximum(p[1:60], 60)
    f["X/indptr"][:] = p
for name, fn in list(globals().items()):
    if callable(fn) and name not in ("variant", "open") and not name.startswith("_") and fn.__module__ == "__main__":
        variant(name, fn)
`

// makeHostile writes the variants with h5py, or skips.
func makeHostile(t *testing.T) string {
	t.Helper()
	need(t)
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import h5py").Run(); err != nil {
		t.Skipf("no python3-h5py to write hostile files (%v)", err)
	}
	dir := t.TempDir()
	if out, err := exec.Command(py, "-c", hostileScript, filepath.Join(fixtures, "small_csr.h5ad"), dir).CombinedOutput(); err != nil {
		t.Fatalf("h5py: %v\n%s", err, out)
	}
	return dir
}

// convertAll opens path and writes an archive of it, reading every cell and the var table.
func convertAll(t *testing.T, path, out string) error {
	f, err := Open(path, Options{TempDir: t.TempDir()})
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = scdl.Write(context.Background(), out, []scdl.Input{f}, scdl.Options{Workers: 2, ChunkNNZ: 40})
	return err
}

// TestHostileFiles: data outside the file is refused before a byte of it is read, sizes and
// strings beyond the bounds are errors, and every error names the file and the dataset or
// attribute, in a message of bounded length.
func TestHostileFiles(t *testing.T) {
	dir := makeHostile(t)
	secret := []byte("SECRET!!")
	for _, c := range []struct {
		name, mention string
		want          error
	}{
		{"external", "obs/n_counts", hdf5.ErrExternal},
		{"external_data", "X/data", hdf5.ErrExternal},
		{"external_link", "obs/n_counts", hdf5.ErrExternal},
		{"external_group", "obs/n_counts", hdf5.ErrExternal},
		{"virtual", "obs/n_counts", hdf5.ErrExternal},
		{"virtual_data", "X/data", hdf5.ErrExternal},
		{"big_chunk", "X/data", hdf5.ErrChunkTooLarge},
		{"long_encoding", "encoding-type", hdf5.ErrTooLarge},
		{"long_column_encoding", "encoding-type", hdf5.ErrTooLarge},
		{"long_column_name", "column name", ErrFormat},
		{"long_index", "_index", hdf5.ErrTooLarge},
		{"many_order", "column-order", hdf5.ErrTooLarge},
		{"unstored_indptr", "X/indptr", hdf5.ErrNotStored},
		{"unstored_obs", "obs/n_counts", hdf5.ErrNotStored},
		{"wide_shape", "var", ErrFormat},
		{"fat_cell", "cell 0 has 60 values for 50 genes", ErrFormat},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".h5ad")
			parent := t.TempDir()
			err := convertAll(t, path, filepath.Join(parent, "out.scdl"))
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			msg := err.Error()
			if len(msg) > 2048 || !strings.Contains(msg, path) || !strings.Contains(msg, c.mention) {
				t.Fatalf("error of %d bytes should name %s and %s: %.600s", len(msg), path, c.mention, msg)
			}
			if bytes.Contains([]byte(msg), secret) {
				t.Fatalf("error quotes the secret: %s", msg)
			}
			filepath.WalkDir(parent, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if b, _ := os.ReadFile(p); bytes.Contains(b, secret) {
						t.Errorf("%s holds the secret", p)
					}
				}
				return nil
			})
		})
	}
}

// TestNamedPipe: an h5ad path that is a named pipe is refused at once (open(2) on a FIFO
// blocks until a writer comes, beyond the reach of any signal handler or context).
func TestNamedPipe(t *testing.T) {
	need(t)
	fifo := filepath.Join(t.TempDir(), "pipe.h5ad")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := Open(fifo, Options{})
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, inputfile.ErrNotRegular) || !strings.Contains(err.Error(), fifo) {
			t.Fatalf("error %v, want ErrNotRegular naming the pipe", err)
		}
	case <-time.After(20 * time.Second):
		// Unblock the open with a writer so that the test ends.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatal("Open blocked on a named pipe")
	}
}

// TestCSCInPieces sorts a CSC matrix reading its values and column pointers in windows
// smaller than both: the cells are those of one read.
func TestCSCInPieces(t *testing.T) {
	need(t)
	exp := loadExpected(t)["small_csc"]
	for _, step := range []int64{1, 3, 17} {
		f, err := Open(filepath.Join(fixtures, "small_csc.h5ad"), Options{TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		f.sortStep = step
		var b scdl.Block
		b.Reset(f.ObsSchema())
		rows, _ := f.Shape()
		err = f.ReadRows(0, rows, &b)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		compareRows(t, "csc", exp.Rows, func(i int64) ([]float32, []uint32) {
			return b.Vals[b.Indptr[i]:b.Indptr[i+1]], b.Cols[b.Indptr[i]:b.Indptr[i+1]]
		})
	}
}

// TestDenseInPieces reads a dense matrix with a read budget below its width and below its
// rows × width: the cells are those of the budget-free read.
func TestDenseInPieces(t *testing.T) {
	need(t)
	exp := loadExpected(t)["small_dense"]
	for _, budget := range []int64{7, 50, 120} {
		f, err := Open(filepath.Join(fixtures, "small_dense.h5ad"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		f.denseValues = budget
		var b scdl.Block
		b.Reset(f.ObsSchema())
		rows, _ := f.Shape()
		if err := f.ReadRows(0, rows, &b); err != nil {
			t.Fatal(err)
		}
		f.Close()
		compareRows(t, "dense", exp.Rows, func(i int64) ([]float32, []uint32) {
			return b.Vals[b.Indptr[i]:b.Indptr[i+1]], b.Cols[b.Indptr[i]:b.Indptr[i+1]]
		})
	}
}
