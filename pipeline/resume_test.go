package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/internal/dedup"
	"github.com/mldf/convert/sources"
)

// lockedBuf is a bytes.Buffer safe for the checkpointer's and the run's lines.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// seekSource is a sliceSource that resumes by index (sources.Resumer), counting its resumes.
type seekSource struct {
	*sliceSource
	resumed *int64
}

func (s seekSource) Resume(n int64, _ []byte) (sources.Source, error) {
	*s.resumed = n
	return seekSource{&sliceSource{samples: s.samples[n:], failAt: -1, stallAt: -1, delay: s.delay}, s.resumed}, nil
}

var testInputs = []sources.Input{{Path: "data/a.bin", Size: 100}, {Path: "data/b.bin", Size: 200}}

func resumeConfig(out string, delay time.Duration, seek bool, log *lockedBuf) (Config, *int64) {
	cfg := killSamplesConfig(out, delay)
	resumed := new(int64)
	*resumed = -1
	if seek {
		cfg.Source = seekSource{cfg.Source.(*sliceSource), resumed}
	}
	cfg.Resume = &Resume{Fingerprint: Fingerprint{Recipe: "r1", Version: "test", Inputs: sources.Inputs(testInputs)},
		Every: 5 * time.Millisecond, Log: log}
	return cfg, resumed
}

// interrupt runs cfg until its checkpoint record has number >= n, then cancels it. The output
// path must stay empty meanwhile.
func interrupt(t *testing.T, cfg Config, n int64) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, cfg); done <- err }()
	rec := atomicfile.PartialName(cfg.Output, CheckpointSuffix)
	for {
		select {
		case err := <-done:
			t.Fatalf("the run ended before checkpoint %d: %v", n, err)
		case <-time.After(2 * time.Millisecond):
		}
		if _, err := os.Stat(cfg.Output); err == nil {
			t.Fatal("a file at the output path before the commit")
		}
		b, err := os.ReadFile(rec)
		if err != nil {
			continue
		}
		var c checkpoint
		if json.Unmarshal(b, &c) == nil && c.Number >= n {
			break
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	if _, err := os.Stat(cfg.Output); err == nil {
		t.Fatal("a file at the output path after the interruption")
	}
	if _, err := os.Stat(rec); err != nil {
		t.Fatalf("the interruption lost the checkpoint: %v", err)
	}
}

func TestResume(t *testing.T) {
	ref := filepath.Join(t.TempDir(), "ref.mldf")
	mustRun(t, killSamplesConfig(ref, 0))
	want, _ := os.ReadFile(ref)
	wantRejects, _ := os.ReadFile(ref + ".rejects.jsonl")
	corrupt := func(t *testing.T, out string) {
		rec := atomicfile.PartialName(out, CheckpointSuffix)
		b, _ := os.ReadFile(rec)
		if err := os.WriteFile(rec, b[:len(b)/2], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flip := func(t *testing.T, out string) {
		rec := atomicfile.PartialName(out, CheckpointSuffix)
		b, _ := os.ReadFile(rec)
		b = bytes.Replace(b, []byte(`"rows":`), []byte(`"rows":1`), 1)
		os.WriteFile(rec, b, 0o644)
	}
	for _, tc := range []struct {
		name    string
		seek    bool
		change  func(t *testing.T, out string, cfg *Config)
		message string // in the second run's lines; "" means it resumes
	}{
		{name: "resumes by index", seek: true},
		{name: "resumes by re-reading"},
		{name: "recipe changed", change: func(t *testing.T, out string, cfg *Config) { cfg.Resume.Fingerprint.Recipe = "r2" },
			message: "starting over: the recipe changed"},
		{name: "input changed", change: func(t *testing.T, out string, cfg *Config) {
			cfg.Resume.Fingerprint.Inputs = sources.Inputs([]sources.Input{testInputs[0], {Path: "data/b.bin", Size: 201}})
		}, message: "starting over: the inputs changed since the checkpoint: input data/b.bin was 200 bytes, is 201"},
		{name: "input added", change: func(t *testing.T, out string, cfg *Config) {
			cfg.Resume.Fingerprint.Inputs = sources.Inputs(append(append([]sources.Input(nil), testInputs...), sources.Input{Path: "c", Size: 1}))
		}, message: "2 inputs then, 3 now"},
		{name: "tool changed", change: func(t *testing.T, out string, cfg *Config) { cfg.Resume.Fingerprint.Version = "test2" },
			message: "written by version"},
		{name: "truncated record", change: func(t *testing.T, out string, cfg *Config) { corrupt(t, out) }, message: "is damaged"},
		{name: "edited record", change: func(t *testing.T, out string, cfg *Config) { flip(t, out) }, message: "is damaged"},
		{name: "record removed", change: func(t *testing.T, out string, cfg *Config) {
			os.Remove(atomicfile.PartialName(out, CheckpointSuffix))
		}, message: "stopped before its first checkpoint"},
		{name: "partial output removed", change: func(t *testing.T, out string, cfg *Config) {
			os.Remove(atomicfile.PartialName(out, ".partial"))
		}, message: "is missing"},
		{name: "restart", change: func(t *testing.T, out string, cfg *Config) { cfg.Resume.Restart = true },
			message: "--restart discards the checkpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.mldf")
			var log1 lockedBuf
			cfg, _ := resumeConfig(out, 500*time.Microsecond, tc.seek, &log1)
			interrupt(t, cfg, 2)
			var log2 lockedBuf
			cfg, resumed := resumeConfig(out, 0, tc.seek, &log2)
			if tc.change != nil {
				tc.change(t, out, &cfg)
			}
			mustRun(t, cfg)
			lines := log2.String()
			if tc.message == "" {
				if !strings.Contains(lines, "resumed at sample") {
					t.Errorf("no resume: %s", lines)
				}
				if tc.seek && *resumed <= 0 {
					t.Errorf("the source was not resumed by index: %d", *resumed)
				}
				if !tc.seek && !strings.Contains(lines, "by re-reading its first") {
					t.Errorf("the source was not re-read: %s", lines)
				}
			} else if !strings.Contains(lines, tc.message) || strings.Contains(lines, "resumed at") {
				t.Errorf("the run's lines lack %q:\n%s", tc.message, lines)
			}
			got, _ := os.ReadFile(out)
			if !bytes.Equal(got, want) {
				t.Errorf("the output differs from an uninterrupted run's (%d and %d bytes)", len(got), len(want))
			}
			gotRejects, _ := os.ReadFile(out + ".rejects.jsonl")
			if !bytes.Equal(gotRejects, wantRejects) {
				t.Errorf("the rejects differ from an uninterrupted run's:\n%s\nwant\n%s", gotRejects, wantRejects)
			}
			noTemps(t, dir, "out.mldf", "out.mldf.rejects.jsonl")
		})
	}
}

// TestResumeFinishedLeavesNothing: a resumable run that is not interrupted leaves only its
// output and rejects, and a failing one (not an interruption) leaves nothing to resume.
func TestResumeFinishedLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.mldf")
	var log lockedBuf
	cfg, _ := resumeConfig(out, 0, false, &log)
	mustRun(t, cfg)
	noTemps(t, dir, "out.mldf", "out.mldf.rejects.jsonl")

	dir = t.TempDir()
	out = filepath.Join(dir, "out.mldf")
	cfg, _ = resumeConfig(out, 100*time.Microsecond, false, &log)
	cfg.Source.(*sliceSource).failAt = 500
	if _, err := Run(context.Background(), cfg); !errors.Is(err, errSourceBroke) {
		t.Fatalf("got %v, want the source's error", err)
	}
	noTemps(t, dir, "out.mldf.rejects.jsonl") // rejects are published by a failed run
}

