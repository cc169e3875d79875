package recipe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mldf/convert/format/beton"
	"github.com/mldf/convert/format/scdl"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sources"
	"github.com/mldf/convert/sources/h5ad"
	"github.com/mldf/convert/sources/mtx10x"
	"github.com/mldf/convert/sources/scdlsrc"
)

// Single-cell sources (AnnData .h5ad files, 10x Genomics directories, SCDL archives) and the
// scdl output format: the recipe side of issue 17. A cell source converts to an SCDL archive
// (format: scdl, no fields) or, one sample per cell, to MLDF or .beton through the usual
// fields (columns values, genes, cell and the obs columns; see sources/scdlsrc).

// cellSources are the single-cell source types.
var cellSources = []string{"h5ad", "mtx10x", "scdl"}

func isCellSource(t string) bool { return slices.Contains(cellSources, t) }

// validateCells checks the single-cell rules: the source's keys and the scdl format.
func (r *Recipe) validateCells(add func(line int, format string, args ...any)) {
	s := r.Source
	if isCellSource(s.Type) {
		switch {
		case s.Type == "h5ad" && len(s.Inputs) == 0:
			add(r.line("source"), "source.inputs: an h5ad source needs at least one .h5ad file (file, glob or brace range)")
		case s.Type == "h5ad" && s.Path != "":
			add(r.line("source", "path"), "source.path does not apply to an h5ad source (use inputs)")
		case s.Type != "h5ad" && s.Path == "" && len(s.Inputs) == 0:
			add(r.line("source"), "source.path (or inputs, for several) is required for a %s source", s.Type)
		case s.Type != "h5ad" && s.Path != "" && len(s.Inputs) > 0:
			add(r.line("source", "inputs"), "source.path and source.inputs are exclusive")
		}
		if s.Type == "h5ad" && !h5ad.Available() {
			add(r.line("source", "type"), "source.type h5ad: %v", h5ad.ErrUnavailable)
		}
	}
	if s.Matrix != "" {
		if s.Type != "h5ad" {
			add(r.line("source", "matrix"), "source.matrix applies only to an h5ad source")
		} else if s.Matrix != "X" && s.Matrix != "raw" {
			add(r.line("source", "matrix"), "source.matrix: %q is not one of X, raw", s.Matrix)
		}
	}
	if r.Format == "scdl" {
		if !isCellSource(s.Type) && s.Type != "" {
			add(r.line("format"), "format scdl needs a single-cell source (%s), not %s", strings.Join(cellSources, ", "), s.Type)
		}
		if len(r.Fields) > 0 {
			add(r.line("fields"), "fields do not apply to format scdl (an SCDL archive stores every cell's values, genes and obs table)")
		}
		if r.Shards > 0 {
			add(r.line("shards"), "format scdl cannot be sharded (one archive is written in parallel by one process)")
		}
	}
}

// buildCells resolves a single-cell source: it opens the inputs (reading only their
// headers) and plans an SCDL archive or a pipeline run over one sample per cell.
func buildCells(r *Recipe) (*Plan, error) {
	inputs, sizes, err := openCells(r.Source)
	if err != nil {
		return nil, err
	}
	src := scdlsrc.New(inputs, sizes)
	p := &Plan{Recipe: r, Source: src, Inputs: src.Inputs()}
	p.Slice = [2]int{0, int(p.Inputs.Len())}
	if r.Format == "scdl" {
		p.Run = func(ctx context.Context, cfg pipeline.Config) (pipeline.Report, error) {
			defer src.Close()
			return writeSCDL(ctx, cfg, inputs, sizes)
		}
		return p, nil
	}
	if r.Shards > 1 {
		lo, hi, err := sources.SliceList(p.Inputs, r.Shard, r.Shards)
		if err != nil {
			return nil, fmt.Errorf("slice %d of %d: %w", r.Shard, r.Shards, err)
		}
		p.Slice = [2]int{int(lo), int(hi)}
		if p.Source, err = src.Range(int(lo), int(hi)); err != nil {
			return nil, err
		}
	}
	p.AllowEmpty = r.AllowEmpty || (r.Shards > 1 && p.Slice[0] == p.Slice[1])
	for _, f := range r.Fields {
		field, err := buildField(f)
		if err != nil {
			src.Close()
			return nil, fmt.Errorf("%w: field %q: %w", ErrRecipe, f.Name, err)
		}
		required := f.Required == nil || *f.Required
		p.Bindings = append(p.Bindings, pipeline.Binding{Field: field, Column: f.From, Optional: !required})
	}
	if err := cellClasses(p, src); err != nil { // sidefiles.go
		src.Close()
		return nil, err
	}
	p.Run = func(ctx context.Context, cfg pipeline.Config) (pipeline.Report, error) {
		defer src.Close()
		if r.Format == "beton" {
			cfg.Container = beton.NewContainer
		}
		return pipeline.Run(ctx, cfg)
	}
	return p, nil
}

