//go:build unix

package scdl

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileArchive writes a 10-cell, 50-gene archive (row_ptr and col_ptr uint8) and returns
// its directory and its input.
func hostileArchive(t *testing.T) (string, *memInput) {
	t.Helper()
	in := randomInput("in.h5ad", 7, 10, 50, 0.3)
	dir := filepath.Join(t.TempDir(), "arch")
	if _, err := Write(context.Background(), dir, []Input{in}, Options{Workers: 1}); err != nil {
		t.Fatal(err)
	}
	return dir, in
}

// moveOut copies member rel of dir to a file outside the archive and replaces the member
// with a symbolic link to that copy: the archive's content is unchanged, only its shape.
func moveOut(t *testing.T, dir, rel string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	out := filepath.Join(t.TempDir(), "elsewhere-"+filepath.Base(rel))
	if err := os.Rename(p, out); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, p); err != nil {
		t.Fatal(err)
	}
}

func replaceWith(t *testing.T, dir, rel string, make func(p string) error) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	if err := make(p); err != nil {
		t.Fatal(err)
	}
}

func fifo(p string) error { return syscall.Mkfifo(p, 0o644) }

// sparse makes p a file of size bytes without writing them (a file with a hole).
func sparse(size int64) func(p string) error {
	return func(p string) error {
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return f.Truncate(size)
	}
}

// setBytes overwrites bytes of member rel at off.
func setBytes(t *testing.T, dir, rel string, off int64, b ...byte) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, rel), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// rewriteHeader parses header.sch, lets edit change it and writes it back.
func rewriteHeader(t *testing.T, dir string, edit func(h *Header)) {
	t.Helper()
	p := filepath.Join(dir, HeaderFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	h, err := ParseHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	edit(h)
	if b, err = h.MarshalBinary(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// hugeCell makes cell 0 span n values: row_ptr becomes uint64 [0, n, n, ...], data and
// col_ptr sparse files of n values, the header and the arrays agreeing.
func hugeCell(n uint64) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		rows := int64(10)
		rp := make([]byte, 0, 8*(rows+1))
		rp = binary.LittleEndian.AppendUint64(rp, 0)
		for range rows {
			rp = binary.LittleEndian.AppendUint64(rp, n)
		}
		if err := os.WriteFile(filepath.Join(dir, RowPtrFile), rp, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct {
			name string
			size int64
		}{{DataFile, int64(n) * 4}, {ColPtrFile, int64(n)}} {
			if err := sparse(f.size)(filepath.Join(dir, f.name)); err != nil {
				t.Skipf("no sparse file of %d bytes here: %v", f.size, err)
			}
		}
		rewriteHeader(t, dir, func(h *Header) {
			h.Array(ArrayRowPtr).DType = Uint64
			h.Array(ArrayData).Length = n
			h.Array(ArrayColPtr).Length = n
		})
	}
}

// exercise opens dir, verifies it and reads every cell as a conversion does, each with a
// watchdog: a named pipe must never block open(2).
func exercise(t *testing.T, dir string) (openErr, verifyErr, readErr error) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r, err := Open(dir)
		if err != nil {
			openErr = err
			return
		}
		in := NewArchiveInput(r)
		defer in.Close()
		_, verifyErr = r.Verify()
		var b Block
		b.Reset(in.ObsSchema())
		readErr = in.ReadRows(0, r.NumRows(), &b)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("blocked: an archive member was opened without O_NONBLOCK")
	}
	return
}

// TestHostileArchives: archives whose members lead out of them, are named pipes, are too
// large to read, or hold pointers that verify refuses. Each is refused by Open, or by both
// Verify and ReadRows (the conversion's path), with an error naming the archive and the
// member.
func TestHostileArchives(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(t *testing.T, dir string)
		is     error  // the error wraps it (nil: any)
		want   string // and says this
	}{
		// Symbolic links: the member's bytes would come from elsewhere.
		{"data.npy links out", func(t *testing.T, d string) { moveOut(t, d, DataFile) }, ErrMember, "data.npy is a symbolic link"},
		{"row_ptr.npy links out", func(t *testing.T, d string) { moveOut(t, d, RowPtrFile) }, ErrMember, "row_ptr.npy is a symbolic link"},
		{"col_ptr.npy links out", func(t *testing.T, d string) { moveOut(t, d, ColPtrFile) }, ErrMember, "col_ptr.npy is a symbolic link"},
		{"header.sch links out", func(t *testing.T, d string) { moveOut(t, d, HeaderFile) }, ErrMember, "header.sch is a symbolic link"},
		{"metadata.json links out", func(t *testing.T, d string) { moveOut(t, d, MetadataFile) }, ErrMember, "metadata.json is a symbolic link"},
		{"labels.json links out", func(t *testing.T, d string) { moveOut(t, d, VarFeatures+"/"+LabelsFile) }, ErrMember, "var_features/labels.json is a symbolic link"},
		{"labels.npy links out", func(t *testing.T, d string) { moveOut(t, d, ObsFeatures+"/"+LabelsNPYFile) }, ErrMember, "obs_features/labels.npy is a symbolic link"},
		{"cumulative sum links out", func(t *testing.T, d string) { moveOut(t, d, ObsFeatures+"/"+CumSumFile) }, ErrMember, "obs_features/cumulative_sum_index.npy is a symbolic link"},
		{"var table links out", func(t *testing.T, d string) { moveOut(t, d, VarFeatures+"/dataframe_0.parquet") }, ErrMember, "var_features/dataframe_0.parquet is a symbolic link"},
		{"obs directory links out", func(t *testing.T, d string) { moveOut(t, d, ObsFeatures) }, ErrMember, "leads out of the archive"},
		{"data.npy links inside", func(t *testing.T, d string) {
			os.Rename(filepath.Join(d, DataFile), filepath.Join(d, "other.npy"))
			os.Symlink("other.npy", filepath.Join(d, DataFile))
		}, ErrMember, "data.npy is a symbolic link"},
		{"labels.json links to /dev/zero", func(t *testing.T, d string) {
			replaceWith(t, d, VarFeatures+"/"+LabelsFile, func(p string) error { return os.Symlink("/dev/zero", p) })
		}, ErrMember, "labels.json is a symbolic link"},
		{"cumulative sum links to /dev/zero", func(t *testing.T, d string) {
			replaceWith(t, d, VarFeatures+"/"+CumSumFile, func(p string) error { return os.Symlink("/dev/zero", p) })
		}, ErrMember, "cumulative_sum_index.npy is a symbolic link"},
		{"metadata.json links to /dev/zero", func(t *testing.T, d string) {
			replaceWith(t, d, MetadataFile, func(p string) error { return os.Symlink("/dev/zero", p) })
		}, ErrMember, "metadata.json is a symbolic link"},

		// Named pipes and other non-regular members: refused without blocking.
		{"metadata.json is a FIFO", func(t *testing.T, d string) { replaceWith(t, d, MetadataFile, fifo) }, ErrMember, "metadata.json is a named pipe"},
		{"data.npy is a FIFO", func(t *testing.T, d string) { replaceWith(t, d, DataFile, fifo) }, ErrMember, "data.npy is a named pipe"},
		{"header.sch is a FIFO", func(t *testing.T, d string) { replaceWith(t, d, HeaderFile, fifo) }, ErrMember, "header.sch is a named pipe"},
		{"labels.json is a FIFO", func(t *testing.T, d string) { replaceWith(t, d, ObsFeatures+"/"+LabelsFile, fifo) }, ErrMember, "labels.json is a named pipe"},
		{"labels.npy is a FIFO", func(t *testing.T, d string) { replaceWith(t, d, VarFeatures+"/"+LabelsNPYFile, fifo) }, ErrMember, "labels.npy is a named pipe"},
		{"var table is a FIFO", func(t *testing.T, d string) { replaceWith(t, d, VarFeatures+"/dataframe_0.parquet", fifo) }, ErrMember, "dataframe_0.parquet is a named pipe"},
		{"col_ptr.npy is a directory", func(t *testing.T, d string) {
			replaceWith(t, d, ColPtrFile, func(p string) error { return os.Mkdir(p, 0o755) })
		}, ErrMember, "col_ptr.npy is a directory"},

		// Side files too large to read whole: refused by their size, before reading.
		{"metadata.json huge", func(t *testing.T, d string) { replaceWith(t, d, MetadataFile, sparse(MaxSmallFile+1)) }, ErrInvalid, `metadata.json: rule "file size"`},
		{"labels.json huge", func(t *testing.T, d string) { replaceWith(t, d, VarFeatures+"/"+LabelsFile, sparse(MaxIndexFile+1)) }, ErrInvalid, `labels.json: rule "file size"`},
		{"labels.npy huge", func(t *testing.T, d string) { replaceWith(t, d, VarFeatures+"/"+LabelsNPYFile, sparse(MaxIndexFile+1)) }, ErrInvalid, `labels.npy: rule "file size"`},
		{"cumulative sum huge", func(t *testing.T, d string) { replaceWith(t, d, ObsFeatures+"/"+CumSumFile, sparse(MaxIndexFile+1)) }, ErrInvalid, `cumulative_sum_index.npy: rule "file size"`},
		{"header.sch huge", func(t *testing.T, d string) { replaceWith(t, d, HeaderFile, sparse(maxHeaderSize+1)) }, ErrInvalid, `header.sch: rule "file size"`},

		// Pointers verify refuses: the conversion refuses them too.
		{"row_ptr[0] = 3", func(t *testing.T, d string) { setBytes(t, d, RowPtrFile, 0, 3) }, ErrInvalid, `rule "row_ptr starts at 0"`},
		{"col_ptr[7] = 200 of 50 genes", func(t *testing.T, d string) { setBytes(t, d, ColPtrFile, 7, 200) }, ErrInvalid, "col_ptr[7] = 200 for cell"},
		{"row_ptr decreases", func(t *testing.T, d string) { setBytes(t, d, RowPtrFile, 5, 0) }, ErrInvalid, `rule "row_ptr monotonic"`},
		{"row_ptr ends short", func(t *testing.T, d string) {
			b, _ := os.ReadFile(filepath.Join(d, RowPtrFile))
			setBytes(t, d, RowPtrFile, 10, b[9])
		}, ErrInvalid, `rule "row_ptr ends at nnz"`},
		{"cell of 2^20 values, 50 genes", hugeCell(1 << 20), ErrInvalid, `rule "values per cell"`},
		{"cell of 2^33 values, 50 genes", hugeCell(1 << 33), ErrInvalid, "cell 0 spans [0, 8589934592): 8589934592 values for 50 genes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := hostileArchive(t)
			c.mutate(t, dir)
			openErr, verifyErr, readErr := exercise(t, dir)
			errs := []error{openErr}
			if openErr == nil {
				errs = []error{verifyErr, readErr}
			}
			for k, err := range errs {
				if err == nil {
					t.Fatalf("step %d accepted the archive", k)
				}
				if c.is != nil && !errors.Is(err, c.is) {
					t.Errorf("error %v does not wrap %v", err, c.is)
				}
				if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dir) {
					t.Errorf("error %q does not name the archive and say %q", err, c.want)
				}
			}
		})
	}
}

