// Package h5ad reads AnnData .h5ad files (HDF5, through internal/hdf5) by ranges of cells:
// the matrix X (or raw/X) stored as CSR, CSC or dense, and the obs and var dataframes (index,
// numeric, boolean, string and categorical columns). It implements scdl.Input; memory stays
// bounded by a few row ranges (a CSC matrix is first bucket-sorted into temporary files).
// Files are untrusted: what they may not do (read other files, declare sizes they do not
// store, hold unbounded strings or chunks) is listed in docs/SCDL.md §6.
package h5ad

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/mldf/convert/format/scdl"
	"github.com/mldf/convert/internal/cellsort"
	"github.com/mldf/convert/internal/hdf5"
	"github.com/mldf/convert/internal/quote"
)

// Errors.
var (
	ErrFormat      = errors.New("h5ad: unsupported layout")
	ErrUnavailable = hdf5.ErrUnavailable
)

// Options configure Open.
type Options struct {
	// Matrix is "X" (default) or "raw" (raw/X with raw/var, where the raw counts usually are;
	// BioNeMo's converter reads raw.X unless told to use X).
	Matrix string
	// TempDir holds the bucket files of a CSC matrix ("": the system's temporary directory).
	TempDir string
}

// layouts of the matrix.
const (
	csr = iota
	csc
	dense
)

// File is an open .h5ad file.
type File struct {
	path       string
	f          *hdf5.File
	layout     int
	rows, cols int64
	nnz        int64

	indptr, indices, data *hdf5.Dataset // sparse
	x                     *hdf5.Dataset // dense

	obs    []obsColumn
	schema []scdl.ColumnSpec
	varGrp string

	tempDir     string
	denseValues int64 // values per read of a dense matrix (denseValues; tests lower it)
	sortStep    int64 // values and column pointers per read of a CSC matrix's sort (sortStep)
	sortOnce    sync.Once
	sorter      *cellsort.Sorter
	sortErr     error
}

// obsColumn is one obs column: a dataset, or a categorical's codes and categories.
type obsColumn struct {
	spec       scdl.ColumnSpec
	ds         *hdf5.Dataset
	categories []string // categorical
	mask       *hdf5.Dataset
}

// Available reports whether this build can read h5ad files (it needs cgo and libhdf5).
func Available() bool { return hdf5.Available() }

// Open opens path and reads its layout: the matrix's encoding and shape, the obs columns.
func Open(path string, opt Options) (*File, error) {
	if !hdf5.Available() {
		return nil, fmt.Errorf("%s: %w", path, ErrUnavailable)
	}
	h, err := hdf5.Open(path)
	if err != nil {
		return nil, err
	}
	x := &File{path: path, f: h, varGrp: "var", tempDir: opt.TempDir, denseValues: denseValues, sortStep: sortStep}
	if err := x.open(opt); err != nil {
		x.Close()
		return nil, err
	}
	return x, nil
}

func (x *File) fail(format string, args ...any) error {
	return fmt.Errorf("%s: %w: %s", x.path, ErrFormat, fmt.Sprintf(format, args...))
}

func (x *File) open(opt Options) error {
	mat := "X"
	switch opt.Matrix {
	case "", "X":
	case "raw":
		mat, x.varGrp = "raw/X", "raw/var"
	default:
		return x.fail("matrix %q (want X or raw)", opt.Matrix)
	}
	kind, err := x.f.Kind(mat)
	if err != nil {
		return err
	}
	switch kind {
	case hdf5.KindNone:
		return x.fail("no %s matrix", mat)
	case hdf5.KindDataset:
		if x.x, err = x.f.OpenDataset(mat); err != nil {
			return err
		}
		if x.x.Rank != 2 {
			return x.fail("%s is a dataset of rank %d (a dense matrix has rank 2)", mat, x.x.Rank)
		}
		x.layout, x.rows, x.cols, x.nnz = dense, x.x.Dims[0], x.x.Dims[1], -1
	case hdf5.KindGroup:
		if err := x.openSparse(mat); err != nil {
			return err
		}
	}
	if err := x.openObs(); err != nil {
		return err
	}
	// The gene count of a sparse matrix is only an attribute: check it against the stored var
	// table now, before anything is sized by it.
	cols, err := x.dataframe(x.varGrp, x.cols)
	for i := range cols {
		closeColumn(&cols[i])
	}
	return err
}

