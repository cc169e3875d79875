package mtx10x

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/scdl"
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
