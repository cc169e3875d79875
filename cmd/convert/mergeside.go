package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/mldf/convert/internal/jsonout"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/merge"
	"github.com/mldf/convert/objstore"
)

// The side files of a merged output: its report (the parts' reports summed) and its rejects
// log (the parts' logs joined in part order). A rejects line names the sample's origin and
// key in the input, not an index in the output, so the lines are copied unchanged.

// errNoPartReport: a part of the merge has no report beside it (written elsewhere, or by an
// older version); the merged report is then not written.
var errNoPartReport = errors.New("part has no report")

// maxPartReport bounds a part's report read back.
const maxPartReport = 16 << 20

// mergedReport sums the reports of the parts (each beside its part, PART.report.json) into
// the merged output's report. out describes the merged file.
func mergedReport(ctx context.Context, st *storage, parts []string, out merge.Report) (runReport, error) {
	sum := runReport{Head: jsonout.NewHead(jsonout.KindReport), Tool: "convert", Version: version, RecipeSHA256: out.RecipeSHA256, Output: out.Output, OK: true,
		Shards: len(parts), RejectsByReason: map[string]int64{}, SkippedFiles: map[string]int64{}}
	fieldAt := map[string]int{}
	for i, p := range parts {
		path := shardReport(p)
		b, err := st.readSmall(ctx, path)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, objstore.ErrNotFound) {
			return runReport{}, fmt.Errorf("%w: %s", errNoPartReport, path)
		}
		if err != nil {
			return runReport{}, fmt.Errorf("report of part %d: %w", i, err)
		}
		if len(b) > maxPartReport {
			return runReport{}, fmt.Errorf("report of part %d: %s is %d bytes, not a report", i, path, len(b))
		}
		var r runReport
		if err := json.Unmarshal(b, &r); err != nil {
			return runReport{}, fmt.Errorf("report of part %d: %s: %w", i, path, err)
		}
		if r.SchemaVersion != jsonout.SchemaVersion || r.Kind != jsonout.KindReport {
			return runReport{}, fmt.Errorf("%w: %s is not a report of schema version %d (kind %s, schema_version %d: written by another version of convert)",
				errNoPartReport, path, jsonout.SchemaVersion, quote.Q(r.Kind), r.SchemaVersion)
		}
		sum.OK = sum.OK && r.OK
		sum.NumInputs += r.NumInputs
		sum.NumSamples += r.NumSamples
		sum.NumRejected += r.NumRejected
		sum.NumFiltered += r.NumFiltered
		sum.NumDuplicates += r.NumDuplicates
		for k, n := range r.RejectsByReason {
			sum.RejectsByReason[k] += n
		}
		for k, n := range r.SkippedFiles {
			sum.SkippedFiles[k] += n
		}
		for _, f := range r.Fields {
			j, ok := fieldAt[f.Name]
			if !ok {
				j = len(sum.Fields)
				fieldAt[f.Name] = j
				sum.Fields = append(sum.Fields, fieldReport{Name: f.Name, Type: f.Type})
			}
			sum.Fields[j].NumPayloads += f.NumPayloads
			sum.Fields[j].PayloadBytes += f.PayloadBytes
		}
		sum.InputBytes += r.InputBytes
		sum.NumPages += r.NumPages
		sum.ElapsedSeconds += r.ElapsedSeconds // the tasks' time, summed
		sum.ClaimWaitSeconds += r.ClaimWaitSeconds
		sum.PeakRSSBytes = max(sum.PeakRSSBytes, r.PeakRSSBytes)
		sum.Workers = max(sum.Workers, r.Workers)
	}
	sum.OutputBytes = out.Size
	if sum.ElapsedSeconds > 0 {
		sum.SamplesPerSecond = float64(sum.NumSamples) / sum.ElapsedSeconds
		sum.InputMBPerSecond = float64(sum.InputBytes) / 1e6 / sum.ElapsedSeconds
	}
	return sum, nil
}

// openPartRejects opens a part's rejects log, a local file or an object alike (a named pipe
// is refused, never waited on); nil, nil when it has none (no sample rejected).
func openPartRejects(ctx context.Context, st *storage, path string) (io.ReadCloser, error) {
	ra, err := st.client.OpenReaderAt(ctx, path)
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(ra, 0, ra.Size()), ra}, nil
}

// writeMergedRejects writes the parts' rejects logs (PART.rejects.jsonl), joined in part
// order, to path atomically, and returns how many parts had one. With none, an older file
// at path (another run's) is removed, as a run that rejects nothing does.
func writeMergedRejects(ctx context.Context, st *storage, parts []string, path string) (int, error) {
	var srcs []string
	for _, p := range parts {
		r, err := openPartRejects(ctx, st, shardRejects(p))
		if err != nil {
			return 0, fmt.Errorf("rejects of %s: %w", p, err)
		}
		if r != nil {
			r.Close()
			srcs = append(srcs, shardRejects(p))
		}
	}
	if len(srcs) == 0 {
		if _, err := st.client.Stat(ctx, path); err != nil {
			return 0, nil // none there (or not a file, which is left alone)
		}
		if err := st.client.Remove(ctx, path); err != nil {
			return 0, fmt.Errorf("rejects file %s: remove the one of an earlier run: %w", path, err)
		}
		return 0, nil
	}
	copyAll := func(w io.Writer) error {
		for _, src := range srcs {
			r, err := openPartRejects(ctx, st, src)
			if err == nil && r == nil {
				err = fmt.Errorf("%s: %w", src, fs.ErrNotExist) // removed while merging
			}
			if err != nil {
				return fmt.Errorf("rejects of a part: %w", err)
			}
			_, err = io.Copy(w, ctxReader{ctx, r})
			r.Close()
			if err != nil {
				return fmt.Errorf("rejects %s: %w", src, err)
			}
		}
		return nil
	}
	if err := st.client.MakeParents(ctx, path); err != nil {
		return 0, err
	}
	w, err := st.client.Create(ctx, path)
	if err != nil {
		return 0, err
	}
	if err := copyAll(w); err != nil {
		w.Abort()
		return 0, err
	}
	return len(srcs), w.Close()
}

// ctxReader stops a copy when ctx is cancelled (SIGINT, SIGTERM).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