func (x *File) openSparse(mat string) error {
	enc, err := x.attr(mat, "encoding-type", maxEncodingBytes)
	if err != nil {
		return err
	}
	shapeAttr := "shape"
	if enc == "" { // anndata < 0.7
		old, err := x.attr(mat, "h5sparse_format", maxEncodingBytes)
		if err != nil {
			return err
		}
		switch old {
		case "csr":
			enc = "csr_matrix"
		case "csc":
			enc = "csc_matrix"
		}
		shapeAttr = "h5sparse_shape"
	}
	switch enc {
	case "csr_matrix":
		x.layout = csr
	case "csc_matrix":
		x.layout = csc
	default:
		return x.fail("%s has encoding %s (csr_matrix, csc_matrix or a dense array expected)", mat, quote.Q(enc))
	}
	shape, err := x.f.AttrInts(mat, shapeAttr)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", x.path, mat, err)
	}
	if len(shape) != 2 || shape[0] < 0 || shape[1] < 0 {
		return x.fail("%s has shape %v", mat, shape)
	}
	x.rows, x.cols = shape[0], shape[1]
	open := func(name string) (*hdf5.Dataset, error) {
		d, err := x.f.OpenDataset(mat + "/" + name)
		if err != nil {
			return nil, err
		}
		if d.Rank != 1 {
			return nil, x.fail("%s/%s has rank %d", mat, name, d.Rank)
		}
		return d, nil
	}
	if x.indptr, err = open("indptr"); err != nil {
		return err
	}
	if x.indices, err = open("indices"); err != nil {
		return err
	}
	if x.data, err = open("data"); err != nil {
		return err
	}
	major := x.rows
	if x.layout == csc {
		major = x.cols
	}
	if x.indptr.Len() != major+1 {
		return x.fail("%s/indptr has %d entries for %d %s", mat, x.indptr.Len(), major, map[bool]string{true: "rows", false: "columns"}[x.layout == csr])
	}
	var ends [2]int64
	if err := x.indptr.ReadInt64(0, ends[:1]); err != nil {
		return err
	}
	if err := x.indptr.ReadInt64(major, ends[1:]); err != nil {
		return err
	}
	x.nnz = ends[1]
	if ends[0] != 0 || x.nnz < 0 || x.nnz > x.indices.Len() || x.indices.Len() != x.data.Len() {
		return x.fail("%s: indptr runs from %d to %d over %d indices and %d values", mat, ends[0], ends[1], x.indices.Len(), x.data.Len())
	}
	if x.data.Type.Class != hdf5.ClassInteger && x.data.Type.Class != hdf5.ClassFloat {
		return x.fail("%s/data holds %s values", mat, x.data.Type.Class)
	}
	return nil
}

// Bounds of the strings read from attributes: longer ones are errors that quote none of
// their bytes.
const (
	maxEncodingBytes = 64      // encoding-type, h5sparse_format
	maxNameBytes     = 4096    // a column's name (_index)
	maxOrderBytes    = 1 << 20 // column-order: all the names together
	maxCategories    = 1 << 24 // categories of one categorical column
)

// denseValues bounds the values of one read of a dense matrix: a range of cells is read in
// blocks of rows, or a wide row in pieces of columns.
const denseValues = 1 << 20

// attr returns a scalar string attribute of at most maxBytes bytes, or "" when it does not
// exist or is not one string.
func (x *File) attr(obj, name string, maxBytes int64) (string, error) {
	s, err := x.f.AttrStrings(obj, name, maxBytes)
	if errors.Is(err, hdf5.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err // names the file and the attribute
	}
	if len(s) != 1 {
		return "", nil
	}
	return s[0], nil
}

