package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/pagewriter"
)

// The rejects file's life: published when the run ends if it holds a line (also when the run
// fails: it says why), absent when nothing was rejected (an older one at the path removed),
// and never left empty or half-written.
func TestRejectsFileLifecycle(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.mldf")
	rej := out + ".rejects.jsonl"
	cfg := func(bad bool) Config {
		return Config{Source: newSource(mixedSamples(200, 4096, bad)), Fields: testFields(), Output: out,
			PageSize: 4096, Workers: 2, ChunkSize: 8, RejectsPath: rej}
	}

	// Rejects: the file holds one line per rejected sample.
	rep := mustRun(t, cfg(true))
	if rep.Rejected == 0 {
		t.Fatal("no rejects")
	}
	checkRejects(t, rej, int(rep.Rejected))

	// A clean run to the same output: no rejects file (the earlier run's is removed).
	if rep := mustRun(t, cfg(false)); rep.Rejected != 0 {
		t.Fatalf("%d rejected", rep.Rejected)
	}
	if _, err := os.Stat(rej); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("rejects file after a run that rejected nothing: %v", err)
	}

	// A run failing on too many rejects publishes the rejects up to the failure.
	c := cfg(true)
	c.MaxErrors = 3
	if _, err := Run(context.Background(), c); !errors.Is(err, ErrTooManyErrors) {
		t.Fatalf("got %v", err)
	}
	checkRejects(t, rej, 4)

	// A failed run leaves nothing else behind.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "out.mldf" && e.Name() != "out.mldf.rejects.jsonl" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// A rejects path that is a directory, a device or a pipe is refused before the run, and
// nothing is written.
func TestRejectsPathNotRegular(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{dir, "/dev/null"} {
		c := Config{Source: newSource(mixedSamples(20, 4096, true)), Fields: testFields(),
			Output: filepath.Join(dir, "o.mldf"), RejectsPath: p}
		_, err := Run(context.Background(), c)
		if !errors.Is(err, pagewriter.ErrNotRegular) || !strings.Contains(err.Error(), "rejects file") {
			t.Fatalf("rejects %s: got %v", p, err)
		}
		if _, err := os.Stat(c.Output); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("output written: %v", err)
		}
	}
}
