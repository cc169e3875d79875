package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"

	"github.com/mldf/convert/format/mldf/decode"
	"github.com/mldf/convert/internal/jsonout"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/recipe"
	"github.com/mldf/convert/sources"
)

// runReport is the machine-readable report written beside the output
// (docs/schema/report.schema.json).
type runReport struct {
	jsonout.Head
	Tool             string           `json:"tool"`
	Version          string           `json:"version"`
	RecipeSHA256     string           `json:"recipe_sha256"`
	Output           string           `json:"output"`
	OK               bool             `json:"ok"`
	Error            string           `json:"error,omitempty"`
	Shard            *int             `json:"shard,omitempty"`
	Shards           int              `json:"shards,omitempty"`
	NumInputs        int              `json:"num_inputs"`
	NumSamples       int64            `json:"num_samples"`
	NumRejected      int64            `json:"num_rejected"`
	NumFiltered      int64            `json:"num_filtered"`
	NumDuplicates    int64            `json:"num_duplicates"`
	RejectsByReason  map[string]int64 `json:"rejects_by_reason"`
	SkippedFiles     map[string]int64 `json:"skipped_files"` // files the source does not read, by extension
	Fields           []fieldReport    `json:"fields"`
	InputBytes       int64            `json:"input_bytes"`
	OutputBytes      int64            `json:"output_bytes"`
	NumPages         int64            `json:"num_pages"`
	ElapsedSeconds   float64          `json:"elapsed_seconds"`
	SamplesPerSecond float64          `json:"samples_per_second"`
	InputMBPerSecond float64          `json:"input_mb_per_second"`
	PeakRSSBytes     int64            `json:"peak_rss_bytes"`
	Workers          int              `json:"workers"`
	ClaimWaitSeconds float64          `json:"claim_wait_seconds"`
}

type fieldReport struct {
	Name         string `json:"name"`
	Type         string `json:"type"`
	NumPayloads  int    `json:"num_payloads"`
	PayloadBytes uint64 `json:"payload_bytes"`
}

// recipeHash is the SHA-256 of the resolved recipe (defaults applied, flags merged), so two
// runs of the same conversion have the same hash.
func recipeHash(r *recipe.Recipe) string {
	b, _ := yaml.Marshal(r)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func newReport(plan *recipe.Plan, rep pipeline.Report, runErr error) runReport {
	r := plan.Recipe
	out := runReport{Head: jsonout.NewHead(jsonout.KindReport),
		Tool: "convert", Version: version, RecipeSHA256: recipeHash(r), Output: rep.Output, OK: runErr == nil,
		NumInputs: plan.Slice[1] - plan.Slice[0], NumSamples: rep.Samples, NumRejected: rep.Rejected, NumFiltered: rep.Filtered, NumDuplicates: rep.Duplicates,
		RejectsByReason: rep.RejectsByReason, SkippedFiles: rep.SkippedFiles, InputBytes: rep.BytesIn, OutputBytes: rep.BytesOut,
		NumPages: rep.Pages, ElapsedSeconds: rep.Elapsed.Seconds(), PeakRSSBytes: peakRSS(), Workers: rep.Workers,
		ClaimWaitSeconds: rep.ClaimWait.Seconds(),
	}
	if out.RejectsByReason == nil {
		out.RejectsByReason = map[string]int64{}
	}
	if out.SkippedFiles == nil {
		out.SkippedFiles = map[string]int64{}
	}
	if runErr != nil {
		out.Error = runErr.Error()
	}
	if r.Shards > 0 {
		out.Shard, out.Shards = &r.Shard, r.Shards
	}
	if s := rep.Elapsed.Seconds(); s > 0 {
		out.SamplesPerSecond = float64(rep.Samples) / s
		out.InputMBPerSecond = float64(rep.BytesIn) / 1e6 / s
	}
	if runErr == nil {
		// Counted by the pipeline as it wrote: reading a 10^8-row table back would cost
		// minutes and its pages.
		for _, f := range rep.Fields {
			out.Fields = append(out.Fields, fieldReport{Name: f.Name, Type: f.Type.String(), NumPayloads: int(f.Payloads), PayloadBytes: uint64(f.PayloadBytes)})
		}
	}
	return out
}

// writeReport writes the run's report JSON atomically to the recipe's report path. An
// interrupted run (SIGINT, SIGTERM) writes none: it leaves nothing behind.
func writeReport(ctx context.Context, st *storage, plan *recipe.Plan, rep pipeline.Report, runErr error) error {
	path := plan.Recipe.Report
	if path == "" || ctx.Err() != nil {
		return nil
	}
	if rep.Output == "" {
		rep.Output = plan.Recipe.Output
	}
	return writeFileAtomic(ctx, st, path, newReport(plan, rep, runErr))
}

// writeFileAtomic writes v as indented JSON to path (a local path or a bucket URL)
// atomically: nothing is at path until the whole file is (storage.writeSmall). path must be
// a new name or a regular file (checkOutputs refuses anything else before the run).
func writeFileAtomic(ctx context.Context, st *storage, path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return st.writeSmall(ctx, path, append(b, '\n'))
}

// printPlan prints what a run would do, without doing it (validate, run --dry-run).
func printPlan(w io.Writer, p *recipe.Plan) error {
	r := p.Recipe
	var bytes int64
	if err := p.Inputs.Each(func(i int64, in sources.Input) error {
		if i >= int64(p.Slice[0]) && i < int64(p.Slice[1]) {
			bytes += in.Size
		}
		return nil
	}); err != nil {
		return err
	}
	fmt.Fprintf(w, "recipe OK\nsource     %s %s%v: %d inputs (%s)", r.Source.Type, r.Source.Path, r.Source.Inputs,
		p.Slice[1]-p.Slice[0], human(uint64(bytes)))
	if r.Shards > 0 {
		fmt.Fprintf(w, ", slice %d of %d = inputs [%d, %d) of %d", r.Shard, r.Shards, p.Slice[0], p.Slice[1], p.Inputs.Len())
	}
	if n := p.Source.Len(); n >= 0 && p.Pack == nil { // packed rows are counted by the run
		fmt.Fprintf(w, ", %d samples", n)
	} else {
		fmt.Fprint(w, ", sample count known after the run (streaming)")
	}
	fmt.Fprintln(w)
	for _, n := range p.Notes { // what Build inferred (a Parquet schema's mapping)
		fmt.Fprintln(w, "mapping   ", n)
	}
	fmt.Fprintln(w, "fields")
	for _, b := range p.Bindings {
		fmt.Fprintf(w, "  %-16s %-17s from %q", b.Field.Name(), b.Field.Type(), b.Column)
		if b.Optional {
			fmt.Fprint(w, " (optional)")
		}
		if a := decode.ArgumentsText(b.Field.Type(), b.Field.Arguments()); a != "" {
			fmt.Fprintf(w, "  %s", a)
		}
		fmt.Fprintln(w)
	}
	out := r.Output
	if r.Shards > 0 {
		out = partPath(r.Output, r.Shard, r.Shards)
	}
	fmt.Fprintf(w, "output     %s (%s, page size %s, checksums %v)\n", out, r.Format, human(uint64(r.PageSize)), *r.Checksums)
	fmt.Fprintf(w, "run        workers %d, on_error %s, max_errors %q, rejects %s, report %s\n",
		r.Workers, r.OnError, r.MaxErrors, r.Rejects, r.Report)
	return nil
}
