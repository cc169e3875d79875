package mtx10x

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mldf/convert/format/scdl"
	"github.com/mldf/convert/internal/inputfile"
)

// testdata/scdl/tenx was written by make_fixtures.py from the matrix of other_genes.h5ad,
// its entries shuffled; expected.json holds its cells.
const fixtures = "../../testdata/scdl"

func TestTenXMatchesMatrix(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(fixtures, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp map[string]struct {
		Rows [][2][]float64 `json:"rows"`
	}
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	d, err := Open(filepath.Join(fixtures, "tenx"), Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if r, c := d.Shape(); r != 25 || c != 30 {
		t.Fatalf("shape %d x %d", r, c)
	}
	dir := filepath.Join(t.TempDir(), "tenx.scdl")
	rep, err := scdl.Write(context.Background(), dir, []scdl.Input{d}, scdl.Options{Workers: 2, ChunkNNZ: 30})
	if err != nil {
		t.Fatal(err)
	}
	r, err := scdl.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	want := exp["tenx"].Rows
	if rep.Cells != int64(len(want)) {
		t.Fatalf("%d cells", rep.Cells)
	}
	for i, w := range want {
		vals, cols, err := r.Row(int64(i), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(vals) != len(w[0]) {
			t.Fatalf("cell %d: %d values, want %d", i, len(vals), len(w[0]))
		}
		for k := range vals {
			if vals[k] != float32(w[0][k]) || float64(cols[k]) != w[1][k] {
				t.Fatalf("cell %d value %d: %v@%d, want %v@%v", i, k, vals[k], cols[k], w[0][k], w[1][k])
			}
		}
	}
	obs, err := scdl.ReadTable(r.Obs.Blocks[0])
	if err != nil {
		t.Fatal(err)
	}
	if obs.Columns[0].Name != scdl.ObsIndexColumn || obs.Columns[0].Strings[3] != "AAACCTG0003-1" {
		t.Fatalf("barcodes %+v", obs.Columns)
	}
	vt, err := scdl.ReadTable(r.Var.Blocks[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(vt.Columns) != 2 || vt.Columns[0].Name != "gene_ids" || vt.Columns[1].Strings[0] != "Gene Expression" {
		t.Fatalf("features %+v", vt.Columns)
	}
}

func writeDir(t *testing.T, mtx, features, barcodes string) string {
	t.Helper()
	dir := t.TempDir()
	for name, s := range map[string]string{"matrix.mtx.gz": mtx, "genes.tsv": features, "barcodes.tsv": barcodes} {
		if name == "matrix.mtx.gz" {
			f, _ := os.Create(filepath.Join(dir, name))
			z := gzip.NewWriter(f)
			z.Write([]byte(s))
			z.Close()
			f.Close()
			continue
		}
		os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644)
	}
	return dir
}

func TestBadDirectories(t *testing.T) {
	const genes = "g1\tA\ng2\tB\ng3\tC\n"
	const bcs = "c1\nc2\n"
	cases := map[string][3]string{
		"banner":         {"%%MatrixMarket matrix array real general\n3 2 1\n1 1 1\n", genes, bcs},
		"symmetric":      {"%%MatrixMarket matrix coordinate real symmetric\n3 2 1\n1 1 1\n", genes, bcs},
		"out of range":   {"%%MatrixMarket matrix coordinate integer general\n3 2 1\n4 1 1\n", genes, bcs},
		"bad entry":      {"%%MatrixMarket matrix coordinate integer general\n3 2 1\n1 x 1\n", genes, bcs},
		"count":          {"%%MatrixMarket matrix coordinate integer general\n3 2 2\n1 1 1\n", genes, bcs},
		"barcode count":  {"%%MatrixMarket matrix coordinate integer general\n3 2 1\n1 1 1\n", genes, "c1\n"},
		"features count": {"%%MatrixMarket matrix coordinate integer general\n3 2 1\n1 1 1\n", "g1\tA\n", bcs},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			d, err := Open(writeDir(t, c[0], c[1], c[2]), Options{TempDir: t.TempDir()})
			if err == nil {
				defer d.Close()
				_, err = scdl.Write(context.Background(), filepath.Join(parent, "x"), []scdl.Input{d}, scdl.Options{Workers: 2})
			}
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v, want ErrFormat", err)
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Fatalf("left %v", entries)
			}
		})
	}
	if _, err := Open(t.TempDir(), Options{}); !errors.Is(err, ErrFormat) {
		t.Fatalf("empty directory: %v", err)
	}
}

// writeFiles writes a 10x directory: names ending in .gz are gzipped.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, s := range files {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".gz") {
			z := gzip.NewWriter(f)
			z.Write([]byte(s))
			z.Close()
		} else {
			f.WriteString(s)
		}
		f.Close()
	}
	return dir
}

