package scdl

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/mldf/convert/internal/pqfile"
)

// Reader reads an SCDL archive (MEMMAP_V0 backend). Open checks the header and everything
// that is cheap to check (sizes, counts, the feature indices); Verify also scans the arrays.
// Its methods may be called from many goroutines.
type Reader struct {
	dir    string
	hdr    *Header
	data   *os.File
	rowptr *os.File
	colptr *os.File

	dataType, rowType, colType DType
	rows, nnz                  int64

	Var, Obs *FeatureIndex // nil when the archive has none
}

// FeatureIndex is a feature index directory as read back.
type FeatureIndex struct {
	Name   string
	Blocks []FeatureBlock
}

// FeatureBlock is one block: rows [Start, End) of the archive share its table.
type FeatureBlock struct {
	Start, End int64
	Label      string
	File       string // the parquet file's path
	TableRows  int64  // rows in the parquet table (genes for var, cells for obs)
	Columns    []ColumnSpec
}

// Block returns the index of the block holding row, or -1.
func (f *FeatureIndex) Block(row int64) int {
	i := sort.Search(len(f.Blocks), func(i int) bool { return f.Blocks[i].End > row })
	if i == len(f.Blocks) || row < f.Blocks[i].Start {
		return -1
	}
	return i
}

// Open opens the archive in dir and validates it as far as that is cheap: every rule of the
// header (ParseHeader), the arrays present with their files of the sizes the header says,
// metadata.json, and the feature indices (cumulative row counts, labels, parquet tables).
func Open(dir string) (*Reader, error) {
	r := &Reader{dir: dir}
	if err := r.open(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// IsArchive reports whether path is a directory with an SCDL header file.
func IsArchive(path string) bool {
	fi, err := os.Stat(filepath.Join(path, HeaderFile))
	return err == nil && fi.Mode().IsRegular()
}

func (r *Reader) open() error {
	hp := filepath.Join(r.dir, HeaderFile)
	fi, err := os.Stat(hp)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", r.dir, ErrInvalid, err)
	}
	if fi.Size() > maxHeaderSize {
		return fmt.Errorf("%s: %w", r.dir, ruleErr("header size", HeaderFile, "%d bytes (at most %d)", fi.Size(), maxHeaderSize))
	}
	b, err := os.ReadFile(hp)
	if err != nil {
		return fmt.Errorf("%s: %w", r.dir, err)
	}
	if r.hdr, err = ParseHeader(b); err != nil {
		return fmt.Errorf("%s: %w", r.dir, err)
	}
	if r.hdr.Backend != BackendMemmapV0 {
		return fmt.Errorf("%s: %w: backend %s (this reader reads MEMMAP_V0 archives)", r.dir, ErrUnsupported, r.hdr.Backend)
	}
	for _, a := range r.hdr.Arrays {
		if _, ok := arrayFiles[a.Name]; !ok {
			return fmt.Errorf("%s: %w", r.dir, ruleErr("array names", HeaderFile, "unknown array %q (BioNeMo knows DATA, ROWPTR, COLPTR)", a.Name))
		}
	}
	arr := func(name string, numeric bool) (*ArrayInfo, *os.File, error) {
		a := r.hdr.Array(name)
		where := fmt.Sprintf("%s (%s)", name, arrayFiles[name])
		if a == nil {
			return nil, nil, ruleErr("arrays present", HeaderFile, "no %s array", name)
		}
		if a.DType.Size() == 0 || (!numeric && a.DType >= Float16) {
			return nil, nil, ruleErr("dtype", where, "dtype %s", a.DType)
		}
		if a.Shape != nil && (len(a.Shape) != 1 || uint64(a.Shape[0]) != a.Length) {
			return nil, nil, ruleErr("shape", where, "shape %v for %d elements", a.Shape, a.Length)
		}
		f, err := os.Open(filepath.Join(r.dir, arrayFiles[name]))
		if err != nil {
			return nil, nil, ruleErr("array file", where, "%v", err)
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		if a.Length > math.MaxInt64/8 || st.Size() != int64(a.Length)*int64(a.DType.Size()) {
			f.Close()
			return nil, nil, ruleErr("array length", where, "file has %d bytes, the header says %d %s elements (%d bytes)",
				st.Size(), a.Length, a.DType, a.Length*uint64(a.DType.Size()))
		}
		return a, f, nil
	}
	da, df, err := arr(ArrayData, true)
	if err != nil {
		return fmt.Errorf("%s: %w", r.dir, err)
	}
	r.data, r.dataType = df, da.DType
	ra, rf, err := arr(ArrayRowPtr, false)
	if err != nil {
		return fmt.Errorf("%s: %w", r.dir, err)
	}
	r.rowptr, r.rowType = rf, ra.DType
	ca, cf, err := arr(ArrayColPtr, false)
	if err != nil {
		return fmt.Errorf("%s: %w", r.dir, err)
	}
	r.colptr, r.colType = cf, ca.DType
	if ra.Length == 0 {
		return fmt.Errorf("%s: %w", r.dir, ruleErr("row_ptr length", "ROWPTR (row_ptr.npy)", "empty: it holds cells+1 offsets"))
	}
	if ca.Length != da.Length {
		return fmt.Errorf("%s: %w", r.dir, ruleErr("nnz", "COLPTR (col_ptr.npy)", "%d elements, DATA has %d", ca.Length, da.Length))
	}
	r.rows, r.nnz = int64(ra.Length-1), int64(da.Length)

	mb, err := os.ReadFile(filepath.Join(r.dir, MetadataFile))
	if err != nil {
		return fmt.Errorf("%s: %w", r.dir, ruleErr("metadata", MetadataFile, "%v", err))
	}
	var meta struct {
		NumRows *int64 `json:"num_rows"`
	}
	if err := json.Unmarshal(mb, &meta); err != nil || meta.NumRows == nil {
		return fmt.Errorf("%s: %w", r.dir, ruleErr("metadata", MetadataFile, "no num_rows (%v)", err))
	}
	if *meta.NumRows != r.rows {
		return fmt.Errorf("%s: %w", r.dir, ruleErr("num_rows", MetadataFile, "num_rows %d, ROWPTR holds %d cells", *meta.NumRows, r.rows))
	}
	for _, fi := range r.hdr.Features {
		idx, err := r.openIndex(fi)
		if err != nil {
			return fmt.Errorf("%s: %w", r.dir, err)
		}
		switch fi.Name {
		case VarFeatures, "features":
			r.Var = idx
		case ObsFeatures:
			r.Obs = idx
		}
	}
	if r.Var != nil {
		last := r.Var.Blocks
		if len(last) == 0 || last[len(last)-1].End != r.rows {
			end := int64(0)
			if len(last) > 0 {
				end = last[len(last)-1].End
			}
			return fmt.Errorf("%s: %w", r.dir, ruleErr("var rows", VarFeatures+"/"+CumSumFile, "covers %d cells, the arrays hold %d", end, r.rows))
		}
	}
	if r.Obs != nil && len(r.Obs.Blocks) > 0 && r.Obs.Blocks[len(r.Obs.Blocks)-1].End != r.rows {
		return fmt.Errorf("%s: %w", r.dir, ruleErr("obs rows", ObsFeatures+"/"+CumSumFile, "covers %d cells, the arrays hold %d",
			r.Obs.Blocks[len(r.Obs.Blocks)-1].End, r.rows))
	}
	return nil
}

// openIndex reads a feature index directory's small files and its tables' footers.
func (r *Reader) openIndex(fi FeatureIndexInfo) (*FeatureIndex, error) {
	for _, p := range fi.Files {
		if filepath.IsAbs(p) || strings.Contains(p, "..") {
			return nil, ruleErr("index files", HeaderFile, "feature index %q names %q outside the archive", fi.Name, p)
		}
		if _, err := os.Stat(filepath.Join(r.dir, p)); err != nil {
			return nil, ruleErr("index files", fi.Name, "the header lists %s: %v", p, err)
		}
	}
	dir := filepath.Join(r.dir, fi.Name)
	where := fi.Name + "/" + CumSumFile
	cb, err := os.ReadFile(filepath.Join(dir, CumSumFile))
	if err != nil {
		return nil, ruleErr("feature index files", where, "%v", err)
	}
	cum, err := decodeInt64NPY(cb, where)
	if err != nil {
		return nil, err
	}
	if len(cum) == 0 || cum[0] != -1 {
		return nil, ruleErr("cumulative sum", where, "must start with -1, got %v", cum[:min(len(cum), 3)])
	}
	var labels []*string
	lb, err := os.ReadFile(filepath.Join(dir, LabelsFile))
	if err != nil {
		return nil, ruleErr("feature index files", fi.Name+"/"+LabelsFile, "%v", err)
	}
	if err := json.Unmarshal(lb, &labels); err != nil {
		return nil, ruleErr("labels", fi.Name+"/"+LabelsFile, "%v", err)
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	sort.Strings(tables)
	nb := len(cum) - 1
	if len(labels) != nb || len(tables) != nb {
		return nil, ruleErr("blocks", fi.Name, "%d cumulative counts, %d labels, %d parquet tables", nb, len(labels), len(tables))
	}
	idx := &FeatureIndex{Name: fi.Name}
	start := int64(0)
	for i := range nb {
		if cum[i+1] <= start && !(i == 0 && cum[1] == 0) {
			return nil, ruleErr("cumulative sum", where, "not increasing at block %d (%d after %d)", i, cum[i+1], start)
		}
		b := FeatureBlock{Start: start, End: cum[i+1], File: tables[i]}
		if labels[i] != nil {
			b.Label = *labels[i]
		}
		if b.TableRows, b.Columns, err = tableInfo(tables[i]); err != nil {
			return nil, ruleErr("parquet", fi.Name+"/"+filepath.Base(tables[i]), "%v", err)
		}
		if fi.Name == ObsFeatures && b.TableRows != b.End-b.Start {
			return nil, ruleErr("obs rows", fi.Name+"/"+filepath.Base(tables[i]), "%d rows for cells [%d, %d)", b.TableRows, b.Start, b.End)
		}
		idx.Blocks = append(idx.Blocks, b)
		start = b.End
	}
	if uint64(start) != fi.Length {
		return nil, ruleErr("feature index length", HeaderFile, "feature index %q: header says %d rows, %s says %d", fi.Name, fi.Length, CumSumFile, start)
	}
	return idx, nil
}

func tableInfo(path string) (int64, []ColumnSpec, error) {
	t, f, err := pqfile.OpenPath(path)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	pf := t.PF()
	var specs []ColumnSpec
	for _, fd := range pf.Schema().Fields() {
		k := KindString
		if fd.Leaf() {
			switch fd.Type().Kind() {
			case parquet.Int32, parquet.Int64:
				k = KindInt
			case parquet.Float, parquet.Double:
				k = KindFloat
			case parquet.Boolean:
				k = KindBool
			}
		}
		specs = append(specs, ColumnSpec{Name: fd.Name(), Kind: k})
	}
	return pf.NumRows(), specs, nil
}

// Close closes the array files.
func (r *Reader) Close() error {
	var errs []error
	for _, f := range []*os.File{r.data, r.rowptr, r.colptr} {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	return errors.Join(errs...)
}

// Dir returns the archive's directory.
func (r *Reader) Dir() string { return r.dir }

// Header returns the parsed header.
func (r *Reader) Header() *Header { return r.hdr }

// NumRows returns the number of cells.
func (r *Reader) NumRows() int64 { return r.rows }

// NNZ returns the number of stored values.
func (r *Reader) NNZ() int64 { return r.nnz }

// DTypes returns the dtypes of data, row_ptr and col_ptr.
func (r *Reader) DTypes() (data, rowptr, colptr DType) { return r.dataType, r.rowType, r.colType }

// Genes returns the number of genes of row's var block (0 without var features).
func (r *Reader) Genes(row int64) int64 {
	if r.Var == nil {
		return 0
	}
	if b := r.Var.Block(row); b >= 0 {
		return r.Var.Blocks[b].TableRows
	}
	return 0
}

// MaxGenes returns the largest var block's gene count.
func (r *Reader) MaxGenes() int64 {
	var n int64
	if r.Var != nil {
		for _, b := range r.Var.Blocks {
			n = max(n, b.TableRows)
		}
	}
	return n
}

func getUint(b []byte, t DType) uint64 {
	switch t {
	case Uint8:
		return uint64(b[0])
	case Uint16:
		return uint64(binary.LittleEndian.Uint16(b))
	case Uint32:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

func getFloat(b []byte, t DType) float32 {
	switch t {
	case Float32:
		return math.Float32frombits(binary.LittleEndian.Uint32(b))
	case Float64:
		return float32(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	case Float16:
		return halfToFloat(binary.LittleEndian.Uint16(b))
	}
	return float32(getUint(b, t))
}

func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		f := float32(frac) / 1024 / 16384
		if sign != 0 {
			return -f
		}
		return f
	case exp == 31:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}

// Row appends cell i's values and gene indices to vals and cols and returns them.
func (r *Reader) Row(i int64, vals []float32, cols []uint32) ([]float32, []uint32, error) {
	if i < 0 || i >= r.rows {
		return vals, cols, fmt.Errorf("%s: cell %d out of range [0, %d)", r.dir, i, r.rows)
	}
	rs := int64(r.rowType.Size())
	var pb [16]byte
	if _, err := r.rowptr.ReadAt(pb[:2*rs], i*rs); err != nil {
		return vals, cols, fmt.Errorf("%s: %s: %w", r.dir, RowPtrFile, err)
	}
	lo, hi := getUint(pb[:], r.rowType), getUint(pb[rs:], r.rowType)
	if lo > hi || hi > uint64(r.nnz) {
		return vals, cols, fmt.Errorf("%s: %w", r.dir, ruleErr("row_ptr monotonic", "ROWPTR (row_ptr.npy)", "cell %d spans [%d, %d) of %d values", i, lo, hi, r.nnz))
	}
	n := int64(hi - lo)
	ds, cs := int64(r.dataType.Size()), int64(r.colType.Size())
	buf := make([]byte, n*max(ds, cs))
	if _, err := r.data.ReadAt(buf[:n*ds], int64(lo)*ds); err != nil {
		return vals, cols, fmt.Errorf("%s: %s: %w", r.dir, DataFile, err)
	}
	for k := range n {
		vals = append(vals, getFloat(buf[k*ds:], r.dataType))
	}
	if _, err := r.colptr.ReadAt(buf[:n*cs], int64(lo)*cs); err != nil {
		return vals, cols, fmt.Errorf("%s: %s: %w", r.dir, ColPtrFile, err)
	}
	for k := range n {
		cols = append(cols, uint32(getUint(buf[k*cs:], r.colType)))
	}
	return vals, cols, nil
}

// VerifyReport summarises a verified archive.
type VerifyReport struct {
	Dir                  string
	Cells, NNZ, MaxGenes int64
	Data, RowPtr, ColPtr DType
	VarBlocks, ObsBlocks int
	NonFinite            int64 // NaN or infinite values in data (allowed, reported)
}

// Verify checks the array invariants by scanning them once: row_ptr starts at 0, never
// decreases and ends at nnz; every column index is below its cell's gene count (from the var
// block the cell is in). The first violation is returned as a *RuleError naming the array.
func (r *Reader) Verify() (*VerifyReport, error) {
	rep := &VerifyReport{Dir: r.dir, Cells: r.rows, NNZ: r.nnz, MaxGenes: r.MaxGenes(), Data: r.dataType, RowPtr: r.rowType, ColPtr: r.colType}
	if r.Var != nil {
		rep.VarBlocks = len(r.Var.Blocks)
	}
	if r.Obs != nil {
		rep.ObsBlocks = len(r.Obs.Blocks)
	}
	const rowWhere, colWhere = "ROWPTR (row_ptr.npy)", "COLPTR (col_ptr.npy)"
	rows := newArrayScanner(r.rowptr, r.rowType)
	colsc := newArrayScanner(r.colptr, r.colType)
	prev, err := rows.next()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.dir, err)
	}
	if prev != 0 {
		return nil, fmt.Errorf("%s: %w", r.dir, ruleErr("row_ptr starts at 0", rowWhere, "row_ptr[0] = %d", prev))
	}
	block, genes := -1, uint64(math.MaxUint64)
	for i := range r.rows {
		cur, err := rows.next()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.dir, err)
		}
		if cur < prev {
			return nil, fmt.Errorf("%s: %w", r.dir, ruleErr("row_ptr monotonic", rowWhere, "row_ptr[%d] = %d < row_ptr[%d] = %d", i+1, cur, i, prev))
		}
		if cur > uint64(r.nnz) {
			return nil, fmt.Errorf("%s: %w", r.dir, ruleErr("row_ptr within nnz", rowWhere, "row_ptr[%d] = %d > nnz %d", i+1, cur, r.nnz))
		}
		if r.Var != nil && (block < 0 || i >= r.Var.Blocks[block].End) {
			block = r.Var.Block(i)
			genes = uint64(r.Var.Blocks[block].TableRows)
		}
		for k := prev; k < cur; k++ {
			c, err := colsc.next()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.dir, err)
			}
			if c >= genes {
				return nil, fmt.Errorf("%s: %w", r.dir, ruleErr("column index < genes", colWhere, "col_ptr[%d] = %d for cell %d, which has %d genes", k, c, i, genes))
			}
		}
		prev = cur
	}
	if prev != uint64(r.nnz) {
		return nil, fmt.Errorf("%s: %w", r.dir, ruleErr("row_ptr ends at nnz", rowWhere, "row_ptr[%d] = %d, nnz is %d", r.rows, prev, r.nnz))
	}
	if r.dataType == Float32 || r.dataType == Float64 {
		ds := newArrayScanner(r.data, r.dataType)
		for range r.nnz {
			v, err := ds.nextFloat()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.dir, err)
			}
			if math.IsNaN(v) || math.IsInf(v, 0) {
				rep.NonFinite++
			}
		}
	}
	return rep, nil
}