func (x *File) openObs() error {
	cols, err := x.dataframe("obs", x.rows)
	if err != nil {
		return err
	}
	x.obs = cols
	for _, c := range cols {
		x.schema = append(x.schema, c.spec)
	}
	return nil
}

// dataframe opens the columns of an AnnData dataframe group (encoding-type dataframe): the
// index first, then the columns in column-order. Each must have n rows.
func (x *File) dataframe(grp string, n int64) ([]obsColumn, error) {
	kind, err := x.f.Kind(grp)
	if err != nil {
		return nil, err
	}
	if kind == hdf5.KindDataset {
		return nil, x.fail("%s is a compound dataset (AnnData < 0.7): re-save the file with a current anndata", grp)
	}
	if kind == hdf5.KindNone {
		return nil, x.fail("no %s dataframe", grp)
	}
	index, err := x.attr(grp, "_index", maxNameBytes)
	if err != nil {
		return nil, err
	}
	if index == "" {
		return nil, x.fail("%s has no _index attribute", grp)
	}
	order, err := x.f.AttrStrings(grp, "column-order", maxOrderBytes)
	if err != nil && !errors.Is(err, hdf5.ErrNotFound) {
		return nil, err
	}
	for _, name := range order {
		if len(name) > maxNameBytes {
			return nil, x.fail("%s: a column name of %d bytes (at most %d)", grp, len(name), maxNameBytes)
		}
	}
	var cols []obsColumn
	for i, name := range append([]string{index}, order...) {
		c, err := x.column(grp, name, n)
		if err != nil {
			return nil, err
		}
		c.spec.Index = i == 0
		cols = append(cols, c)
	}
	return cols, nil
}

func (x *File) column(grp, name string, n int64) (obsColumn, error) {
	p := grp + "/" + name
	kind, err := x.f.Kind(p)
	if err != nil {
		return obsColumn{}, err
	}
	c := obsColumn{spec: scdl.ColumnSpec{Name: name}}
	switch kind {
	case hdf5.KindNone:
		return c, x.fail("%s: column %s is listed but missing", grp, quote.Q(name))
	case hdf5.KindGroup:
		enc, err := x.attr(p, "encoding-type", maxEncodingBytes)
		if err != nil {
			return c, err
		}
		switch enc {
		case "categorical":
			cats, err := x.f.OpenDataset(p + "/categories")
			if err != nil {
				return c, err
			}
			defer cats.Close()
			if cats.Len() > maxCategories {
				return c, x.fail("%s: column %s has %d categories (at most %d)", grp, quote.Q(name), cats.Len(), maxCategories)
			}
			if cats.Type.Class != hdf5.ClassString {
				// Numeric categories: keep their text.
				v := make([]float64, cats.Len())
				if err := cats.ReadFloat64(0, v); err != nil {
					return c, err
				}
				for _, f := range v {
					c.categories = append(c.categories, (&scdl.Column{ColumnSpec: scdl.ColumnSpec{Kind: scdl.KindFloat}, Floats: []float64{f}}).Text(0))
				}
			} else if c.categories, err = cats.ReadStrings(0, cats.Len()); err != nil {
				return c, err
			}
			if c.ds, err = x.f.OpenDataset(p + "/codes"); err != nil {
				return c, err
			}
			c.spec.Kind = scdl.KindString
		case "nullable-integer", "nullable-boolean":
			if c.ds, err = x.f.OpenDataset(p + "/values"); err != nil {
				return c, err
			}
			if c.mask, err = x.f.OpenDataset(p + "/mask"); err != nil {
				return c, err
			}
			c.spec.Kind = scdl.KindInt
			if enc == "nullable-boolean" {
				c.spec.Kind = scdl.KindBool
			}
		default:
			return c, x.fail("%s: column %s has encoding %s (supported: arrays, strings, categorical, nullable)", grp, quote.Q(name), quote.Q(enc))
		}
	case hdf5.KindDataset:
		if c.ds, err = x.f.OpenDataset(p); err != nil {
			return c, err
		}
		switch c.ds.Type.Class {
		case hdf5.ClassString:
			c.spec.Kind = scdl.KindString
		case hdf5.ClassInteger:
			c.spec.Kind = scdl.KindInt
		case hdf5.ClassFloat:
			c.spec.Kind = scdl.KindFloat
		case hdf5.ClassEnum:
			c.spec.Kind = scdl.KindBool
		default:
			return c, x.fail("%s: column %s holds %s values", grp, quote.Q(name), c.ds.Type.Class)
		}
	}
	if c.ds.Rank != 1 || c.ds.Len() != n {
		return c, x.fail("%s: column %s has %d values (rank %d) for %d rows", grp, quote.Q(name), c.ds.Len(), c.ds.Rank, n)
	}
	return c, nil
}

