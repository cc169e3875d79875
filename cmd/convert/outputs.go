package main

import (
	"errors"
	"iter"

	"github.com/mldf/convert/internal/outpath"
	"github.com/mldf/convert/recipe"
	"github.com/mldf/convert/sources"
)

// checkOutputs refuses, before any work, a conversion whose outputs (the data file, the
// report, the rejects log, a sharded task's .done record, the CPU profile, the trace) are not new names
// or regular files, or are one another, the recipe, or any input of the plan: a run must never
// destroy what it reads. Inputs are walked once; only those of an existing output's size are
// looked at.
func checkOutputs(plan *recipe.Plan, cpuProfile, trace string) error {
	r := plan.Recipe
	var outs outpath.Set
	add := [][2]string{{"output", r.Output}, {"report", r.Report}, {"rejects", r.Rejects}}
	if r.Shards > 0 {
		part := partPath(r.Output, r.Shard, r.Shards)
		add = [][2]string{{"part", part}, {"report", shardReport(part)}, {"rejects", shardRejects(part)},
			{"completion record", part + ".done"}}
	}
	add = append(add, [2]string{"cpuprofile", cpuProfile}, [2]string{"trace", trace})
	for i, o := range add {
		// A folder format's output is a directory: a new name or an existing directory (a
		// killed run's to resume, an archive to replace; the writer checks what it holds).
		if i == 0 && (r.Format == "mds" || r.Format == "scdl") {
			if err := outs.AddDir(o[0], o[1]); err != nil {
				return err
			}
			continue
		}
		if err := outs.Add(o[0], o[1]); err != nil {
			return err
		}
	}
	if f := r.File(); f != "" {
		if err := outs.Check("recipe", f); err != nil {
			return err
		}
	}
	// A file source's own file (a NeMo manifest) is read too; for folders this is a no-op.
	if r.Source.Path != "" {
		if err := outs.Check("source", r.Source.Path); err != nil {
			return err
		}
	}
	return outs.CheckInputs("input", planInputs(plan))
}

// errStopInputs ends a walk of the inputs early.
var errStopInputs = errors.New("stop")

// planInputs yields every input of the plan (all of them, also in a sharded run: another
// task reads them) with its size.
func planInputs(plan *recipe.Plan) iter.Seq2[string, int64] {
	return func(yield func(string, int64) bool) {
		plan.Inputs.Each(func(_ int64, in sources.Input) error {
			if !yield(in.Path, in.Size) {
				return errStopInputs
			}
			return nil
		})
	}
}

// checkFileOutput is checkOutputs for the commands that write one file from inputs given on
// the command line (index -o, merge): out must be a new name or a regular file, and none of
// the inputs.
func checkFileOutput(out, inputRole string, inputs ...string) error {
	var outs outpath.Set
	if err := outs.Add("output", out); err != nil {
		return err
	}
	for _, in := range inputs {
		if err := outs.Check(inputRole, in); err != nil {
			return err
		}
	}
	return nil
}