// arrayScanner reads an array's elements in order through a buffer.
type arrayScanner struct {
	br *bufio.Reader
	t  DType
	b  [8]byte
}

func newArrayScanner(f *os.File, t DType) *arrayScanner {
	return &arrayScanner{br: bufio.NewReaderSize(io.NewSectionReader(f, 0, math.MaxInt64), 1<<20), t: t}
}

func (s *arrayScanner) next() (uint64, error) {
	n := s.t.Size()
	if _, err := io.ReadFull(s.br, s.b[:n]); err != nil {
		return 0, err
	}
	return getUint(s.b[:], s.t), nil
}

func (s *arrayScanner) nextFloat() (float64, error) {
	n := s.t.Size()
	if _, err := io.ReadFull(s.br, s.b[:n]); err != nil {
		return 0, err
	}
	if s.t == Float64 {
		return math.Float64frombits(binary.LittleEndian.Uint64(s.b[:])), nil
	}
	return float64(getFloat(s.b[:], s.t)), nil
}

// ObsColumns returns the columns of the obs block holding row (nil without obs features).
func (r *Reader) ObsColumns(row int64) []ColumnSpec {
	if r.Obs == nil {
		return nil
	}
	if b := r.Obs.Block(row); b >= 0 {
		return slices.Clone(r.Obs.Blocks[b].Columns)
	}
	return nil
}

// ReadTable reads a whole feature block's table (var blocks are a few thousand rows).
func ReadTable(b FeatureBlock) (*Table, error) { return readTable(b.File) }
