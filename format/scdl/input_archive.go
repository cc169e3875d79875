package scdl

import (
	"fmt"
	"io"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/mldf/convert/internal/pqfile"
)

// ArchiveInput is an SCDL archive read as an Input: its cells in order, its obs columns (the
// union of its obs blocks' columns; a cell whose block lacks a column has a missing value),
// and its var table when it has a single var block.
type ArchiveInput struct {
	r      *Reader
	schema []ColumnSpec
	mu     sync.Mutex
	tables map[int]*parquet.File // obs blocks, opened on first use
	files  []memberFile
}

// NewArchiveInput wraps an open archive; closing the input closes the reader.
func NewArchiveInput(r *Reader) *ArchiveInput {
	a := &ArchiveInput{r: r, tables: map[int]*parquet.File{}}
	if r.Obs != nil {
		pos := map[string]int{}
		for _, b := range r.Obs.Blocks {
			for _, c := range b.Columns {
				if i, ok := pos[c.Name]; ok {
					a.schema[i].Kind = unify(a.schema[i].Kind, c.Kind)
					continue
				}
				pos[c.Name] = len(a.schema)
				a.schema = append(a.schema, c)
			}
		}
	}
	return a
}

// Name returns the archive's directory.
func (a *ArchiveInput) Name() string { return a.r.dir }

// Shape returns the cells and the largest var block's genes.
func (a *ArchiveInput) Shape() (int64, int64) { return a.r.rows, max(a.r.MaxGenes(), 1) }

// NNZ returns the stored values.
func (a *ArchiveInput) NNZ() int64 { return a.r.nnz }

// ObsSchema returns the union of the obs blocks' columns.
func (a *ArchiveInput) ObsSchema() []ColumnSpec { return a.schema }

// Reader returns the archive.
func (a *ArchiveInput) Reader() *Reader { return a.r }

// ReadRows reads cells [lo, hi), applying the rules Verify applies to those cells (see
// Reader.readCells): a conversion from an archive never carries what verify refuses.
func (a *ArchiveInput) ReadRows(lo, hi int64, b *Block) error {
	if err := a.r.readCells(lo, hi, b); err != nil {
		return err
	}
	return a.readObs(lo, hi, b)
}

// Values returns the number of values cells [lo, hi) hold (see Reader.Values): a caller
// sizes its reads with it.
func (a *ArchiveInput) Values(lo, hi int64) (int64, error) { return a.r.Values(lo, hi) }

func (a *ArchiveInput) table(i int) (*parquet.File, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t, ok := a.tables[i]; ok {
		return t, nil
	}
	f, size, err := a.r.Obs.Blocks[i].open()
	if err != nil {
		return nil, err
	}
	pt, err := pqfile.OpenTable(f, size, a.r.Obs.Blocks[i].File)
	if err != nil {
		f.Close()
		return nil, err
	}
	t := pt.PF()
	a.files = append(a.files, f)
	a.tables[i] = t
	return t, nil
}

// readObs fills the obs columns of cells [lo, hi) block by block.
func (a *ArchiveInput) readObs(lo, hi int64, b *Block) error {
	if len(a.schema) == 0 {
		return nil
	}
	for row := lo; row < hi; {
		bi := a.r.Obs.Block(row)
		if bi < 0 {
			// Cells no obs block covers: missing values.
			next := hi
			for _, blk := range a.r.Obs.Blocks {
				if blk.Start > row {
					next = min(next, blk.Start)
				}
			}
			for c := range b.Obs {
				if b.Obs[c].Skip {
					continue
				}
				for range next - row {
					appendNull(&b.Obs[c])
				}
			}
			row = next
			continue
		}
		blk := a.r.Obs.Blocks[bi]
		end := min(hi, blk.End)
		t, err := a.table(bi)
		if err != nil {
			return err
		}
		pos := make([]int, len(a.schema)) // schema column → table column, or -1
		for k, s := range a.schema {
			pos[k] = -1
			for j, c := range blk.Columns {
				if c.Name == s.Name {
					pos[k] = j
				}
			}
		}
		rd := parquet.NewReader(t)
		if err := rd.SeekToRow(row - blk.Start); err != nil {
			rd.Close()
			return fmt.Errorf("%s: %w", blk.File, err)
		}
		rows := make([]parquet.Row, min(end-row, 1024))
		for row < end {
			n, err := rd.ReadRows(rows[:min(int64(len(rows)), end-row)])
			for _, pr := range rows[:n] {
				for k := range a.schema {
					if b.Obs[k].Skip {
						continue
					}
					if pos[k] < 0 {
						appendNull(&b.Obs[k])
						continue
					}
					var v parquet.Value
					for _, x := range pr {
						if x.Column() == pos[k] {
							v = x
						}
					}
					appendAs(&b.Obs[k], v, blk.Columns[pos[k]].Kind)
				}
			}
			row += int64(n)
			if err != nil && (err != io.EOF || row < end) {
				rd.Close()
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return fmt.Errorf("%s: %w", blk.File, err)
			}
		}
		rd.Close()
	}
	return nil
}

func appendNull(c *Column) {
	if c.Null == nil || len(c.Null) < c.Len() {
		c.Null = append(c.Null, make([]bool, c.Len()-len(c.Null))...)
	}
	c.Null = append(c.Null, true)
	switch c.Kind {
	case KindInt:
		c.Ints = append(c.Ints, 0)
	case KindFloat:
		c.Floats = append(c.Floats, nan)
	case KindBool:
		c.Bools = append(c.Bools, false)
	default:
		c.Strings = append(c.Strings, "")
	}
}

// appendAs appends a parquet value of kind from to a column of c's kind.
func appendAs(c *Column, v parquet.Value, from Kind) {
	if v.IsNull() {
		appendNull(c)
		return
	}
	tmp := Column{ColumnSpec: ColumnSpec{Kind: from}}
	addValue(&tmp, v)
	if c.Null != nil {
		c.Null = append(c.Null, false)
	}
	switch c.Kind {
	case KindInt:
		if from == KindBool && tmp.Bools[0] {
			c.Ints = append(c.Ints, 1)
		} else if from == KindInt {
			c.Ints = append(c.Ints, tmp.Ints[0])
		} else {
			c.Ints = append(c.Ints, 0)
		}
	case KindFloat:
		c.Floats = append(c.Floats, tmp.Float(0))
	case KindBool:
		c.Bools = append(c.Bools, from == KindBool && tmp.Bools[0])
	default:
		c.Strings = append(c.Strings, tmp.Text(0))
	}
}

// Var returns the archive's gene table when it has one var block.
func (a *ArchiveInput) Var() ([]Column, error) {
	n := 0
	if a.r.Var != nil {
		n = len(a.r.Var.Blocks)
	}
	if n != 1 {
		return nil, fmt.Errorf("%s: %w: only an archive with exactly one var block can be an input (it has %d)", a.r.dir, ErrUnsupported, n)
	}
	t, err := ReadTable(a.r.Var.Blocks[0])
	if err != nil {
		return nil, err
	}
	return t.Columns, nil
}

// Close closes the parquet files and the archive.
func (a *ArchiveInput) Close() error {
	for _, f := range a.files {
		f.Close()
	}
	return a.r.Close()
}
