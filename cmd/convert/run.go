package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"time"

	"golang.org/x/term"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/progress"
	"github.com/mldf/convert/recipe"
	"github.com/mldf/convert/runner"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	rf, ff := bindRunFlags(fs, true), bindFieldFlags(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("run", "run RECIPE.yaml [--output F] [--workers N] [--dry-run] ...")
	}
	r, err := loadRecipe(pos[0])
	if err != nil {
		return err
	}
	return convert(ctx, r, rf, ff, stdout, stderr)
}

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	rf, ff := bindRunFlags(fs, false), bindFieldFlags(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("validate", "validate RECIPE.yaml")
	}
	r, err := loadRecipe(pos[0])
	if err != nil {
		return err
	}
	rf.dryRun = true
	return convert(ctx, r, rf, ff, stdout, stderr)
}

// loadRecipe loads the recipe at path after checking, without blocking, that it is a regular
// file: a named pipe given as the recipe is refused, not waited on.
func loadRecipe(path string) (*recipe.Recipe, error) {
	f, _, err := inputfile.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("recipe: %w", err)
	}
	f.Close()
	return recipe.Load(path)
}

// cmdImages is the one-shot form for an ImageFolder: no YAML needed.
func cmdImages(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	rf, ff := bindRunFlags(fs, true), bindFieldFlags(fs, "image")
	flat := fs.Bool("flat", false, "a flat folder of images without class subfolders (no label)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageErr("images", "images SRC_DIR OUT.mldf [--max-resolution N] [--mode jpeg|png|raw|smart] ...")
	}
	r := &recipe.Recipe{
		Source: recipe.Source{Type: "images", Path: pos[0], Flat: *flat},
		Fields: []recipe.Field{{Name: "image", Type: "image"}},
		Output: pos[1],
	}
	if !*flat {
		r.Fields = append(r.Fields, recipe.Field{Name: "label", Type: "int"})
	}
	return convert(ctx, r, rf, ff, stdout, stderr)
}

// convert applies the flags to r, validates it, builds the plan and runs it. A recipe whose
// log_format is json prints its summary, and main its error, as JSON, as --json does.
func convert(ctx context.Context, r *recipe.Recipe, rf *runFlags, ff *fieldFlags, stdout, stderr io.Writer) error {
	var err error
	if r.Mode == "append" {
		base := r.Base
		if base == "" {
			base = r.Output
		}
		err = appendRecipe(ctx, base, r, rf, ff, stdout, stderr)
	} else {
		err = convertRecipe(ctx, r, rf, ff, stdout, stderr)
	}
	if r.LogFormat == "json" {
		err = asJSONError(err)
	}
	return err
}

func convertRecipe(ctx context.Context, r *recipe.Recipe, rf *runFlags, ff *fieldFlags, stdout, stderr io.Writer) error {
	if err := rf.apply(r); err != nil {
		return err
	}
	if err := ff.apply(r); err != nil {
		return err
	}
	r.Output, r.Report, r.Rejects = plainPath(r.Output), plainPath(r.Report), plainPath(r.Rejects) // file:// URLs
	if err := shardFromEnv(r, rf, os.LookupEnv); err != nil {
		return err
	}
	r.Defaults()
	if err := r.Validate(); err != nil {
		return err
	}
	st := newStorage()
	defer st.Close()
	st.abortOlderThan, st.seed, st.cached = rf.abortOlderThan, rf.seed, rf.cached
	plan, err := recipe.BuildWith(ctx, r, st.client) // one client: inputs, outputs, reports
	if err != nil {
		return err
	}
	if err := checkOutputs(plan, rf.cpuProfile, rf.trace); err != nil {
		return err
	}
	if rf.dryRun {
		if rf.json {
			return printPlanJSON(stdout, plan)
		}
		return printPlan(stdout, plan)
	}
	if rf.planned != nil {
		if err := rf.planned(plan); err != nil {
			return err
		}
	}
	if err := checkBucketOutputs(ctx, st, plan); err != nil {
		return err
	}
	logger := newLogger(r.LogFormat, stderr)
	if rf.cpuProfile != "" {
		f, err := os.Create(rf.cpuProfile)
		if err != nil {
			return fmt.Errorf("cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	if rf.trace != "" {
		stop, err := startTrace(rf.trace)
		if err != nil {
			return err
		}
		defer stop()
	}
	asJSON := rf.json || r.LogFormat == "json"
	if r.Shards > 0 {
		return runShard(ctx, st, plan, logger, stdout, stderr, asJSON)
	}
	res := resumeOf(rf.resume, plan, st, stderr)
	rep, err := runPlan(ctx, st, plan, plan.Recipe.Output, logger, stderr, res)
	if res != nil && res.State != "" {
		st.abortUnopened(res.State)
		os.Remove(filepath.Dir(res.State)) // a finished or failed run's: empty, else kept
	}
	if werr := writeReport(ctx, st, plan, rep, err); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	if err := printSummary(stdout, rep, r.Rejects, asJSON); err != nil {
		return err
	}
	return rejectsAccepted(r, rep.Rejected)
}

// checkBucketOutputs checks, before any work, that the bucket outputs of the run (the output
// or this task's part, the report, the rejects, the completion record, the class-names file)
// can be written, and refuses a bucket output for the formats that write a folder (scdl).
// Every such output is written through objstore and appears only when complete.
func checkBucketOutputs(ctx context.Context, st *storage, plan *recipe.Plan) error {
	r := plan.Recipe
	out, report, rejects, done := r.Output, r.Report, r.Rejects, ""
	if r.Shards > 0 {
		out = partPath(r.Output, r.Shard, r.Shards)
		report, rejects, done = shardReport(out), shardRejects(out), out+".done"
	}
	if r.Format == "scdl" || r.Format == "mds" {
		if !localFile(out) {
			return fmt.Errorf("output %s: format %s writes a folder of files, not one object: convert to a local folder and copy it", out, r.Format)
		}
		if err := st.client.MakeParents(ctx, out); err != nil {
			return err
		}
		out = "" // a folder, checked by checkOutputs and made by the SCDL writer
	}
	classes := ""
	if plan.WritesClasses() {
		classes = out + recipe.ClassesSuffix
	}
	return st.checkWrite(ctx, out, report, rejects, done, classes)
}

// rejectsAccepted returns a rejectedError (exit status 3) when a completed run rejected
// samples and the recipe did not say that rejects are acceptable (max_errors unset).
func rejectsAccepted(r *recipe.Recipe, rejected int64) error {
	if rejected == 0 || r.MaxErrors != "" {
		return nil
	}
	return &rejectedError{n: rejected, rejects: r.Rejects}
}

// runPlan runs one conversion into output with a progress display on stderr.
// A single run checkpoints with res (nil: not resumable).
func runPlan(ctx context.Context, st *storage, plan *recipe.Plan, output string, logger *slog.Logger, stderr io.Writer, res *pipeline.Resume) (pipeline.Report, error) {
	cfg, err := runner.Config(plan, output)
	if err != nil {
		return pipeline.Report{}, err
	}
	bar := progress.New(stderr, isTerminal(stderr), logger, 10*time.Second)
	defer bar.Finish()
	st.configure(ctx, &cfg, output)
	cfg.Logger, cfg.Resume = logger, res
	cfg.Progress = func(p pipeline.Progress) { bar.Update(progress.Stats(p)) }
	defer spareProcs(cfg)()
	return runner.Run(ctx, plan, cfg)
}

func newLogger(format string, w io.Writer) *slog.Logger {
	if format == "json" || !isTerminal(w) {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// printSummary prints what the run wrote, ending with the rejected count, or its
// summaryJSON.
func printSummary(w io.Writer, rep pipeline.Report, rejects string, asJSON bool) error {
	if asJSON {
		return writeJSONLine(w, newSummaryJSON(rep, rejects))
	}
	secs := rep.Elapsed.Seconds()
	if secs <= 0 {
		secs = 1e-9
	}
	fmt.Fprintf(w, "wrote %s: %d samples (%d rejected, %d filtered), %d pages, %.1f MB in → %.1f MB out in %s (%.0f samples/s, %.1f MB/s in)\n",
		rep.Output, rep.Samples, rep.Rejected, rep.Filtered, rep.Pages, float64(rep.BytesIn)/1e6, float64(rep.BytesOut)/1e6,
		rep.Elapsed.Round(time.Millisecond), float64(rep.Samples)/secs, float64(rep.BytesIn)/1e6/secs)
	reasons := make([]string, 0, len(rep.RejectsByReason))
	for reason := range rep.RejectsByReason {
		reasons = append(reasons, reason)
	}
	sort.Strings(reasons)
	for _, reason := range reasons {
		fmt.Fprintf(w, "  rejected (%s): %d\n", reason, rep.RejectsByReason[reason])
	}
	switch {
	case rep.Rejected+rep.Filtered > 0:
		fmt.Fprintf(w, "%s rejected, %d filtered: listed in %s\n", plural(rep.Rejected, "sample"), rep.Filtered, rejects)
	default:
		fmt.Fprintln(w, "0 samples rejected")
	}
	return nil
}

// startTrace starts a Go execution trace of the run into the file path (checked by
// checkOutputs) and returns the function that ends it. The trace shows when each encoder
// worker ran, waited for its next sample or for the ordered writer, and what ran between the
// start and the first sample and after the last (bench/tracebusy.py sums these up).
func startTrace(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("trace: %w", err)
	}
	return func() {
		trace.Stop()
		f.Close()
	}, nil
}