// Name returns the file's path.
func (x *File) Name() string { return x.path }

// Shape returns the number of cells and genes.
func (x *File) Shape() (int64, int64) { return x.rows, x.cols }

// NNZ returns the stored values of a sparse matrix, -1 for a dense one.
func (x *File) NNZ() int64 { return x.nnz }

// Layout names the matrix's storage: "csr", "csc" or "dense".
func (x *File) Layout() string { return [...]string{"csr", "csc", "dense"}[x.layout] }

// ObsSchema describes the obs columns, the index first.
func (x *File) ObsSchema() []scdl.ColumnSpec { return x.schema }

// Categories returns the categories of the categorical obs column called name, in code
// order (a cell's value is categories[code]), or nil when it is not categorical.
func (x *File) Categories(name string) []string {
	for i := range x.obs {
		if x.obs[i].spec.Name == name && x.obs[i].categories != nil {
			return append([]string(nil), x.obs[i].categories...)
		}
	}
	return nil
}

// ReadRows reads cells [lo, hi). It may be called from many goroutines.
func (x *File) ReadRows(lo, hi int64, b *scdl.Block) error {
	if lo < 0 || hi > x.rows || lo > hi {
		return fmt.Errorf("%s: rows [%d, %d) of %d", x.path, lo, hi, x.rows)
	}
	var err error
	switch x.layout {
	case csr:
		err = x.readCSR(lo, hi, b)
	case csc:
		err = x.readCSC(lo, hi, b)
	default:
		err = x.readDense(lo, hi, b)
	}
	if err != nil {
		return err
	}
	for i := range x.obs {
		if b.Obs[i].Skip {
			continue
		}
		if err := x.readObs(&x.obs[i], lo, hi, &b.Obs[i]); err != nil {
			return err
		}
	}
	return nil
}

func (x *File) readCSR(lo, hi int64, b *scdl.Block) error {
	ptr := make([]int64, hi-lo+1)
	if err := x.indptr.ReadInt64(lo, ptr); err != nil {
		return err
	}
	p0, p1 := ptr[0], ptr[hi-lo]
	for r := range hi - lo {
		if ptr[r+1] < ptr[r] || ptr[r+1] > x.nnz {
			return fmt.Errorf("%s: %w: X/indptr decreases or overflows at cell %d (%d after %d)", x.path, ErrFormat, lo+r, ptr[r+1], ptr[r])
		}
		if ptr[r+1]-ptr[r] > x.cols {
			// Checked before anything is sized by the values: a cell holds at most one per gene.
			return fmt.Errorf("%s: %w: cell %d has %d values for %d genes", x.path, ErrFormat, lo+r, ptr[r+1]-ptr[r], x.cols)
		}
	}
	for _, p := range ptr[1:] {
		b.Indptr = append(b.Indptr, p-p0)
	}
	n := p1 - p0
	idx := make([]int64, n)
	if err := x.indices.ReadInt64(p0, idx); err != nil {
		return err
	}
	b.Cols = slices.Grow(b.Cols, int(n))
	for k, c := range idx {
		if c < 0 || c >= x.cols {
			r, _ := slices.BinarySearch(ptr, p0+int64(k)+1)
			return fmt.Errorf("%s: %w: cell %d has gene index %d (the matrix has %d genes)", x.path, ErrFormat, lo+int64(r)-1, c, x.cols)
		}
		b.Cols = append(b.Cols, uint32(c))
	}
	start := len(b.Vals)
	b.Vals = append(b.Vals, make([]float32, n)...)
	return x.data.ReadFloat32(p0, b.Vals[start:])
}

