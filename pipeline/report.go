package pipeline

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sources"
)

// Progress is a snapshot of a running conversion.
type Progress struct {
	Done, Total, Rejected int64 // Total is -1 when the source does not know its length
	BytesIn, BytesOut     int64
	Elapsed               time.Duration
}

// Report summarises a finished (or failed) conversion.
type Report struct {
	Output   string
	Samples  int64 // rows written
	Rejected int64 // samples left out by errors (the error policy counts these)
	Filtered int64 // samples left out by a field's options (encoders.ErrFiltered)
	// Duplicates counts the samples Config.Dedup found: left out (mode drop) or written and
	// listed (mode report).
	Duplicates      int64
	RejectsByReason map[string]int64 // all three, by reason ("filtered", "duplicate")
	BytesIn         int64            // input bytes the sources accounted for
	BytesOut        int64            // output file size
	PayloadBytes    int64
	Pages           int64 // pages of the data region
	Elapsed         time.Duration
	Workers         int
	ChunkSize       int // 0: adaptive (Config.ChunkSize)
	// ClaimWait is the time workers spent blocked waiting for their turn to claim while they
	// could have encoded more (summed over workers); InputWait the time they waited for
	// samples from the source; WriteTime the time in writes.
	ClaimWait, InputWait, WriteTime time.Duration
	// ClaimsOwn counts chunks claimed by their own worker as it published them, ClaimsHelped
	// those claimed by the worker that passed the baton; Waited counts the times a worker
	// blocked for its oldest chunk's claim.
	ClaimsOwn, ClaimsHelped, Waited int64
	// Fields counts, per field in Config.Fields order, the non-empty payloads written and
	// their bytes: the report's per-field figures, without reading the output back.
	Fields []FieldStats
	// SkippedFiles counts the files the source found but does not read (a .svg among
	// images), by extension: see sources.SkipCounter. nil when none, or when the source
	// does not count them.
	SkippedFiles map[string]int64
}

// FieldStats describes what one field wrote.
type FieldStats struct {
	Name         string
	Type         mldf.TypeID
	Payloads     int64
	PayloadBytes int64
}

// emptyError explains a run that would write no sample.
func (r *runner) emptyError(rep *Report) error {
	why := "the source gave no sample"
	if n := r.done.Load(); n > 0 {
		why = fmt.Sprintf("the source gave %d samples: %d rejected, %d filtered", n, rep.Rejected, rep.Filtered)
	}
	if n, exts := skippedSummary(rep.SkippedFiles); n > 0 {
		why += fmt.Sprintf("; it skipped %d files it does not read (%s)", n, exts)
	}
	return fmt.Errorf("%w: %s; nothing is written to %s (allow_empty: true in a recipe writes an empty output instead)", ErrEmpty, why, r.cfg.Output)
}

// skippedSummary returns the number of skipped files and their counts by extension, as
// ".svg: 9, none: 1", the most frequent first (at most 8).
func skippedSummary(m map[string]int64) (int64, string) {
	type kv struct {
		ext string
		n   int64
	}
	var all []kv
	var total int64
	for e, n := range m {
		all = append(all, kv{e, n})
		total += n
	}
	slices.SortFunc(all, func(a, b kv) int {
		if a.n != b.n {
			return cmp.Compare(b.n, a.n)
		}
		return strings.Compare(a.ext, b.ext)
	})
	var parts []string
	for i, x := range all {
		if i == 8 {
			parts = append(parts, "...")
			break
		}
		ext := x.ext
		if ext == "" {
			ext = "no extension"
		}
		parts = append(parts, fmt.Sprintf("%s: %d", ext, x.n))
	}
	return total, strings.Join(parts, ", ")
}

// logSkipped warns, once a run has ended, about the files its source skipped.
func (r *runner) logSkipped(rep *Report) {
	if n, exts := skippedSummary(rep.SkippedFiles); n > 0 {
		what := fmt.Sprintf("%d files skipped: the source does not read them", n)
		if n == 1 {
			what = "1 file skipped: the source does not read it"
		}
		r.log.Warn(fmt.Sprintf("%s (%s)", what, exts), "skipped_files", n)
	}
}

func (r *runner) snapshot() Progress {
	return Progress{Done: r.done.Load(), Total: r.total, Rejected: r.rejected.Load(),
		BytesIn: r.bytesIn.Load(), BytesOut: r.w.Stats().Written, Elapsed: time.Since(r.start)}
}

// report builds the report after the errgroup is done (so the baton-owned fields are safe).
func (r *runner) report() Report {
	st := r.w.Stats()
	fields := make([]FieldStats, len(r.cfg.Fields))
	for f, b := range r.cfg.Fields {
		fields[f] = FieldStats{Name: b.Field.Name(), Type: b.Field.Type(), Payloads: r.fields[f][0], PayloadBytes: r.fields[f][1]}
	}
	return Report{
		Fields: fields,
		Output: r.cfg.Output, Samples: st.Position.Rows, Rejected: r.rejected.Load(), Filtered: r.filtered,
		Duplicates:      r.dups,
		RejectsByReason: r.byReason, BytesIn: r.bytesIn.Load(), BytesOut: st.Written,
		PayloadBytes: st.PayloadBytes, Elapsed: time.Since(r.start),
		Workers: r.cfg.Workers, ChunkSize: r.cfg.ChunkSize, // 0: adaptive
		ClaimWait: st.Wait.WaitTime,
		InputWait: time.Duration(r.inputWait.Load()), WriteTime: st.WriteTime,
		ClaimsOwn: st.Wait.Own, ClaimsHelped: st.Wait.Helped, Waited: st.Wait.Waited,
		SkippedFiles: sources.SkippedFiles(r.cfg.Source),
	}
}

func (r *runner) progress(rep *Report) {
	if r.cfg.Progress == nil {
		return
	}
	r.cfg.Progress(Progress{Done: r.done.Load(), Total: r.total, Rejected: rep.Rejected,
		BytesIn: rep.BytesIn, BytesOut: rep.BytesOut, Elapsed: rep.Elapsed})
}