// TestHostileDirectories: lines over MaxLineBytes and files with more lines than the size
// line announces are errors found after reading at most one line too many, naming the
// file and the line, in a message of bounded length.
func TestHostileDirectories(t *testing.T) {
	const mtx = "%%MatrixMarket matrix coordinate integer general\n3 2 1\n1 1 1\n"
	const genes = "g1\tA\tGene Expression\ng2\tB\tGene Expression\ng3\tC\tGene Expression\n"
	const bcs = "c1\nc2\n"
	long := strings.Repeat("x", 2*MaxLineBytes)
	many := strings.Repeat("c\n", 1<<16)
	cases := []struct {
		name, mtx, genes, bcs, want string
	}{
		{"long comment", "%%MatrixMarket matrix coordinate integer general\n%" + long + "\n3 2 1\n1 1 1\n", genes, bcs, "matrix.mtx.gz:2:"},
		{"long banner", "%%MatrixMarket matrix coordinate integer general " + long + "\n3 2 1\n1 1 1\n", genes, bcs, "matrix.mtx.gz:1:"},
		{"long size line", "%%MatrixMarket matrix coordinate integer general\n3 2 1 " + long + "\n1 1 1\n", genes, bcs, "matrix.mtx.gz:2:"},
		{"long entry", mtx + "1 2 " + long + "\n", genes, bcs, "matrix.mtx.gz:4:"},
		{"long feature", mtx, "g1\tA\ng2\t" + long + "\ng3\tC\n", bcs, "features.tsv.gz:2:"},
		{"long barcode", mtx, genes, "c1\n" + long + "\n", "barcodes.tsv.gz:2:"},
		{"more entries", "%%MatrixMarket matrix coordinate integer general\n3 2 1\n1 1 1\n" + strings.Repeat("2 2 1\n", 1<<16), genes, bcs, "matrix.mtx.gz:4:"},
		{"more features", mtx, genes + strings.Repeat("g\tG\n", 1<<16), bcs, "features.tsv.gz:4:"},
		{"more barcodes", mtx, genes, bcs + many, "barcodes.tsv.gz:3:"},
		{"banner quoted", "%%MatrixMarket \x1b[31m" + long[:1<<15] + "\n", genes, bcs, "matrix.mtx.gz:1:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"matrix.mtx.gz": c.mtx, "features.tsv.gz": c.genes, "barcodes.tsv.gz": c.bcs})
			parent := t.TempDir()
			d, err := Open(dir, Options{TempDir: t.TempDir()})
			if err == nil {
				defer d.Close()
				_, err = scdl.Write(context.Background(), filepath.Join(parent, "x"), []scdl.Input{d}, scdl.Options{Workers: 2})
			}
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v, want ErrFormat", err)
			}
			if msg := err.Error(); len(msg) > 2048 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\x1b") {
				t.Fatalf("error of %d bytes, want one naming %s: %.300q", len(msg), c.want, msg)
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Fatalf("left %v", entries)
			}
		})
	}
}

// TestNamedPipes: a named pipe in place of any of the three files is never opened (open(2)
// would block until a writer came).
func TestNamedPipes(t *testing.T) {
	for _, name := range []string{"matrix.mtx", "features.tsv", "barcodes.tsv"} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{"matrix.mtx": "%%MatrixMarket matrix coordinate integer general\n3 2 1\n1 1 1\n", "features.tsv": "g1\tA\ng2\tB\ng3\tC\n", "barcodes.tsv": "c1\nc2\n"}
			delete(files, name)
			dir := writeFiles(t, files)
			if err := syscall.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			d, err := Open(dir, Options{TempDir: t.TempDir()})
			if err == nil {
				defer d.Close()
				_, err = scdl.Write(context.Background(), filepath.Join(t.TempDir(), "x"), []scdl.Input{d}, scdl.Options{Workers: 2})
			}
			if !errors.Is(err, ErrFormat) && !errors.Is(err, inputfile.ErrNotRegular) {
				t.Fatalf("error %v, want the pipe refused", err)
			}
		})
	}
}
