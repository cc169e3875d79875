// Package progress shows how a conversion advances: a one-line bar with rates and an ETA when
// the output is a terminal, and periodic structured log lines when it is not (a file, a cluster
// log). It draws nothing itself between updates; the caller feeds it snapshots.
package progress

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/mldf/convert/internal/jsonout"
)

// Stats is one snapshot of a run.
type Stats struct {
	Done, Total, Rejected int64 // Total < 0: unknown (streaming source)
	BytesIn, BytesOut     int64
	Elapsed               time.Duration
}

// Reporter renders snapshots. It is not safe for concurrent use: feed it from one goroutine.
type Reporter struct {
	w        io.Writer
	terminal bool
	logger   *slog.Logger
	every    time.Duration
	lastLog  time.Duration
	width    int
	drawn    bool
	last     *Stats // the latest snapshot not yet logged
}

// New returns a Reporter that draws a bar on w when terminal is true, and otherwise logs a
// line to log at most every interval.
func New(w io.Writer, terminal bool, log *slog.Logger, interval time.Duration) *Reporter {
	return &Reporter{w: w, terminal: terminal, logger: log, every: interval, lastLog: -interval}
}

// Update renders s.
func (r *Reporter) Update(s Stats) {
	if r.terminal {
		line := Line(s)
		pad := ""
		if n := r.width - len(line); n > 0 {
			pad = strings.Repeat(" ", n)
		}
		r.width = len(line)
		fmt.Fprintf(r.w, "\r%s%s", line, pad)
		r.drawn = true
		return
	}
	if s.Elapsed-r.lastLog < r.every {
		r.last = &s
		return
	}
	r.log(s)
}

// log logs s with the keys of every JSON document the command prints
// (docs/schema/progress.schema.json).
func (r *Reporter) log(s Stats) {
	r.lastLog, r.last = s.Elapsed, nil
	attrs := []any{"schema_version", jsonout.SchemaVersion, "kind", jsonout.KindProgress, "num_samples", s.Done, "num_rejected", s.Rejected,
		"elapsed_seconds", round(s.Elapsed.Seconds()), "samples_per_second", round(rate(float64(s.Done), s.Elapsed)),
		"input_mb_per_second", round(rate(float64(s.BytesIn)/1e6, s.Elapsed)), "input_bytes", s.BytesIn, "output_bytes", s.BytesOut}
	if s.Total >= 0 {
		attrs = append(attrs, "total_samples", s.Total)
		if eta, ok := ETA(s); ok {
			attrs = append(attrs, "eta_seconds", eta.Round(time.Second).Seconds())
		}
	}
	r.logger.Info("progress", attrs...)
}

// Finish ends the bar's line, if one was drawn, or logs the last snapshot not yet logged.
func (r *Reporter) Finish() {
	if r.last != nil {
		r.log(*r.last)
	}
	if r.drawn {
		fmt.Fprintln(r.w)
		r.drawn = false
	}
}

// Line formats s as the bar's text, e.g.
// "[=========>          ]  48% 960/2000 | 1183 samples/s 11.2 MB/s | ETA 1s".
func Line(s Stats) string {
	var b strings.Builder
	if s.Total > 0 {
		const width = 20
		frac := min(float64(s.Done)/float64(s.Total), 1)
		n := int(frac * width)
		b.WriteString("[" + strings.Repeat("=", n))
		if n < width {
			b.WriteString(">" + strings.Repeat(" ", width-n-1))
		}
		fmt.Fprintf(&b, "] %3.0f%% %d/%d", frac*100, s.Done, s.Total)
	} else {
		fmt.Fprintf(&b, "%d samples", s.Done)
	}
	fmt.Fprintf(&b, " | %.0f samples/s %.1f MB/s", rate(float64(s.Done), s.Elapsed), rate(float64(s.BytesIn)/1e6, s.Elapsed))
	if s.Rejected > 0 {
		fmt.Fprintf(&b, " | %d rejected", s.Rejected)
	}
	if eta, ok := ETA(s); ok {
		fmt.Fprintf(&b, " | ETA %s", eta.Round(time.Second))
	}
	return b.String()
}

// ETA estimates the time left from the average rate so far; ok is false when the total is
// unknown or nothing is done yet.
func ETA(s Stats) (time.Duration, bool) {
	if s.Total <= 0 || s.Done <= 0 || s.Elapsed <= 0 {
		return 0, false
	}
	left := max(s.Total-s.Done-s.Rejected, 0)
	return time.Duration(float64(s.Elapsed) * float64(left) / float64(s.Done+s.Rejected)), true
}

func rate(x float64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return x / d.Seconds()
}

func round(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }
