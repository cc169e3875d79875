package progress

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestLine(t *testing.T) {
	got := Line(Stats{Done: 500, Total: 2000, BytesIn: 5e6, Elapsed: time.Second})
	want := "[=====>              ]  25% 500/2000 | 500 samples/s 5.0 MB/s | ETA 3s"
	if got != want {
		t.Fatalf("Line = %q\nwant   %q", got, want)
	}
	if got := Line(Stats{Done: 7, Total: -1, Rejected: 2, Elapsed: time.Second}); got != "7 samples | 7 samples/s 0.0 MB/s | 2 rejected" {
		t.Fatalf("streaming line = %q", got)
	}
}

func TestETA(t *testing.T) {
	if _, ok := ETA(Stats{Done: 1, Total: -1, Elapsed: time.Second}); ok {
		t.Fatal("ETA without a total")
	}
	if eta, ok := ETA(Stats{Done: 10, Total: 40, Elapsed: 2 * time.Second}); !ok || eta != 6*time.Second {
		t.Fatalf("ETA = %v %v", eta, ok)
	}
}

func TestTerminalRedrawsOneLine(t *testing.T) {
	var buf bytes.Buffer
	r := New(&buf, true, nil, time.Second)
	r.Update(Stats{Done: 10, Total: 100, Elapsed: time.Second})
	r.Update(Stats{Done: 100, Total: 100, Elapsed: 2 * time.Second})
	r.Finish()
	out := buf.String()
	if strings.Count(out, "\r") != 2 || strings.Count(out, "\n") != 1 || !strings.Contains(out, "100%") {
		t.Fatalf("terminal output %q", out)
	}
}

func TestLogLinesWhenNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	r := New(&buf, false, log, 10*time.Second)
	for s := 0; s <= 35; s++ {
		r.Update(Stats{Done: int64(s * 10), Total: 1000, Elapsed: time.Duration(s) * time.Second})
	}
	r.Finish()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 5 || strings.Contains(buf.String(), "\r") {
		t.Fatalf("want 5 JSON lines (0s, 10s, 20s, 30s and the last at 35s), got %d:\n%s", len(lines), buf.String())
	}
	if !strings.Contains(lines[4], `"num_samples":350`) {
		t.Fatalf("Finish should log the last snapshot: %s", lines[4])
	}
	if !strings.Contains(lines[3], `"num_samples":300`) || !strings.Contains(lines[3], `"eta_seconds":70`) {
		t.Fatalf("last line %s", lines[3])
	}
}