// TestHeaderlessArchive: BioNeMo loads an archive without header.sch (the dtypes then come
// from dtypes.json or its defaults); so does Open. A directory that is no archive says what
// it lacks.
func TestHeaderlessArchive(t *testing.T) {
	// Rewrite the arrays in BioNeMo's default dtypes: data float32, col_ptr uint32, row_ptr uint64.
	widen := func(t *testing.T, dir string) {
		for _, a := range []struct {
			file       string
			from, into int
		}{{RowPtrFile, 1, 8}, {ColPtrFile, 1, 4}} {
			b, err := os.ReadFile(filepath.Join(dir, a.file))
			if err != nil {
				t.Fatal(err)
			}
			out := make([]byte, len(b)*a.into)
			for i, x := range b {
				out[i*a.into] = x
			}
			os.WriteFile(filepath.Join(dir, a.file), out, 0o644)
		}
	}
	t.Run("default dtypes", func(t *testing.T) {
		dir, in := hostileArchive(t)
		widen(t, dir)
		os.Remove(filepath.Join(dir, HeaderFile))
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if r.HasHeader() {
			t.Fatal("HasHeader without header.sch")
		}
		if d, rp, cp := r.DTypes(); d != Float32 || rp != Uint64 || cp != Uint32 {
			t.Fatalf("dtypes %s %s %s", d, rp, cp)
		}
		if _, err := r.Verify(); err != nil {
			t.Fatal(err)
		}
		checkCells(t, r, in)
	})
	t.Run("dtypes.json", func(t *testing.T) {
		dir, in := hostileArchive(t)
		os.Remove(filepath.Join(dir, HeaderFile))
		os.WriteFile(filepath.Join(dir, DTypesFile), []byte(`{"data.npy": "float32", "row_ptr.npy": "uint8", "col_ptr.npy": "uint8"}`), 0o644)
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if _, err := r.Verify(); err != nil {
			t.Fatal(err)
		}
		checkCells(t, r, in)
	})
	bad := []struct {
		name   string
		mutate func(t *testing.T, dir string)
		is     error
		want   string
	}{
		{"dtypes do not fit", func(t *testing.T, d string) { os.Remove(filepath.Join(d, HeaderFile)) }, ErrInvalid,
			"no header.sch: 11 bytes are not a whole number of uint64 elements"},
		{"dangling header.sch", func(t *testing.T, d string) {
			replaceWith(t, d, HeaderFile, func(p string) error { return os.Symlink("/nonexistent/header.sch", p) })
		}, ErrMember, "header.sch is a symbolic link"},
		{"empty directory", func(t *testing.T, d string) {
			ents, _ := os.ReadDir(d)
			for _, e := range ents {
				os.RemoveAll(filepath.Join(d, e.Name()))
			}
		}, ErrNotArchive, "has none of header.sch, metadata.json, data.npy, row_ptr.npy, col_ptr.npy"},
		{"no header, no arrays", func(t *testing.T, d string) {
			for _, f := range []string{HeaderFile, DataFile, ColPtrFile} {
				os.Remove(filepath.Join(d, f))
			}
		}, ErrInvalid, "no header.sch and no data.npy, col_ptr.npy"},
		{"bad dtypes.json", func(t *testing.T, d string) {
			os.Remove(filepath.Join(d, HeaderFile))
			os.WriteFile(filepath.Join(d, DTypesFile), []byte(`{"data.npy": "complex128"}`), 0o644)
		}, ErrInvalid, `dtypes.json: rule "dtypes": data.npy: unknown dtype "complex128"`},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := hostileArchive(t)
			c.mutate(t, dir)
			_, err := Open(dir)
			if err == nil || !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("Open: %v; want %v saying %q", err, c.is, c.want)
			}
		})
	}
}

