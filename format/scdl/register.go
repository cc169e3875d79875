package scdl

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mldf/convert/format"
	"github.com/mldf/convert/objstore"
)

func init() {
	// An SCDL archive is a directory: it is opened by path (or, in a bucket, as the objects
	// under a prefix), never sniffed.
	format.Register(format.Format{Name: formatName, Dir: true,
		OpenPath: func(_ context.Context, dir string) (format.File, error) {
			r, err := Open(dir)
			if err != nil {
				return nil, err
			}
			return &File{r}, nil
		},
		OpenDir: func(ctx context.Context, c *objstore.Client, dir string) (format.File, error) {
			r, err := OpenStore(ctx, c, dir)
			if err != nil {
				return nil, err
			}
			return &File{r}, nil
		},
	})
}

// File is an SCDL archive as a format.File.
type File struct{ *Reader }

// Describe returns the archive's description: the header, the arrays, the feature blocks.
// It encodes as DescriptionJSON.
func (f *File) Describe() (format.Text, error) { return description{f.Reader}, nil }

// Sample returns cell i's stored values and their genes.
func (f *File) Sample(i int64) (format.Text, error) {
	vals, cols, err := f.Row(i, nil, nil)
	if err != nil {
		return nil, err
	}
	return CellText{File: f.dir, Cell: i, Of: f.NumRows(), Values: vals, Genes: cols}, nil
}

// Verify checks every rule of the SCDL schema and the array invariants.
func (f *File) Verify(context.Context, format.VerifyOptions) (format.Text, error) {
	rep, err := f.Reader.Verify()
	if err != nil {
		return nil, err
	}
	return verifyText{rep: rep, hasHeader: f.HasHeader()}, nil
}

// CellText is one cell as inspect --sample shows it.
type CellText struct {
	File     string
	Cell, Of int64
	Values   []float32
	Genes    []uint32
}

// WriteText prints the cell's size, then one gene and value a line.
func (c CellText) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "cell %d of %d: %d stored values\n", c.Cell, c.Of, len(c.Values))
	for k := range c.Values {
		fmt.Fprintf(w, "  gene %d = %g\n", c.Genes[k], c.Values[k])
	}
	return nil
}

type description struct{ r *Reader }

func (d description) WriteText(w io.Writer) error {
	r := d.r
	h := r.Header()
	dt, rp, cp := r.DTypes()
	fmt.Fprintf(w, "archive    %s (SCDL %d.%d.%d, %s)\n", r.dir, h.Version[0], h.Version[1], h.Version[2], h.Backend)
	if !r.HasHeader() {
		fmt.Fprintf(w, "header     none (no %s: BioNeMo's default dtypes assumed)\n", HeaderFile)
	}
	fmt.Fprintf(w, "cells      %d, %d stored values, up to %d genes\n", r.NumRows(), r.NNZ(), r.MaxGenes())
	fmt.Fprintf(w, "arrays     data %s, row_ptr %s, col_ptr %s\n", dt, rp, cp)
	for _, a := range h.Arrays {
		fmt.Fprintf(w, "  %-7s %12d x %s\n", a.Name, a.Length, a.DType)
	}
	for _, idx := range []*FeatureIndex{r.Var, r.Obs} {
		if idx == nil {
			continue
		}
		fmt.Fprintf(w, "%-10s %d block(s)\n", idx.Name, len(idx.Blocks))
		for i, b := range idx.Blocks {
			var names []string
			for _, c := range b.Columns {
				names = append(names, c.Name+":"+c.Kind.String())
			}
			fmt.Fprintf(w, "  #%d cells [%d, %d) %s: %d rows, columns %s\n", i, b.Start, b.End, b.Label, b.TableRows, strings.Join(names, ", "))
		}
	}
	return nil
}

type verifyText struct {
	rep       *VerifyReport
	hasHeader bool
}

func (t verifyText) WriteText(w io.Writer) error {
	rep := t.rep
	fmt.Fprintf(w, "%s: OK: SCDL archive, %d cells, %d stored values (data %s, row_ptr %s, col_ptr %s), up to %d genes, %d var and %d obs blocks",
		rep.Dir, rep.Cells, rep.NNZ, rep.Data, rep.RowPtr, rep.ColPtr, rep.MaxGenes, rep.VarBlocks, rep.ObsBlocks)
	if !t.hasHeader {
		fmt.Fprintf(w, "; no %s (BioNeMo's default dtypes assumed)", HeaderFile)
	}
	if rep.NonFinite > 0 {
		fmt.Fprintf(w, "; %d values are NaN or infinite", rep.NonFinite)
	}
	_, err := fmt.Fprintln(w)
	return err
}
