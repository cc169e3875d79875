package scdl

import "github.com/mldf/convert/internal/cells"

// The matrix types an archive is written from are those of package cells, where the
// single-cell readers implement them without importing this container.
type (
	// Input is one cell-by-gene matrix the Writer reads by ranges of rows (cells).
	Input = cells.Input
	// Block is a range of rows in CSR form plus their obs values.
	Block = cells.Block
	// Kind is a feature column's type.
	Kind = cells.Kind
	// ColumnSpec names a feature column and its kind.
	ColumnSpec = cells.ColumnSpec
	// Column holds one feature column's values.
	Column = cells.Column
)

// Column kinds (parquet types: int64, double, UTF-8 string, boolean).
const (
	KindInt    = cells.KindInt
	KindFloat  = cells.KindFloat
	KindString = cells.KindString
	KindBool   = cells.KindBool
)

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

var nan = func() float64 { z := 0.0; return z / z }()