// openCells expands the source's inputs and opens each.
func openCells(s Source) ([]scdl.Input, []int64, error) {
	var paths []string
	var err error
	switch {
	case s.Type == "h5ad":
		found, err := objstore.New().Expand(context.Background(), s.Inputs) // local paths: no bucket is opened
		if err != nil {
			return nil, nil, fmt.Errorf("source.inputs: %w", err)
		}
		for _, a := range found {
			paths = append(paths, a.URL)
		}
	case s.Path != "":
		paths = []string{s.Path}
	default:
		for _, in := range s.Inputs {
			m := []string{in}
			if strings.ContainsAny(in, "*?[") {
				if m, err = filepath.Glob(in); err != nil || len(m) == 0 {
					return nil, nil, fmt.Errorf("source.inputs: %q matches nothing", in)
				}
			}
			paths = append(paths, m...)
		}
	}
	var inputs []scdl.Input
	var sizes []int64
	fail := func(err error) ([]scdl.Input, []int64, error) {
		for _, in := range inputs {
			in.Close()
		}
		return nil, nil, err
	}
	for _, p := range paths {
		var in scdl.Input
		switch s.Type {
		case "h5ad":
			in, err = h5ad.Open(p, h5ad.Options{Matrix: s.Matrix})
		case "mtx10x":
			in, err = mtx10x.Open(p, mtx10x.Options{})
		case "scdl":
			var rd *scdl.Reader
			if rd, err = scdl.Open(p); err == nil {
				in = scdl.NewArchiveInput(rd)
			}
		}
		if err != nil {
			return fail(err)
		}
		inputs = append(inputs, in)
		sizes = append(sizes, pathSize(p))
	}
	return inputs, sizes, nil
}

// pathSize is a file's size, or the total size of a directory's files.
func pathSize(p string) int64 {
	var n int64
	filepath.WalkDir(p, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// writeSCDL runs scdl.Write with the run's options and reports it as a pipeline run.
func writeSCDL(ctx context.Context, cfg pipeline.Config, inputs []scdl.Input, sizes []int64) (pipeline.Report, error) {
	var bytesIn int64
	for _, s := range sizes {
		bytesIn += s
	}
	opt := scdl.Options{Workers: cfg.Workers}
	if cfg.Progress != nil {
		opt.Progress = func(p scdl.Progress) {
			cfg.Progress(pipeline.Progress{Done: p.Cells, Total: p.TotalCells, BytesIn: bytesIn * p.Cells / max(p.TotalCells, 1), Elapsed: p.Elapsed})
		}
	}
	start := time.Now()
	rep, err := scdl.Write(ctx, cfg.Output, inputs, opt)
	out := pipeline.Report{Output: cfg.Output, Samples: rep.Cells, BytesIn: bytesIn, BytesOut: rep.BytesOut,
		Elapsed: time.Since(start), Workers: opt.Workers, RejectsByReason: map[string]int64{}}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return out, fmt.Errorf("write %s: %w", cfg.Output, err)
		}
		return out, err
	}
	if cfg.Logger != nil {
		cfg.Logger.Info("scdl archive", "cells", rep.Cells, "nnz", rep.NNZ, "genes", rep.Genes,
			"row_ptr", rep.RowPtr.String(), "col_ptr", rep.ColPtr.String(), "var_blocks", rep.VarBlocks, "obs_blocks", rep.ObsBlocks)
	}
	return out, nil
}
