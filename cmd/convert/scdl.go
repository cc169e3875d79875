package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mldf/convert/format/scdl"
)

// localDir returns the local path arg names and true when it is a directory. The read
// commands read every other kind from a file, so a directory is an SCDL archive or nothing
// they know, and scdl.Open says which files it lacks.
func localDir(arg string) (string, bool) {
	path, local, err := localPath(arg)
	if err != nil || !local {
		return "", false
	}
	fi, err := os.Stat(path)
	return path, err == nil && fi.IsDir()
}

// inspectSCDL describes an SCDL archive (a directory with header.sch): the header, the
// arrays, the feature blocks; with --sample N, cell N's values and obs columns.
func inspectSCDL(w io.Writer, dir string, cell int, asJSON bool) error {
	r, err := scdl.Open(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	h := r.Header()
	if cell >= 0 {
		vals, cols, err := r.Row(int64(cell), nil, nil)
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(w, map[string]any{"cell": cell, "values": vals, "genes": cols})
		}
		fmt.Fprintf(w, "cell %d of %d: %d stored values\n", cell, r.NumRows(), len(vals))
		for k := range vals {
			fmt.Fprintf(w, "  gene %d = %g\n", cols[k], vals[k])
		}
		return nil
	}
	if asJSON {
		return writeJSON(w, h)
	}
	d, rp, cp := r.DTypes()
	fmt.Fprintf(w, "archive    %s (SCDL %d.%d.%d, %s)\n", dir, h.Version[0], h.Version[1], h.Version[2], h.Backend)
	if !r.HasHeader() {
		fmt.Fprintf(w, "header     none (no %s: BioNeMo's default dtypes assumed)\n", scdl.HeaderFile)
	}
	fmt.Fprintf(w, "cells      %d, %d stored values, up to %d genes\n", r.NumRows(), r.NNZ(), r.MaxGenes())
	fmt.Fprintf(w, "arrays     data %s, row_ptr %s, col_ptr %s\n", d, rp, cp)
	for _, a := range h.Arrays {
		fmt.Fprintf(w, "  %-7s %12d x %s\n", a.Name, a.Length, a.DType)
	}
	for _, idx := range []*scdl.FeatureIndex{r.Var, r.Obs} {
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

// verifySCDL checks every rule of the SCDL schema and the array invariants.
func verifySCDL(w io.Writer, dir string) error {
	r, err := scdl.Open(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	rep, err := r.Verify()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: OK: SCDL archive, %d cells, %d stored values (data %s, row_ptr %s, col_ptr %s), up to %d genes, %d var and %d obs blocks",
		dir, rep.Cells, rep.NNZ, rep.Data, rep.RowPtr, rep.ColPtr, rep.MaxGenes, rep.VarBlocks, rep.ObsBlocks)
	if !r.HasHeader() {
		fmt.Fprintf(w, "; no %s (BioNeMo's default dtypes assumed)", scdl.HeaderFile)
	}
	if rep.NonFinite > 0 {
		fmt.Fprintf(w, "; %d values are NaN or infinite", rep.NonFinite)
	}
	fmt.Fprintln(w)
	return nil
}
