package main

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/jsonout"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/recipe"
	"github.com/mldf/convert/sources"
)

// The documents the commands print as JSON besides the formats' own (format/*/describe_json.go)
// and the report (report.go): the plan, the run's summary and errors. docs/schema holds their
// schemas and the vocabulary they share.

// planJSON is what validate --json and run --dry-run --json print
// (docs/schema/plan.schema.json).
type planJSON struct {
	jsonout.Head
	Source planSourceJSON  `json:"source"`
	Notes  []string        `json:"mapping"`
	Fields []planFieldJSON `json:"fields"`
	Output planOutputJSON  `json:"output"`
	Run    planRunJSON     `json:"run"`
}

type planSourceJSON struct {
	Type       string   `json:"type"`
	Path       string   `json:"path,omitempty"`
	Inputs     []string `json:"inputs,omitempty"` // as the recipe gives them (globs, ranges)
	NumInputs  int      `json:"num_inputs"`       // the files this run reads
	InputBytes int64    `json:"input_bytes"`
	Shard      *int     `json:"shard,omitempty"`
	Shards     int      `json:"shards,omitempty"`
	// FirstInput and EndInput are this shard's slice [first, end) of the inputs.
	FirstInput *int `json:"first_input,omitempty"`
	EndInput   *int `json:"end_input,omitempty"`
	// NumSamples is the number of samples, null when known only after the run (streaming
	// sources, packed text).
	NumSamples *int64 `json:"num_samples"`
}

type planFieldJSON struct {
	Name      string              `json:"name"`
	Type      string              `json:"type"`
	TypeID    uint16              `json:"type_id"`
	From      string              `json:"from"`
	Optional  bool                `json:"optional"`
	Arguments *mldf.ArgumentsJSON `json:"arguments"`
}

type planOutputJSON struct {
	Path      string `json:"path"`
	Format    string `json:"format"`
	PageSize  int64  `json:"page_size"`
	Checksums bool   `json:"checksums"`
}

type planRunJSON struct {
	Workers   int    `json:"workers"`
	OnError   string `json:"on_error"`
	MaxErrors string `json:"max_errors"`
	Rejects   string `json:"rejects"`
	Report    string `json:"report"`
	LogFormat string `json:"log_format"`
}

// printPlanJSON prints what printPlan prints, as JSON.
func printPlanJSON(w io.Writer, p *recipe.Plan) error {
	r := p.Recipe
	out := planJSON{Head: jsonout.NewHead(jsonout.KindPlan), Notes: p.Notes, Fields: []planFieldJSON{}}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	out.Source = planSourceJSON{Type: r.Source.Type, Path: r.Source.Path, Inputs: r.Source.Inputs, NumInputs: p.Slice[1] - p.Slice[0]}
	if err := p.Inputs.Each(func(i int64, in sources.Input) error {
		if i >= int64(p.Slice[0]) && i < int64(p.Slice[1]) {
			out.Source.InputBytes += in.Size
		}
		return nil
	}); err != nil {
		return err
	}
	if r.Shards > 0 {
		shard, lo, hi := r.Shard, p.Slice[0], p.Slice[1]
		out.Source.Shard, out.Source.Shards, out.Source.FirstInput, out.Source.EndInput = &shard, r.Shards, &lo, &hi
	}
	if n := p.Source.Len(); n >= 0 && p.Pack == nil {
		out.Source.NumSamples = &n
	}
	for _, b := range p.Bindings {
		args := b.Field.Arguments()
		out.Fields = append(out.Fields, planFieldJSON{Name: b.Field.Name(), Type: b.Field.Type().String(),
			TypeID: uint16(b.Field.Type()), From: b.Column, Optional: b.Optional, Arguments: mldf.DecodeArguments(b.Field.Type(), args)})
	}
	path := r.Output
	if r.Shards > 0 {
		path = partPath(r.Output, r.Shard, r.Shards)
	}
	out.Output = planOutputJSON{Path: path, Format: r.Format, PageSize: int64(r.PageSize), Checksums: r.Checksums == nil || *r.Checksums}
	out.Run = planRunJSON{Workers: r.Workers, OnError: r.OnError, MaxErrors: r.MaxErrors, Rejects: r.Rejects, Report: r.Report, LogFormat: r.LogFormat}
	return writeJSON(w, out)
}