// FuzzArchivePointers: whatever row_ptr and col_ptr hold, reading every cell (what a
// conversion does) succeeds exactly when Verify does, and never panics.
func FuzzArchivePointers(f *testing.F) {
	in := randomInput("in.h5ad", 7, 10, 50, 0.3)
	dir := filepath.Join(f.TempDir(), "arch")
	if _, err := Write(context.Background(), dir, []Input{in}, Options{Workers: 1}); err != nil {
		f.Fatal(err)
	}
	rp, _ := os.ReadFile(filepath.Join(dir, RowPtrFile))
	cp, _ := os.ReadFile(filepath.Join(dir, ColPtrFile))
	f.Add(rp, cp)
	f.Add(append([]byte{3}, rp[1:]...), cp)
	f.Add(rp, append([]byte{200}, cp[1:]...))
	f.Fuzz(func(t *testing.T, rowPtr, colPtr []byte) {
		if len(rowPtr) != len(rp) || len(colPtr) != len(cp) {
			return
		}
		os.WriteFile(filepath.Join(dir, RowPtrFile), rowPtr, 0o644)
		os.WriteFile(filepath.Join(dir, ColPtrFile), colPtr, 0o644)
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		_, verr := r.Verify()
		var b Block
		b.Reset(nil)
		rerr := r.readCells(0, r.NumRows(), &b)
		if (verr == nil) != (rerr == nil) {
			t.Fatalf("verify: %v; reading the cells: %v", verr, rerr)
		}
		// Any range of cells obeys the same rules as the whole.
		for lo := int64(0); lo < r.NumRows() && verr == nil; lo += 3 {
			b.Reset(nil)
			if err := r.readCells(lo, min(lo+3, r.NumRows()), &b); err != nil {
				t.Fatalf("cells from %d: %v", lo, err)
			}
		}
	})
}
