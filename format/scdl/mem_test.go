package scdl

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
)

// memInput is an in-memory Input for tests: a CSR matrix with obs and var tables.
type memInput struct {
	name       string
	rows, cols int64
	indptr     []int64
	indices    []uint32
	vals       []float32
	obs        []Column // full length
	vars       []Column
	reads      atomic.Int64
	failAt     int64 // ReadRows of a range containing this row fails (when > 0)
}

func (m *memInput) Name() string           { return m.name }
func (m *memInput) Shape() (int64, int64)  { return m.rows, m.cols }
func (m *memInput) NNZ() int64             { return int64(len(m.vals)) }
func (m *memInput) Var() ([]Column, error) { return m.vars, nil }
func (m *memInput) Close() error           { return nil }
func (m *memInput) ObsSchema() []ColumnSpec {
	s := make([]ColumnSpec, len(m.obs))
	for i, c := range m.obs {
		s[i] = c.ColumnSpec
	}
	return s
}

func (m *memInput) ReadRows(lo, hi int64, b *Block) error {
	m.reads.Add(1)
	if m.failAt > 0 && lo <= m.failAt && m.failAt < hi {
		return fmt.Errorf("injected failure at row %d", m.failAt)
	}
	base := m.indptr[lo]
	for r := lo; r < hi; r++ {
		b.Indptr = append(b.Indptr, m.indptr[r+1]-base)
	}
	b.Cols = append(b.Cols, m.indices[base:m.indptr[hi]]...)
	b.Vals = append(b.Vals, m.vals[base:m.indptr[hi]]...)
	for i, c := range m.obs {
		o := &b.Obs[i]
		if o.Skip {
			continue
		}
		end := min(hi, int64(c.Len())) // a short column (a test's bad input) gives short blocks
		switch c.Kind {
		case KindInt:
			o.Ints = append(o.Ints, c.Ints[min(lo, end):end]...)
		case KindFloat:
			o.Floats = append(o.Floats, c.Floats[min(lo, end):end]...)
		case KindString:
			o.Strings = append(o.Strings, c.Strings[min(lo, end):end]...)
		case KindBool:
			o.Bools = append(o.Bools, c.Bools[min(lo, end):end]...)
		}
		if c.Null != nil {
			o.Null = append(o.Null, c.Null[lo:hi]...)
		}
	}
	return nil
}

// randomInput makes a rows x cols matrix with about density of its cells stored, an obs
// table (index, an int, a float, a categorical as strings) and a var table.
func randomInput(name string, seed uint64, rows, cols int64, density float64) *memInput {
	rng := rand.New(rand.NewPCG(seed, 1))
	m := &memInput{name: name, rows: rows, cols: cols, indptr: []int64{0}}
	for r := int64(0); r < rows; r++ {
		for c := int64(0); c < cols; c++ {
			if rng.Float64() < density {
				m.indices = append(m.indices, uint32(c))
				m.vals = append(m.vals, float32(rng.IntN(50)+1)/2)
			}
		}
		m.indptr = append(m.indptr, int64(len(m.vals)))
	}
	idx := Column{ColumnSpec: ColumnSpec{Name: "_index", Kind: KindString, Index: true}}
	n := Column{ColumnSpec: ColumnSpec{Name: "n_genes", Kind: KindInt}}
	f := Column{ColumnSpec: ColumnSpec{Name: "pct", Kind: KindFloat}}
	ct := Column{ColumnSpec: ColumnSpec{Name: "cell_type", Kind: KindString}, Null: make([]bool, rows)}
	for r := int64(0); r < rows; r++ {
		idx.Strings = append(idx.Strings, fmt.Sprintf("%s-cell%d", name, r))
		n.Ints = append(n.Ints, m.indptr[r+1]-m.indptr[r])
		f.Floats = append(f.Floats, rng.Float64())
		ct.Strings = append(ct.Strings, []string{"T", "B", "NK", ""}[r%4])
		ct.Null[r] = r%4 == 3
	}
	m.obs = []Column{idx, n, f, ct}
	gi := Column{ColumnSpec: ColumnSpec{Name: "_index", Kind: KindString, Index: true}}
	sym := Column{ColumnSpec: ColumnSpec{Name: "gene_symbols", Kind: KindString}}
	for c := int64(0); c < cols; c++ {
		gi.Strings = append(gi.Strings, fmt.Sprintf("ENSG%05d", c))
		sym.Strings = append(sym.Strings, fmt.Sprintf("G%d", c))
	}
	m.vars = []Column{gi, sym}
	return m
}
