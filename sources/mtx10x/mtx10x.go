// Package mtx10x reads a 10x Genomics matrix directory (matrix.mtx[.gz], features.tsv[.gz]
// or genes.tsv[.gz], barcodes.tsv[.gz]) by ranges of cells, in pure Go. It implements
// scdl.Input. The Matrix Market entries may come in any order: a first pass bucket-sorts them
// by cell into temporary files (internal/cellsort) and copies the barcodes to an indexed
// temporary file, so memory stays bounded by a few row ranges whatever the cell count.
package mtx10x

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"

	"github.com/mldf/convert/format/scdl"
	"github.com/mldf/convert/internal/cellsort"
	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/internal/quote"
)

// ErrFormat wraps every error about the directory's content.
var ErrFormat = errors.New("10x matrix")

// MaxLineBytes bounds every line of the three files (the banner, comments, the size line,
// entries, features, barcodes): a longer line is an error, found after reading at most this
// many bytes of it.
const MaxLineBytes = 64 << 10

// errLineTooLong is returned by readLine for a line over MaxLineBytes.
var errLineTooLong = fmt.Errorf("%w: line longer than %d bytes", ErrFormat, MaxLineBytes)

// readLine returns the next line without its terminator ("\n", "\r\n"): the slice is valid
// until the next read. At the end of the input it returns io.EOF (after the last line, also
// one without a terminator); a line over MaxLineBytes is errLineTooLong.
func readLine(r *bufio.Reader) ([]byte, error) {
	s, err := r.ReadSlice('\n')
	if len(s) > MaxLineBytes+2 || err == bufio.ErrBufferFull {
		return nil, errLineTooLong
	}
	if err != nil && (err != io.EOF || len(s) == 0) {
		return nil, err
	}
	s = bytes.TrimSuffix(s, []byte("\n"))
	s = bytes.TrimSuffix(s, []byte("\r"))
	if len(s) > MaxLineBytes {
		return nil, errLineTooLong
	}
	return s, nil
}

// Options configure Open.
type Options struct {
	// TempDir holds the sort's bucket files and the barcode index ("": the system's).
	TempDir string
}

// Dir is an open 10x directory.
type Dir struct {
	path                      string
	matrix, features, barcode string
	genes, cells, entries     int64
	field                     string // integer, real or pattern
	tempDir                   string

	once    sync.Once
	prepErr error
	sorter  *cellsort.Sorter
	tmp     string   // temporary directory of the barcode copy
	bcData  *os.File // barcodes, concatenated
	bcIndex *os.File // cells+1 uint64 offsets into bcData
}

// Open finds the directory's files and reads the matrix header (its size line).
func Open(path string, opt Options) (*Dir, error) {
	d := &Dir{path: path, tempDir: opt.TempDir}
	pick := func(names ...string) string {
		for _, n := range names {
			if fi, err := os.Stat(filepath.Join(path, n)); err == nil && fi.Mode().IsRegular() {
				return filepath.Join(path, n)
			}
		}
		return ""
	}
	d.matrix = pick("matrix.mtx.gz", "matrix.mtx")
	d.features = pick("features.tsv.gz", "features.tsv", "genes.tsv.gz", "genes.tsv")
	d.barcode = pick("barcodes.tsv.gz", "barcodes.tsv")
	switch {
	case d.matrix == "":
		return nil, fmt.Errorf("%s: %w: no matrix.mtx[.gz]", path, ErrFormat)
	case d.features == "":
		return nil, fmt.Errorf("%s: %w: no features.tsv[.gz] or genes.tsv", path, ErrFormat)
	case d.barcode == "":
		return nil, fmt.Errorf("%s: %w: no barcodes.tsv[.gz]", path, ErrFormat)
	}
	r, closer, err := openText(d.matrix)
	if err != nil {
		return nil, err
	}
	defer closer()
	if _, err := d.header(r); err != nil {
		return nil, err
	}
	return d, nil
}