// summaryJSON is what a run prints when it ends, with --json or --log-format json
// (docs/schema/summary.schema.json).
type summaryJSON struct {
	jsonout.Head
	Output           string           `json:"output"`
	UpToDate         bool             `json:"up_to_date"` // a sharded task whose part was already complete: nothing was done
	NumSamples       int64            `json:"num_samples"`
	NumRejected      int64            `json:"num_rejected"`
	NumFiltered      int64            `json:"num_filtered"`
	NumDuplicates    int64            `json:"num_duplicates"` // dropped or (mode report) listed by dedup
	RejectsByReason  map[string]int64 `json:"rejects_by_reason"`
	Rejects          string           `json:"rejects,omitempty"` // the rejects log, when a sample was rejected or filtered
	NumPages         int64            `json:"num_pages"`
	InputBytes       int64            `json:"input_bytes"`
	OutputBytes      int64            `json:"output_bytes"`
	ElapsedSeconds   float64          `json:"elapsed_seconds"`
	SamplesPerSecond float64          `json:"samples_per_second"`
	InputMBPerSecond float64          `json:"input_mb_per_second"`
}

// newSummaryJSON returns the summary of a finished run.
func newSummaryJSON(rep pipeline.Report, rejects string) summaryJSON {
	out := summaryJSON{Head: jsonout.NewHead(jsonout.KindSummary), Output: rep.Output, NumSamples: rep.Samples,
		NumRejected: rep.Rejected, NumFiltered: rep.Filtered, NumDuplicates: rep.Duplicates, RejectsByReason: rep.RejectsByReason,
		NumPages: rep.Pages, InputBytes: rep.BytesIn, OutputBytes: rep.BytesOut, ElapsedSeconds: rep.Elapsed.Seconds()}
	if out.RejectsByReason == nil {
		out.RejectsByReason = map[string]int64{}
	}
	if rep.Rejected+rep.Filtered+rep.Duplicates > 0 {
		out.Rejects = rejects
	}
	if s := rep.Elapsed.Seconds(); s > 0 {
		out.SamplesPerSecond = float64(rep.Samples) / s
		out.InputMBPerSecond = float64(rep.BytesIn) / 1e6 / s
	}
	return out
}

// errorJSON is an error as a command prints it on stderr with --json or --log-format json
// (docs/schema/error.schema.json).
type errorJSON struct {
	jsonout.Head
	Error      string `json:"error"`
	ExitStatus int    `json:"exit_status"`
	Usage      bool   `json:"usage"` // a command-line mistake (exit status 2)
}

// jsonErrors reports whether the command line asks for machine-readable output (--json,
// --log-format json, or a recipe whose log_format is json, marked by asJSONError), so that
// its error is printed as an errorJSON.
func jsonErrors(args []string, err error) bool {
	var je *jsonModeError
	if errors.As(err, &je) {
		return true
	}
	for i, a := range args {
		if a == "--" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name = strings.ReplaceAll(name, "_", "-")
		switch {
		case name == "json" && (!hasVal || val == "true" || val == "1"):
			return true
		case name == "log-format" && hasVal:
			if val == "json" {
				return true
			}
		case name == "log-format" && i+1 < len(args) && args[i+1] == "json":
			return true
		}
	}
	return false
}

// jsonModeError marks the error of a run whose recipe asked for JSON logs (log_format:
// json), which the command line alone does not show.
type jsonModeError struct{ err error }

func (e *jsonModeError) Error() string { return e.err.Error() }
func (e *jsonModeError) Unwrap() error { return e.err }

// asJSONError marks err, when not nil, as the error of a run in JSON mode.
func asJSONError(err error) error {
	if err == nil {
		return nil
	}
	return &jsonModeError{err}
}

// printError prints err as main does: "convert: ERR" on w, or an errorJSON line when the
// command line (args) asks for JSON.
func printError(w io.Writer, args []string, err error, status int) {
	if !jsonErrors(args, err) {
		io.WriteString(w, "convert: "+err.Error()+"\n")
		return
	}
	writeJSONLine(w, errorJSON{Head: jsonout.NewHead(jsonout.KindError), Error: err.Error(), ExitStatus: status,
		Usage: errors.Is(err, errUsage)})
}

// writeJSONLine writes v as one line of JSON (a JSON Lines record).
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w) // Encode ends the line
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
