package pipeline

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/internal/dedup"
	"github.com/mldf/convert/sources"
)

// dedupResumeConfig is a resumable run that drops duplicates (dupSamples: about 1 in 7 a
// copy of an earlier sample, some rejected, some empty) with a table of the smallest cap,
// so that its runs flush and merge between checkpoints.
func dedupResumeConfig(out string, n int, delay time.Duration, seek bool, log *lockedBuf) (Config, *int64) {
	src := newSource(dupSamples(n))
	src.delay = delay
	resumed := new(int64)
	*resumed = -1
	cfg := Config{Source: src, Fields: testFields(), Output: out, PageSize: 4096, Workers: 2, ChunkSize: 64,
		Checksums: true, RejectsPath: out + ".rejects.jsonl", Dedup: &Dedup{Fields: []string{"data"}, Memory: dedup.MinMemory}}
	if seek {
		cfg.Source = seekSource{src, resumed}
	}
	if log != nil {
		cfg.Resume = &Resume{Fingerprint: Fingerprint{Recipe: "r1", Version: "test", Inputs: sources.Inputs(testInputs)},
			Every: 5 * time.Millisecond, Log: log}
	}
	return cfg, resumed
}

func dedupResumeSize() int {
	if dedupRace {
		return 6000
	}
	return 20000
}

// recorded returns the checkpoint record of out.
func recorded(t *testing.T, out string) checkpoint {
	t.Helper()
	b, err := os.ReadFile(atomicfile.PartialName(out, CheckpointSuffix))
	if err != nil {
		t.Fatal(err)
	}
	var c checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestResumeDedup interrupts a run that drops duplicates at several checkpoints and resumes
// it each time: the output, the rejects file (every duplicate with the sample it duplicates)
// and the report's counts equal an uninterrupted run's, and no table file stays behind.
func TestResumeDedup(t *testing.T) {
	n := dedupResumeSize()
	ref := filepath.Join(t.TempDir(), "ref.mldf")
	cfg, _ := dedupResumeConfig(ref, n, 0, false, nil)
	wantRep := mustRun(t, cfg)
	want, _ := os.ReadFile(ref)
	wantRejects, _ := os.ReadFile(ref + ".rejects.jsonl")
	if wantRep.Duplicates < int64(n/10) {
		t.Fatalf("the reference run has %d duplicates of %d samples", wantRep.Duplicates, n)
	}
	for _, seek := range []bool{true, false} {
		name := "re-reading"
		if seek {
			name = "by index"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.mldf")
			var runs, withDups int
			for k := int64(2); k <= 8; k += 3 {
				var log lockedBuf
				cfg, _ := dedupResumeConfig(out, n, 200*time.Microsecond, seek, &log)
				interrupt(t, cfg, k)
				c := recorded(t, out)
				if c.Dedup == nil || len(c.Dedup.Runs) == 0 {
					t.Fatalf("checkpoint %d records no dedup runs: %+v", c.Number, c.Dedup)
				}
				runs = max(runs, len(c.Dedup.Runs))
				if k > 2 && !strings.Contains(log.String(), "resumed at sample") {
					t.Fatalf("run %d did not resume:\n%s", k, log.String())
				}
				if c.Duplicates > 0 {
					withDups++
				}
			}
			var log lockedBuf
			cfg, resumed := dedupResumeConfig(out, n, 0, seek, &log)
			rep := mustRun(t, cfg)
			if !strings.Contains(log.String(), "resumed at sample") || seek && *resumed <= 0 {
				t.Fatalf("the last run did not resume:\n%s", log.String())
			}
			if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
				t.Errorf("the output differs from an uninterrupted run's (%d and %d bytes)", len(got), len(want))
			}
			if got, _ := os.ReadFile(out + ".rejects.jsonl"); !bytes.Equal(got, wantRejects) {
				t.Errorf("the rejects differ from an uninterrupted run's (%d and %d bytes)", len(got), len(wantRejects))
			}
			if rep.Duplicates != wantRep.Duplicates || rep.Samples != wantRep.Samples || rep.Rejected != wantRep.Rejected {
				t.Errorf("report: %d duplicates, %d samples, %d rejected; want %d, %d, %d",
					rep.Duplicates, rep.Samples, rep.Rejected, wantRep.Duplicates, wantRep.Samples, wantRep.Rejected)
			}
			noTemps(t, dir, "out.mldf", "out.mldf.rejects.jsonl")
			t.Logf("up to %d runs in a checkpoint, %d checkpoints with duplicates", runs, withDups)
		})
	}
}

// TestResumeDedupDamaged: a dedup table file of the checkpoint that is missing or damaged,
// or a record without the table, makes the run start over with a message naming what is
// wrong, and it writes the same bytes.
func TestResumeDedupDamaged(t *testing.T) {
	n := dedupResumeSize() / 2
	ref := filepath.Join(t.TempDir(), "ref.mldf")
	cfg, _ := dedupResumeConfig(ref, n, 0, false, nil)
	wantRep := mustRun(t, cfg)
	want, _ := os.ReadFile(ref)
	wantRejects, _ := os.ReadFile(ref + ".rejects.jsonl")
	run0 := func(dir string, c checkpoint) string { return filepath.Join(dir, c.Dedup.Runs[0].Name) }
	for _, tc := range []struct {
		name    string
		harm    func(t *testing.T, dir string, c checkpoint)
		message string // "RUN": the first run file's name
	}{
		{"run file removed", func(t *testing.T, dir string, c checkpoint) { os.Remove(run0(dir, c)) }, "RUN"},
		{"run file cut", func(t *testing.T, dir string, c checkpoint) { os.Truncate(run0(dir, c), 32) }, "RUN"},
		{"run file changed", func(t *testing.T, dir string, c checkpoint) {
			b, _ := os.ReadFile(run0(dir, c))
			b[len(b)/2] ^= 1
			os.WriteFile(run0(dir, c), b, 0o600)
		}, "RUN"},
		{"origins file removed", func(t *testing.T, dir string, c checkpoint) {
			os.Remove(filepath.Join(dir, c.Dedup.Origins.Name))
		}, ".out.mldf.partial-dedup-origins"},
		{"prefixes file cut", func(t *testing.T, dir string, c checkpoint) {
			os.Truncate(filepath.Join(dir, c.Dedup.Prefixes.Name), 1)
		}, ".out.mldf.partial-dedup-prefixes"},
		{"record without the table", func(t *testing.T, dir string, c checkpoint) {
			c.Dedup = nil
			c.Check = c.sum()
			b, _ := json.Marshal(&c)
			os.WriteFile(atomicfile.PartialName(filepath.Join(dir, "out.mldf"), CheckpointSuffix), b, 0o644)
		}, "the checkpoint holds no dedup table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.mldf")
			var log1 lockedBuf
			cfg, _ := dedupResumeConfig(out, n, 300*time.Microsecond, true, &log1)
			interrupt(t, cfg, 2)
			c := recorded(t, out)
			if c.Dedup == nil || len(c.Dedup.Runs) == 0 {
				t.Fatalf("the checkpoint records no dedup runs: %+v", c.Dedup)
			}
			msg := tc.message
			if msg == "RUN" {
				msg = c.Dedup.Runs[0].Name
			}
			tc.harm(t, dir, c)
			var log2 lockedBuf
			cfg, _ = dedupResumeConfig(out, n, 0, true, &log2)
			rep := mustRun(t, cfg)
			lines := log2.String()
			if !strings.Contains(lines, "starting over") || !strings.Contains(lines, msg) || strings.Contains(lines, "resumed at") {
				t.Errorf("the run's lines lack %q:\n%s", msg, lines)
			}
			if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
				t.Errorf("the output differs from an uninterrupted run's")
			}
			if got, _ := os.ReadFile(out + ".rejects.jsonl"); !bytes.Equal(got, wantRejects) || rep.Duplicates != wantRep.Duplicates {
				t.Errorf("the rejects or the count (%d, want %d) differ from an uninterrupted run's", rep.Duplicates, wantRep.Duplicates)
			}
			noTemps(t, dir, "out.mldf", "out.mldf.rejects.jsonl")
		})
	}
}