func (x *File) readDense(lo, hi int64, b *scdl.Block) error {
	// Blocks of rows × a piece of the columns, at most denseValues values each.
	width := min(x.cols, x.denseValues)
	step := max(1, x.denseValues/max(width, 1))
	buf := make([]float32, min(hi-lo, step)*width)
	for r0 := lo; r0 < hi; r0 += step {
		n := min(step, hi-r0)
		if width == x.cols {
			if err := x.x.ReadRowsFloat32(r0, n, buf[:n*width]); err != nil {
				return err
			}
			for r := range n {
				appendDense(b, buf[r*width:(r+1)*width], 0)
				b.Indptr = append(b.Indptr, int64(len(b.Vals)))
			}
			continue
		}
		for c0 := int64(0); c0 < x.cols; c0 += width { // n == 1: a row wider than the budget
			m := min(width, x.cols-c0)
			if err := x.x.ReadBlockFloat32(r0, 1, c0, m, buf[:m]); err != nil {
				return err
			}
			appendDense(b, buf[:m], c0)
		}
		b.Indptr = append(b.Indptr, int64(len(b.Vals)))
	}
	return nil
}

// appendDense appends the non-zero values of row, whose first column is c0, to b.
func appendDense(b *scdl.Block, row []float32, c0 int64) {
	for c, v := range row {
		if v != 0 {
			b.Cols = append(b.Cols, uint32(c0+int64(c)))
			b.Vals = append(b.Vals, v)
		}
	}
}

// sortStep is the values, and the column pointers, per read of a CSC matrix's sort.
const sortStep = 1 << 20

// sortSpan is the rows per bucket of a CSC matrix's sort: the writer's chunks of a CSC input
// are at most scdl.MaxChunkRows rows, so a read touches one or two buckets.
const sortSpan = scdl.MaxChunkRows

func (x *File) readCSC(lo, hi int64, b *scdl.Block) error {
	x.sortOnce.Do(func() { x.sortErr = x.transpose() })
	if x.sortErr != nil {
		return x.sortErr
	}
	var err error
	b.Indptr, b.Cols, b.Vals, err = x.sorter.Rows(lo, hi, b.Indptr, b.Cols, b.Vals)
	return err
}

// transpose reads a CSC matrix column by column, in bounded pieces, into the bucket sorter.
func (x *File) transpose() error {
	s, err := cellsort.New(x.tempDir, x.rows, x.cols, sortSpan)
	if err != nil {
		return err
	}
	x.sorter = s
	step := x.sortStep
	// ptr holds the column pointers [base, base+len(ptr)) (a window: the genes may be many).
	window := max(step, 2) // holds indptr[col] and indptr[col+1]
	ptr := make([]int64, 0, window)
	base := int64(0)
	// next returns the end of column col (indptr[col+1]), reading the window that holds it.
	next := func(col int64) (int64, error) {
		if col+1 >= base+int64(len(ptr)) {
			base = col
			ptr = ptr[:min(window, x.cols+1-col)]
			if err := x.indptr.ReadInt64(base, ptr); err != nil {
				return 0, err
			}
		}
		return ptr[col+1-base], nil
	}
	col := int64(0)
	end, err := next(0)
	if err != nil {
		return err
	}
	prev := int64(0)
	idx := make([]int64, 0, step)
	val := make([]float32, 0, step)
	for p0 := int64(0); p0 < x.nnz; p0 += step {
		n := min(step, x.nnz-p0)
		idx, val = idx[:n], val[:n]
		if err := x.indices.ReadInt64(p0, idx); err != nil {
			return err
		}
		if err := x.data.ReadFloat32(p0, val); err != nil {
			return err
		}
		for k := range n {
			p := p0 + k
			for col < x.cols && end <= p {
				if end < prev {
					return fmt.Errorf("%s: %w: X/indptr decreases at gene %d", x.path, ErrFormat, col)
				}
				col++
				if col < x.cols {
					prev = end
					if end, err = next(col); err != nil {
						return err
					}
				}
			}
			if end < prev {
				return fmt.Errorf("%s: %w: X/indptr decreases at gene %d", x.path, ErrFormat, col)
			}
			if idx[k] < 0 || idx[k] >= x.rows {
				return fmt.Errorf("%s: %w: gene %d has cell index %d (the matrix has %d cells)", x.path, ErrFormat, col, idx[k], x.rows)
			}
			if err := s.Add(idx[k], col, val[k]); err != nil {
				return fmt.Errorf("%s: %w", x.path, err)
			}
		}
	}
	return s.Finish()
}

func (x *File) readObs(c *obsColumn, lo, hi int64, out *scdl.Column) error {
	n := hi - lo
	switch {
	case c.categories != nil:
		codes := make([]int64, n)
		if err := c.ds.ReadInt64(lo, codes); err != nil {
			return err
		}
		out.Null = slices.Grow(out.Null[:0], int(n))[:0]
		anyNull := false
		for i, code := range codes {
			null := code < 0 || code >= int64(len(c.categories))
			if null && code >= int64(len(c.categories)) {
				return fmt.Errorf("%s: %w: obs column %s: cell %d has category code %d of %d", x.path, ErrFormat, quote.Q(c.spec.Name), lo+int64(i), code, len(c.categories))
			}
			anyNull = anyNull || null
			s := ""
			if !null {
				s = c.categories[code]
			}
			out.Strings = append(out.Strings, s)
			out.Null = append(out.Null, null)
		}
		if !anyNull {
			out.Null = out.Null[:0]
		}
		return nil
	case c.spec.Kind == scdl.KindString:
		s, err := c.ds.ReadStrings(lo, n)
		if err != nil {
			return err
		}
		out.Strings = append(out.Strings, s...)
	case c.spec.Kind == scdl.KindFloat:
		start := len(out.Floats)
		out.Floats = append(out.Floats, make([]float64, n)...)
		if err := c.ds.ReadFloat64(lo, out.Floats[start:]); err != nil {
			return err
		}
	case c.spec.Kind == scdl.KindInt, c.spec.Kind == scdl.KindBool:
		v := make([]int64, n)
		if err := c.ds.ReadInt64(lo, v); err != nil {
			return err
		}
		for _, i := range v {
			if c.spec.Kind == scdl.KindBool {
				out.Bools = append(out.Bools, i != 0)
			} else {
				out.Ints = append(out.Ints, i)
			}
		}
	}
	if c.mask != nil {
		m := make([]int64, n)
		if err := c.mask.ReadInt64(lo, m); err != nil {
			return err
		}
		for _, v := range m {
			out.Null = append(out.Null, v != 0)
		}
	}
	return nil
}

// Var reads the var dataframe (one row per gene).
func (x *File) Var() ([]scdl.Column, error) {
	cols, err := x.dataframe(x.varGrp, x.cols)
	if err != nil {
		return nil, err
	}
	out := make([]scdl.Column, len(cols))
	for i := range cols {
		out[i].ColumnSpec = cols[i].spec
		err = x.readObs(&cols[i], 0, x.cols, &out[i])
		closeColumn(&cols[i])
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func closeColumn(c *obsColumn) {
	if c.ds != nil {
		c.ds.Close()
	}
	if c.mask != nil {
		c.mask.Close()
	}
}

// Close closes the file and removes a CSC matrix's bucket files.
func (x *File) Close() error {
	for i := range x.obs {
		closeColumn(&x.obs[i])
	}
	for _, d := range []*hdf5.Dataset{x.indptr, x.indices, x.data, x.x} {
		if d != nil {
			d.Close()
		}
	}
	var err error
	if x.sorter != nil {
		err = x.sorter.Close()
	}
	if x.f != nil {
		if cerr := x.f.Close(); err == nil {
			err = cerr
		}
		x.f = nil
	}
	return err
}

// Size returns the file's size in bytes (for reports).
func (x *File) Size() int64 {
	fi, err := os.Stat(x.path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
