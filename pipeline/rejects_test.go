package pipeline

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mldf/convert/internal/s3test"
	"github.com/mldf/convert/objstore"
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
		if !errors.Is(err, objstore.ErrBadURL) || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), "rejects file") {
			t.Fatalf("rejects %s: got %v", p, err)
		}
		if _, err := os.Stat(c.Output); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("output written: %v", err)
		}
	}
}

// The rejects file goes through the storage seam: a plain path, a file:// URL and a bucket
// object behave alike (published with its lines, removed by a run that rejects nothing).
func TestRejectsEveryStore(t *testing.T) {
	dir := t.TempDir()
	srv := s3test.Start(t)
	srv.MakeBucket(t, "bkt")
	s3test.Env(t, srv.Endpoint, s3test.SecretKey)
	store := objstore.New(objstore.WithRetry(3, time.Millisecond, 10*time.Millisecond))
	defer store.Close()
	ctx := context.Background()
	for _, rej := range []string{filepath.Join(dir, "a.rejects.jsonl"), "file://" + filepath.Join(dir, "b.rejects.jsonl"), "s3://bkt/c.rejects.jsonl"} {
		t.Run(rej, func(t *testing.T) {
			run := func(bad bool) Report {
				t.Helper()
				c := Config{Source: newSource(mixedSamples(100, 4096, bad)), Fields: testFields(),
					Output: filepath.Join(dir, "o.mldf"), PageSize: 4096, Workers: 2, ChunkSize: 8,
					RejectsPath: rej, Store: store}
				return mustRun(t, c)
			}
			rep := run(true)
			r, err := store.Open(ctx, rej)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			if n := bytes.Count(b, []byte("\n")); rep.Rejected == 0 || int64(n) != rep.Rejected {
				t.Fatalf("%d lines for %d rejected", n, rep.Rejected)
			}
			run(false)
			if _, err := store.Stat(ctx, rej); !errors.Is(err, objstore.ErrNotFound) {
				t.Fatalf("rejects file after a clean run: %v", err)
			}
		})
	}
}
