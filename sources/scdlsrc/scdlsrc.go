// Package scdlsrc turns single-cell matrices (SCDL archives, h5ad files, 10x directories:
// anything that is an cells.Input) into samples, one per cell, for the MLDF pipeline. A cell's
// sample holds its stored values and gene indices as .npy arrays (for NDARRAY fields), its
// obs index as "cell" and its obs columns under their own names.
package scdlsrc

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/cells"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// Column names of every cell's sample.
const (
	ColumnValues = "values" // .npy '<f4', 1-D: the cell's stored values
	ColumnGenes  = "genes"  // .npy '<u4', 1-D: their gene (column) indices
	ColumnCell   = "cell"   // the obs index (cell name, barcode) when the input has one
)

// rowsPerRead is how many cells the source reads at once, at most; valuesPerRead bounds
// the values of one read for an input that can count them before reading (an archive):
// fewer cells are read when they hold more, down to one cell.
const (
	rowsPerRead   = 1024
	valuesPerRead = 1 << 22
)

// readEnd returns the end of the next read from cell lo: rowsPerRead cells, fewer while
// they hold more than valuesPerRead values (down to one cell).
func readEnd(in cells.Input, lo, rows int64) (int64, error) {
	hi := min(lo+rowsPerRead, rows)
	vc, ok := in.(cells.ValueCounter)
	if !ok {
		return hi, nil
	}
	for hi > lo+1 {
		n, err := vc.Values(lo, hi)
		if err != nil {
			return 0, err
		}
		if n <= valuesPerRead {
			break
		}
		hi = lo + (hi-lo)/2
	}
	return hi, nil
}

// Source yields the cells of its inputs, in order.
type Source struct {
	inputs []cells.Input
	sizes  []int64 // bytes on disk per input, for reports
	first  int64   // the cells of inputs[0] not read (a resumed source's, see Resume)
}

var _ sources.CellSource = (*Source)(nil)

// New returns a source over inputs (sizes: their sizes in bytes, or nil).
func New(inputs []cells.Input, sizes []int64) *Source {
	if sizes == nil {
		sizes = make([]int64, len(inputs))
	}
	return &Source{inputs: inputs, sizes: sizes}
}

// Len returns the number of cells.
func (s *Source) Len() int64 {
	var n int64
	for _, in := range s.inputs {
		r, _ := in.Shape()
		n += r
	}
	return n - s.first
}

// Inputs implements sources.Lister: the inputs with their sizes.
func (s *Source) Inputs() sources.InputList {
	out := make(sources.Inputs, len(s.inputs))
	for i, in := range s.inputs {
		out[i] = sources.Input{Path: in.Name(), Size: s.sizes[i]}
	}
	return out
}

// Range implements sources.Sharder: the source cut to inputs [lo, hi) (sharded runs).
func (s *Source) Range(lo, hi int) (sources.Source, error) {
	if lo < 0 || hi > len(s.inputs) || lo > hi {
		return nil, fmt.Errorf("scdlsrc: range [%d, %d) of %d inputs", lo, hi, len(s.inputs))
	}
	r := &Source{inputs: s.inputs[lo:hi], sizes: s.sizes[lo:hi]}
	if lo == 0 {
		r.first = s.first
	}
	return r, nil
}

// Run emits one sample per cell.
func (s *Source) Run(ctx context.Context, emit func(sample.Sample) error) error {
	var index int64
	var b cells.Block
	for k, in := range s.inputs {
		rows, _ := in.Shape()
		schema := in.ObsSchema()
		perCell := s.sizes[k] / max(rows, 1)
		var from int64
		if k == 0 {
			from = s.first
		}
		for lo, hi := from, int64(0); lo < rows; lo = hi {
			if err := ctx.Err(); err != nil {
				return err
			}
			var err error
			if hi, err = readEnd(in, lo, rows); err != nil {
				return fmt.Errorf("%s: cells from %d: %w", in.Name(), lo, err)
			}
			b.Reset(schema)
			if err := in.ReadRows(lo, hi, &b); err != nil {
				return fmt.Errorf("%s: cells [%d, %d): %w", in.Name(), lo, hi, err)
			}
			for r := range hi - lo {
				a, z := b.Indptr[r], b.Indptr[r+1]
				smp := sample.Sample{
					Index: index, Key: fmt.Sprintf("%d", lo+r), Origin: fmt.Sprintf("%s:cell %d", in.Name(), lo+r),
					InputBytes: perCell,
				}
				smp.Values = make([]sample.Column, 0, 2+len(b.Obs))
				smp.Values = append(smp.Values,
					sample.Column{Name: ColumnValues, Value: sample.Value{Kind: sample.KindBytes, Name: "values.npy", Bytes: npyFloat32(b.Vals[a:z])}},
					sample.Column{Name: ColumnGenes, Value: sample.Value{Kind: sample.KindBytes, Name: "genes.npy", Bytes: npyUint32(b.Cols[a:z])}})
				for c := range b.Obs {
					col := &b.Obs[c]
					name := col.Name
					if col.Index {
						name = ColumnCell
					}
					smp.Values = append(smp.Values, sample.Column{Name: name, Value: value(col, int(r))})
				}
				if err := emit(smp); err != nil {
					return err
				}
				index++
			}
		}
	}
	return nil
}

// value converts an obs value: numbers stay numbers (a missing float is NaN, a missing
// integer 0), strings are text, booleans 0 or 1.
func value(c *cells.Column, i int) sample.Value {
	switch c.Kind {
	case cells.KindInt:
		if c.IsNull(i) {
			return sample.Value{Kind: sample.KindInt}
		}
		return sample.Value{Kind: sample.KindInt, Int: c.Ints[i]}
	case cells.KindBool:
		v := int64(0)
		if !c.IsNull(i) && c.Bools[i] {
			v = 1
		}
		return sample.Value{Kind: sample.KindInt, Int: v}
	case cells.KindFloat:
		return sample.Value{Kind: sample.KindFloat, Float: c.Float(i)}
	}
	return sample.Value{Kind: sample.KindString, Bytes: []byte(c.Text(i))}
}

func npyFloat32(v []float32) []byte {
	b := mldf.AppendNPYHeader(nil, "<f4", []uint64{uint64(len(v))})
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func npyUint32(v []uint32) []byte {
	b := mldf.AppendNPYHeader(nil, "<u4", []uint64{uint64(len(v))})
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

// ClassNames returns the categories of the categorical obs column called column (an h5ad
// categorical: cell types, batches), the class names of an int field that reads it, when
// every input has that column with the same categories; else nil.
func (s *Source) ClassNames(column string) []string {
	var names []string
	for k, in := range s.inputs {
		c, ok := in.(cells.Categorical)
		if !ok {
			return nil
		}
		cats := c.Categories(column)
		if cats == nil || (k > 0 && !slices.Equal(cats, names)) {
			return nil
		}
		names = cats
	}
	return names
}

// Matrices implements sources.CellSource: the inputs and their sizes in bytes.
func (s *Source) Matrices() ([]cells.Input, []int64) { return s.inputs, s.sizes }

// Close closes every input.
func (s *Source) Close() error {
	var first error
	for _, in := range s.inputs {
		if err := in.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
