package mtx10x

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/format/scdl"
)

func FuzzParseEntry(f *testing.F) {
	for _, s := range []string{"1 2 3", "10\t20\t1.5e3", "1 1", "x 1 1", "1 2 3 4", "99999999999999999999 1 1"} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, s []byte, pattern bool) {
		field := "real"
		if pattern {
			field = "pattern"
		}
		g, c, _, ok := parseEntry(s, field)
		if ok && (g < 0 || c < 0) {
			t.Fatalf("negative index accepted: %d %d", g, c)
		}
	})
}

// FuzzMatrixFile runs whole small Matrix Market files through the reader and the archive
// writer: any input ends in an archive or a clean error, never a panic.
func FuzzMatrixFile(f *testing.F) {
	f.Add([]byte("%%MatrixMarket matrix coordinate integer general\n3 2 2\n1 1 5\n3 2 1\n"))
	f.Add([]byte("%%MatrixMarket matrix coordinate real general\n%c\n3 2 1\n2 2 0.5\n"))
	f.Add([]byte("%%MatrixMarket matrix coordinate pattern general\n3 2 1\n2 2\n"))
	f.Fuzz(func(t *testing.T, mtx []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "matrix.mtx"), mtx, 0o644)
		os.WriteFile(filepath.Join(dir, "genes.tsv"), []byte("g1\tA\ng2\tB\ng3\tC\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "barcodes.tsv"), []byte("c1\nc2\n"), 0o644)
		d, err := Open(dir, Options{TempDir: t.TempDir()})
		if err != nil {
			return
		}
		defer d.Close()
		if r, c := d.Shape(); r > 1000 || c > 1000 {
			return // a size line promising a huge matrix: not what this target explores
		}
		out := filepath.Join(t.TempDir(), "x")
		if _, err := scdl.Write(context.Background(), out, []scdl.Input{d}, scdl.Options{Workers: 2}); err == nil {
			r, err := scdl.Open(out)
			if err != nil {
				t.Fatalf("written archive does not open: %v", err)
			}
			defer r.Close()
			if _, err := r.Verify(); err != nil {
				t.Fatalf("written archive does not verify: %v", err)
			}
		}
	})
}

// FuzzSideFiles runs features.tsv and barcodes.tsv contents through Var and the barcode
// index: any input ends in tables of exactly the matrix's genes and cells or a clean
// ErrFormat, never a panic.
func FuzzSideFiles(f *testing.F) {
	f.Add([]byte("g1\tA\ng2\tB\ng3\tC\n"), []byte("c1\nc2\n"))
	f.Add([]byte("g1\tA\tGene Expression\r\ng2\tB\tGene Expression\r\ng3\tC\tGene Expression\r\n"), []byte("c1\tx\nc2"))
	f.Add([]byte("g1\n\n\ng2\tB"), []byte("\n\nc1\nc2\nc3\n"))
	f.Fuzz(func(t *testing.T, features, barcodes []byte) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "matrix.mtx"), []byte("%%MatrixMarket matrix coordinate integer general\n3 2 1\n1 1 1\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "genes.tsv"), features, 0o644)
		os.WriteFile(filepath.Join(dir, "barcodes.tsv"), barcodes, 0o644)
		d, err := Open(dir, Options{TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if cols, err := d.Var(); err == nil {
			for _, c := range cols {
				if len(c.Strings) != 3 {
					t.Fatalf("column %s has %d values for 3 genes", c.Name, len(c.Strings))
				}
			}
		} else if !errors.Is(err, ErrFormat) {
			t.Fatalf("features: %v", err)
		}
		var b scdl.Block
		b.Reset(d.ObsSchema())
		if err := d.ReadRows(0, 2, &b); err == nil {
			if len(b.Obs[0].Strings) != 2 {
				t.Fatalf("%d barcodes for 2 cells", len(b.Obs[0].Strings))
			}
		} else if !errors.Is(err, ErrFormat) {
			t.Fatalf("barcodes: %v", err)
		}
	})
}
