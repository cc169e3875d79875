package scdl

import (
	"fmt"
	"strconv"
)

// Input is one cell-by-gene matrix the Writer reads by ranges of rows (cells): an h5ad file,
// a 10x directory, another archive. The Writer calls Shape, NNZ and ObsSchema first, then
// ReadRows from many goroutines at once (an Input must allow that), then Var once, then
// Close.
type Input interface {
	// Name identifies the input in errors and is the feature blocks' label (BioNeMo uses the
	// h5ad path).
	Name() string
	// Shape returns the number of cells and genes.
	Shape() (rows, cols int64)
	// NNZ returns the number of stored values, or -1 when it is not known before reading.
	NNZ() int64
	// ObsSchema describes the per-cell columns ReadRows fills, in order; the table's index
	// (cell names) is the column with Index set.
	ObsSchema() []ColumnSpec
	// ReadRows reads rows [lo, hi) into b (which it resets): CSR offsets relative to the
	// block, gene indices and values, and the obs columns' values for those rows.
	ReadRows(lo, hi int64, b *Block) error
	// Var returns the per-gene table: one row per gene, the index marked.
	Var() ([]Column, error)
	Close() error
}

// Block is a range of rows in CSR form plus their obs values.
type Block struct {
	Indptr []int64 // len rows+1; Indptr[0] == 0
	Cols   []uint32
	Vals   []float32
	Obs    []Column // in ObsSchema order, each with rows values
}

// Reset empties b, keeping its buffers.
func (b *Block) Reset(obs []ColumnSpec) {
	b.Indptr = append(b.Indptr[:0], 0)
	b.Cols = b.Cols[:0]
	b.Vals = b.Vals[:0]
	if cap(b.Obs) < len(obs) {
		b.Obs = make([]Column, len(obs))
	}
	b.Obs = b.Obs[:len(obs)]
	for i, s := range obs {
		b.Obs[i].ColumnSpec = s
		b.Obs[i].Skip = false
		b.Obs[i].Reset()
	}
}

// Rows returns the number of rows in b.
func (b *Block) Rows() int { return len(b.Indptr) - 1 }

// Kind is a feature column's type.
type Kind uint8

// Column kinds (parquet types: int64, double, UTF-8 string, boolean).
const (
	KindInt Kind = iota + 1
	KindFloat
	KindString
	KindBool
)

func (k Kind) String() string {
	switch k {
	case KindInt:
		return "int"
	case KindFloat:
		return "float"
	case KindString:
		return "string"
	case KindBool:
		return "bool"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ColumnSpec names a feature column and its kind.
type ColumnSpec struct {
	Name  string
	Kind  Kind
	Index bool // the table's index (cell barcodes, gene ids)
}

// Column holds one feature column's values: the member its Kind names, and Null (nil when
// no value is missing) marking missing values (a categorical's NaN).
type Column struct {
	ColumnSpec
	// Skip, set by the caller of ReadRows after Block.Reset, says the column is not needed:
	// the input may leave it empty.
	Skip    bool
	Ints    []int64
	Floats  []float64
	Strings []string
	Bools   []bool
	Null    []bool
}

// Reset empties the column, keeping its buffers.
func (c *Column) Reset() {
	c.Ints, c.Floats, c.Strings, c.Bools, c.Null = c.Ints[:0], c.Floats[:0], c.Strings[:0], c.Bools[:0], c.Null[:0]
}

// Len returns the number of values.
func (c *Column) Len() int {
	switch c.Kind {
	case KindInt:
		return len(c.Ints)
	case KindFloat:
		return len(c.Floats)
	case KindString:
		return len(c.Strings)
	case KindBool:
		return len(c.Bools)
	}
	return 0
}

// IsNull reports whether value i is missing.
func (c *Column) IsNull(i int) bool { return c.Null != nil && i < len(c.Null) && c.Null[i] }

// Text returns value i as text ("" when missing).
func (c *Column) Text(i int) string {
	if c.IsNull(i) {
		return ""
	}
	switch c.Kind {
	case KindInt:
		return strconv.FormatInt(c.Ints[i], 10)
	case KindFloat:
		return strconv.FormatFloat(c.Floats[i], 'g', -1, 64)
	case KindString:
		return c.Strings[i]
	case KindBool:
		if c.Bools[i] {
			return "True"
		}
		return "False"
	}
	return ""
}

// Float returns value i as a number (NaN when missing or a string).
func (c *Column) Float(i int) float64 {
	switch {
	case c.IsNull(i):
	case c.Kind == KindInt:
		return float64(c.Ints[i])
	case c.Kind == KindFloat:
		return c.Floats[i]
	case c.Kind == KindBool:
		if c.Bools[i] {
			return 1
		}
		return 0
	}
	return nan
}

var nan = func() float64 { z := 0.0; return z / z }()

// storedColumns applies BioNeMo's rule for which columns of a table are stored: its
// columns when it has any, otherwise its index alone, named indexName.
func storedColumns(specs []ColumnSpec, indexName string) []ColumnSpec {
	var out []ColumnSpec
	var idx *ColumnSpec
	for i := range specs {
		if specs[i].Index {
			idx = &specs[i]
			continue
		}
		out = append(out, specs[i])
	}
	if len(out) == 0 && idx != nil {
		s := *idx
		s.Name = indexName
		out = []ColumnSpec{s}
	}
	return out
}

// unify returns the kind a column gets when blocks of kinds a and b are concatenated (as
// numpy concatenates arrays): the same kind, int with float or bool promoted to the wider,
// anything with string as string.
func unify(a, b Kind) Kind {
	switch {
	case a == b:
		return a
	case a == KindString || b == KindString:
		return KindString
	case a == KindFloat || b == KindFloat:
		return KindFloat
	}
	return KindInt // int with bool
}
