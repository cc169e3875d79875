// Package runner runs a conversion plan (recipe.Plan): the pipeline into the container of the
// recipe's format (MLDF or FFCV .beton), or the SCDL writer for a single-cell archive; then
// the side files (the class names beside a .beton output). It also reads the class-names
// side files back (inspect, export, merge). The recipe only plans: it imports no container.
package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mldf/convert/format/beton"
	"github.com/mldf/convert/format/scdl"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/recipe"
)

// Config returns the pipeline configuration of plan writing output (the output, or a
// shard's part of it): the source, the fields and the recipe's run options. The caller adds
// where the bytes go and how the run reports (Sink, Store, Logger, Progress).
func Config(plan *recipe.Plan, output string) (pipeline.Config, error) {
	r := plan.Recipe
	count, frac, _ := recipe.ParseMaxErrors(r.MaxErrors)
	policy, err := pipeline.ParseErrorPolicy(r.OnError)
	if err != nil {
		return pipeline.Config{}, err
	}
	if r.MaxErrors != "" && count == 0 && frac == 0 {
		// max_errors: 0 (or 0%) accepts no reject: the first one fails the run. (For the
		// pipeline, 0 means no limit.)
		policy = pipeline.Fail
	}
	fields := make([]pipeline.Binding, len(plan.Bindings))
	for i, b := range plan.Bindings {
		fields[i] = pipeline.Binding{Field: b.Field, Column: b.Column, Optional: b.Optional}
	}
	checksums := r.Checksums == nil || *r.Checksums
	src := plan.Source
	if plan.Pack != nil {
		src = pipeline.Pack(src, plan.Pack.Column, plan.Pack.Field)
	}
	var dd *pipeline.Dedup
	if r.Dedup != nil {
		mode, err := pipeline.ParseDedupMode(r.Dedup.Mode)
		if err != nil {
			return pipeline.Config{}, err
		}
		dd = &pipeline.Dedup{Fields: r.Dedup.Fields, Mode: mode}
	}
	return pipeline.Config{
		Source: src, Fields: fields, Output: output,
		PageSize: int(r.PageSize), Workers: r.Workers, ChunkSize: r.ChunkSize,
		Checksums: checksums, OnError: policy, MaxErrors: count, MaxErrorFraction: frac, AllowEmpty: plan.AllowEmpty,
		RejectsPath: r.Rejects, Dedup: dd, NoDirect: r.DirectIO != nil && !*r.DirectIO,
	}, nil
}

// Run runs plan with cfg (made by Config): an SCDL archive for format scdl, else the
// pipeline into the container of the recipe's format; then, for a .beton output with
// class-label fields, the class names beside it (cfg.Output + recipe.ClassesSuffix,
// through cfg.Store): a run whose side file cannot be written fails and leaves no output.
// The matrices of a single-cell source are closed when it returns.
func Run(ctx context.Context, plan *recipe.Plan, cfg pipeline.Config) (pipeline.Report, error) {
	if plan.Cells != nil {
		defer plan.Cells.Close()
	}
	r := plan.Recipe
	if r.Format == "scdl" {
		return writeSCDL(ctx, cfg, plan)
	}
	if r.Format == "mds" {
		return runMDS(ctx, cfg, nil)
	}
	if r.Format == "beton" {
		cfg.Container = beton.NewContainer
	}
	rep, err := pipeline.Run(ctx, cfg)
	if err != nil || !plan.WritesClasses() {
		return rep, err
	}
	if cfg.Store == nil {
		cfg.Store = objstore.New()
	}
	if err := WriteClasses(ctx, cfg.Store, cfg.Output+recipe.ClassesSuffix, plan.Classes()); err != nil {
		// A run that fails leaves no output.
		cfg.Store.Remove(context.WithoutCancel(ctx), cfg.Output)
		return rep, err
	}
	return rep, nil
}

// writeSCDL runs scdl.Write with the run's options over the plan's matrices and reports it
// as a pipeline run.
func writeSCDL(ctx context.Context, cfg pipeline.Config, plan *recipe.Plan) (pipeline.Report, error) {
	if plan.Cells == nil {
		return pipeline.Report{}, fmt.Errorf("%w: format scdl needs a single-cell source", recipe.ErrRecipe)
	}
	inputs, sizes := plan.Cells.Matrices()
	var bytesIn int64
	for _, s := range sizes {
		bytesIn += s
	}
	opt := scdl.Options{Workers: cfg.Workers}
	if res := cfg.Resume; res != nil {
		// A resumable run (docs/RESUME.md): the writer checkpoints its arrays and obs spill
		// beside the output; the fingerprint is the one an MDS export checkpoint matches.
		fp, err := mdsPrint(res.Fingerprint)
		if err != nil {
			return pipeline.Report{}, fmt.Errorf("inputs of %s: %w", cfg.Output, err)
		}
		every, bytes := res.Every, res.Bytes
		if every == 0 {
			every = pipeline.DefaultCheckpointEvery
		}
		if bytes == 0 {
			bytes = pipeline.DefaultCheckpointBytes
		}
		opt.Resume = &scdl.Resume{Print: fp, Every: every, Bytes: bytes, Restart: res.Restart, Log: func(msg string) {
			if res.Log != nil {
				fmt.Fprintln(res.Log, "convert: "+msg)
			} else if cfg.Logger != nil {
				cfg.Logger.Info(msg)
			}
		}}
	}
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