// TestResumeBusy: a second run to an output another run is writing fails at once and
// leaves the first run's files alone.
func TestResumeBusy(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.mldf")
	partial := atomicfile.PartialName(out, ".partial")
	f, err := atomicfile.OpenLocked(partial, 0o644, true)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("the first run's bytes")
	var log lockedBuf
	cfg, _ := resumeConfig(out, 0, false, &log)
	if _, err := Run(context.Background(), cfg); !errors.Is(err, atomicfile.ErrBusy) {
		t.Fatalf("got %v, want ErrBusy", err)
	}
	if b, _ := os.ReadFile(partial); string(b) != "the first run's bytes" {
		t.Fatalf("the first run's file was changed: %q", b)
	}
}

// TestResumeNotResumable: a run whose rejects go to a bucket, or that dedups with a table
// of the caller's (an append's), cannot be resumed; one that dedups with its own table can.
func TestResumeNotResumable(t *testing.T) {
	out := outPath(t)
	var log lockedBuf
	cfg, _ := resumeConfig(out, 0, false, &log)
	cfg.RejectsPath = "s3://bucket/rejects.jsonl" // kept locally until the commit
	if why := notResumable(&cfg); why != "" {
		t.Fatalf("notResumable = %q for rejects in a bucket", why)
	}
	cfg.RejectsPath = ""
	cfg.Sink = nil
	if why := notResumable(&cfg); why != "" {
		t.Fatalf("notResumable = %q for a local run", why)
	}
	cfg.Dedup = &Dedup{Fields: []string{"data"}}
	if why := notResumable(&cfg); why != "" {
		t.Fatalf("notResumable = %q for a run that dedups", why)
	}
	tab, err := dedup.New(dedup.Config{Dir: t.TempDir(), Memory: dedup.MinMemory})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	cfg.Dedup.Table = tab
	if why := notResumable(&cfg); !strings.Contains(why, "given by the caller") {
		t.Fatalf("notResumable = %q for a run with the caller's table", why)
	}
}

// FuzzCheckpointRecord: any bytes as the checkpoint record are refused with a reason or
// accepted only when whole and matching; never a panic.
func FuzzCheckpointRecord(f *testing.F) {
	good := checkpoint{Version: checkpointVersion, Tool: "test", Recipe: "r1", Fields: [][2]int64{{1, 2}}, Samples: 3}
	good.Check = good.sum()
	b, _ := json.Marshal(&good)
	f.Add(b)
	f.Add([]byte(`{"version":1,"check":"x"}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, rec []byte) {
		dir := t.TempDir()
		out := filepath.Join(dir, "out.mldf")
		ck := &checkpointer{path: atomicfile.PartialName(out, CheckpointSuffix)}
		if err := os.WriteFile(ck.path, rec, 0o644); err != nil {
			t.Fatal(err)
		}
		c, why := ck.read(out, &Resume{Fingerprint: Fingerprint{Recipe: "r1", Version: "test"}})
		if c == nil && why == "" {
			t.Fatal("a record refused without a reason")
		}
	})
}