// openText opens a plain or gzipped text file, which must be a regular file (a named pipe
// is refused without blocking).
func openText(path string) (*bufio.Reader, func(), error) {
	f, _, err := inputfile.OpenRegular(path)
	if err != nil {
		return nil, nil, err
	}
	if !strings.HasSuffix(path, ".gz") {
		return bufio.NewReaderSize(f, 1<<20), func() { f.Close() }, nil
	}
	z, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w: %w", path, ErrFormat, err)
	}
	return bufio.NewReaderSize(z, 1<<20), func() { z.Close(); f.Close() }, nil
}

// header reads the banner, comments and size line; it returns the line number reached.
func (d *Dir) header(r *bufio.Reader) (int, error) {
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %w: %s", d.matrix, line, ErrFormat, fmt.Sprintf(format, args...))
	}
	b, err := readLine(r)
	if err == io.EOF {
		return 0, bad(1, "empty file")
	}
	if err != nil {
		return 0, d.lineErr(1, err)
	}
	banner := string(b)
	f := strings.Fields(strings.ToLower(banner))
	if len(f) != 5 || f[0] != "%%matrixmarket" || f[1] != "matrix" || f[2] != "coordinate" {
		return 0, bad(1, "not a Matrix Market coordinate matrix: %s", quote.Q(strings.TrimSpace(banner)))
	}
	if f[4] != "general" {
		return 0, bad(1, "%s symmetry is not supported (general only)", quote.Q(f[4]))
	}
	switch f[3] {
	case "integer", "real", "pattern":
		d.field = f[3]
	default:
		return 0, bad(1, "field %s is not supported (integer, real or pattern)", quote.Q(f[3]))
	}
	line := 1
	for {
		b, err := readLine(r)
		line++
		if err == io.EOF {
			return line, bad(line, "no size line")
		}
		if err != nil {
			return line, d.lineErr(line, err)
		}
		s := string(b)
		if strings.HasPrefix(s, "%") || strings.TrimSpace(s) == "" {
			continue
		}
		p := strings.Fields(s)
		if len(p) != 3 {
			return line, bad(line, "size line %s", quote.Q(strings.TrimSpace(s)))
		}
		var v [3]int64
		for i := range p {
			if v[i], err = strconv.ParseInt(p[i], 10, 64); err != nil || v[i] < 0 {
				return line, bad(line, "size line %s", quote.Q(strings.TrimSpace(s)))
			}
		}
		d.genes, d.cells, d.entries = v[0], v[1], v[2]
		return line, nil
	}
}

// lineErr wraps a read error of line n of the matrix file.
func (d *Dir) lineErr(n int, err error) error {
	return fmt.Errorf("%s:%d: %w", d.matrix, n, err)
}

// Name returns the directory's path.
func (d *Dir) Name() string { return d.path }

// Shape returns cells × genes (the file stores genes × cells).
func (d *Dir) Shape() (int64, int64) { return d.cells, d.genes }

// NNZ returns the entry count of the size line (duplicates are summed when read).
func (d *Dir) NNZ() int64 { return d.entries }

// ObsSchema is the barcodes: the obs index, with no other column.
func (d *Dir) ObsSchema() []scdl.ColumnSpec {
	return []scdl.ColumnSpec{{Name: "barcode", Kind: scdl.KindString, Index: true}}
}

// prepare sorts the entries by cell and indexes the barcodes (once, on the first read).
func (d *Dir) prepare() error {
	var err error
	if d.tmp, err = os.MkdirTemp(d.tempDir, "mtx10x-*"); err != nil {
		return err
	}
	if err := d.indexBarcodes(); err != nil {
		return err
	}
	if d.sorter, err = cellsort.New(d.tmp, max(d.cells, 1), max(d.genes, 1), scdl.MaxChunkRows); err != nil {
		return err
	}
	r, closer, err := openText(d.matrix)
	if err != nil {
		return err
	}
	defer closer()
	line, err := d.header(r)
	if err != nil {
		return err
	}
	var n int64
	for {
		s, err := readLine(r)
		if err == io.EOF {
			break
		}
		line++
		if err != nil {
			return d.lineErr(line, err)
		}
		s = bytes.TrimSpace(s)
		if len(s) == 0 || s[0] == '%' {
			continue
		}
		if n == d.entries {
			// Stop here: the sort's temporary files hold no more than the size line announced.
			return fmt.Errorf("%s:%d: %w: more entries than the %d the size line announces", d.matrix, line, ErrFormat, d.entries)
		}
		gene, cell, v, ok := parseEntry(s, d.field)
		if !ok {
			return fmt.Errorf("%s:%d: %w: bad entry %s", d.matrix, line, ErrFormat, quote.B(s))
		}
		if gene < 1 || gene > d.genes || cell < 1 || cell > d.cells {
			return fmt.Errorf("%s:%d: %w: entry (%d, %d) outside the %d x %d matrix", d.matrix, line, ErrFormat, gene, cell, d.genes, d.cells)
		}
		if err := d.sorter.Add(cell-1, gene-1, v); err != nil {
			return err
		}
		n++
	}
	if n != d.entries {
		return fmt.Errorf("%s: %w: the size line announces %d entries, the file has %d", d.matrix, ErrFormat, d.entries, n)
	}
	return d.sorter.Finish()
}

// parseEntry parses "gene cell [value]".
func parseEntry(s []byte, field string) (gene, cell int64, v float32, ok bool) {
	next := func() []byte {
		for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
			s = s[1:]
		}
		i := 0
		for i < len(s) && s[i] != ' ' && s[i] != '\t' {
			i++
		}
		tok := s[:i]
		s = s[i:]
		return tok
	}
	g, c := next(), next()
	var err error
	if gene, err = atoi(g); err != nil {
		return
	}
	if cell, err = atoi(c); err != nil {
		return
	}
	if field == "pattern" {
		return gene, cell, 1, len(bytes.TrimSpace(s)) == 0
	}
	x := next()
	if len(x) == 0 || len(bytes.TrimSpace(s)) != 0 {
		return
	}
	f, err := strconv.ParseFloat(string(x), 32)
	if err != nil {
		return
	}
	return gene, cell, float32(f), true
}

func atoi(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 18 {
		return 0, strconv.ErrSyntax
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
		n = n*10 + int64(c-'0')
	}
	return n, nil
}

// indexBarcodes copies the barcodes (first column) to a temporary file with an offset
// index, so a range of cells reads its barcodes with two positional reads.
func (d *Dir) indexBarcodes() error {
	r, closer, err := openText(d.barcode)
	if err != nil {
		return err
	}
	defer closer()
	if d.bcData, err = os.Create(filepath.Join(d.tmp, "barcodes")); err != nil {
		return err
	}
	if d.bcIndex, err = os.Create(filepath.Join(d.tmp, "barcodes.idx")); err != nil {
		return err
	}
	dw, iw := bufio.NewWriterSize(d.bcData, 1<<20), bufio.NewWriterSize(d.bcIndex, 1<<20)
	var off uint64
	var b8 [8]byte
	var n int64
	for line := 1; ; line++ {
		s, err := readLine(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", d.barcode, line, err)
		}
		if len(s) == 0 {
			continue
		}
		if n == d.cells {
			// Stop here: the temporary copy holds no more than the matrix's cells.
			return fmt.Errorf("%s:%d: %w: more barcodes than the %d cells of %s", d.barcode, line, ErrFormat, d.cells, filepath.Base(d.matrix))
		}
		bc, _, _ := bytes.Cut(s, []byte("\t"))
		binary.LittleEndian.PutUint64(b8[:], off)
		iw.Write(b8[:])
		dw.Write(bc)
		off += uint64(len(bc))
		n++
	}
	binary.LittleEndian.PutUint64(b8[:], off)
	iw.Write(b8[:])
	if err := dw.Flush(); err != nil {
		return err
	}
	if err := iw.Flush(); err != nil {
		return err
	}
	if n != d.cells {
		return fmt.Errorf("%s: %w: %d barcodes for %d cells in %s", d.barcode, ErrFormat, n, d.cells, filepath.Base(d.matrix))
	}
	return nil
}

// ReadRows reads cells [lo, hi). It may be called from many goroutines.
func (d *Dir) ReadRows(lo, hi int64, b *scdl.Block) error {
	d.once.Do(func() { d.prepErr = d.prepare() })
	if d.prepErr != nil {
		return d.prepErr
	}
	if lo < 0 || hi > d.cells || lo > hi {
		return fmt.Errorf("%s: cells [%d, %d) of %d", d.path, lo, hi, d.cells)
	}
	var err error
	if b.Indptr, b.Cols, b.Vals, err = d.sorter.Rows(lo, hi, b.Indptr, b.Cols, b.Vals); err != nil {
		return err
	}
	if b.Obs[0].Skip {
		return nil
	}
	idx := make([]byte, 8*(hi-lo+1))
	if _, err := d.bcIndex.ReadAt(idx, 8*lo); err != nil {
		return fmt.Errorf("%s: barcode index: %w", d.path, err)
	}
	first, last := binary.LittleEndian.Uint64(idx), binary.LittleEndian.Uint64(idx[8*(hi-lo):])
	buf := make([]byte, last-first)
	if _, err := d.bcData.ReadAt(buf, int64(first)); err != nil && !(err == io.EOF && len(buf) == 0) {
		return fmt.Errorf("%s: barcodes: %w", d.path, err)
	}
	col := &b.Obs[0]
	for i := range hi - lo {
		a := binary.LittleEndian.Uint64(idx[8*i:]) - first
		z := binary.LittleEndian.Uint64(idx[8*(i+1):]) - first
		col.Strings = append(col.Strings, string(buf[a:z]))
	}
	return nil
}

// Var reads the features: the gene symbols as index (scanpy's read_10x_mtx default), with
// the columns gene_ids and, for a features.tsv, feature_types.
func (d *Dir) Var() ([]scdl.Column, error) {
	r, closer, err := openText(d.features)
	if err != nil {
		return nil, err
	}
	defer closer()
	idx := scdl.Column{ColumnSpec: scdl.ColumnSpec{Name: "gene_symbols", Kind: scdl.KindString, Index: true}}
	ids := scdl.Column{ColumnSpec: scdl.ColumnSpec{Name: "gene_ids", Kind: scdl.KindString}}
	types := scdl.Column{ColumnSpec: scdl.ColumnSpec{Name: "feature_types", Kind: scdl.KindString}}
	for line := 1; ; line++ {
		b, err := readLine(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", d.features, line, err)
		}
		if len(b) == 0 {
			continue
		}
		if int64(len(ids.Strings)) == d.genes {
			// Stop here: memory holds no more features than the matrix has genes.
			return nil, fmt.Errorf("%s:%d: %w: more features than the %d genes of %s", d.features, line, ErrFormat, d.genes, filepath.Base(d.matrix))
		}
		f := strings.Split(string(b), "\t")
		if len(f) < 2 {
			return nil, fmt.Errorf("%s:%d: %w: %d columns (id, symbol[, type] expected)", d.features, line, ErrFormat, len(f))
		}
		ids.Strings = append(ids.Strings, f[0])
		idx.Strings = append(idx.Strings, f[1])
		if len(f) >= 3 {
			types.Strings = append(types.Strings, f[2])
		}
	}
	if int64(len(ids.Strings)) != d.genes {
		return nil, fmt.Errorf("%s: %w: %d features for %d genes in %s", d.features, ErrFormat, len(ids.Strings), d.genes, filepath.Base(d.matrix))
	}
	cols := []scdl.Column{idx, ids}
	if len(types.Strings) == len(ids.Strings) {
		cols = append(cols, types)
	}
	return cols, nil
}

// Close removes the temporary files.
func (d *Dir) Close() error {
	for _, f := range []*os.File{d.bcData, d.bcIndex} {
		if f != nil {
			f.Close()
		}
	}
	var err error
	if d.sorter != nil {
		err = d.sorter.Close()
	}
	if d.tmp != "" {
		if rerr := os.RemoveAll(d.tmp); err == nil {
			err = rerr
		}
	}
	return err
}
