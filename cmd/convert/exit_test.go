package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/recipe"
)

func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		err         error
		interrupted bool
		want        int
	}{
		{nil, false, 0},
		{errors.New("disk full"), false, 1},
		{fmt.Errorf("%w: convert run RECIPE", errUsage), false, 2},
		{fmt.Errorf("shard 3: %w", &rejectedError{n: 5, rejects: "o.rejects.jsonl"}), false, 3},
		{context.Canceled, true, 130},
		{&rejectedError{n: 5}, true, 130},
	} {
		if got := exitCode(c.err, c.interrupted); got != c.want {
			t.Errorf("exitCode(%v, %v) = %d, want %d", c.err, c.interrupted, got, c.want)
		}
	}
	// A flag mistake is a usage error.
	if _, _, err := run(t, "run", "x.yaml", "--no-such-flag"); exitCode(err, false) != exitUsage {
		t.Errorf("unknown flag: %v, exit %d", err, exitCode(err, false))
	}
}

// Rejected samples: exit status 3 with the count last, unless max_errors accepts them; an
// explicit max_errors of 0 (or 0%) accepts none, so the first reject fails the run (exit 1,
// nothing at the output).
func TestRejectsAndMaxErrors(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	writeNoiseFolder(t, data, 4, 8)
	for i := range 2 {
		os.WriteFile(filepath.Join(data, "class1", fmt.Sprintf("bad%d.png", i)), []byte("not a png"), 0o644)
	}
	out := filepath.Join(dir, "o.mldf")
	for _, c := range []struct {
		maxErrors string
		want      int
	}{{"", exitRejected}, {"2", exitOK}, {"50%", exitOK}, {"1", exitError}, {"0", exitError}, {"0%", exitError}} {
		os.Remove(out)
		args := []string{"images", data, out, "--mode", "png"}
		if c.maxErrors != "" {
			args = append(args, "--max-errors", c.maxErrors)
		}
		stdout, _, err := run(t, args...)
		if got := exitCode(err, false); got != c.want {
			t.Errorf("max_errors %q: exit %d (%v), want %d", c.maxErrors, got, err, c.want)
			continue
		}
		_, statErr := os.Stat(out)
		if (c.want == exitError) != (statErr != nil) {
			t.Errorf("max_errors %q: output %v", c.maxErrors, statErr)
		}
		if c.want != exitError {
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "2 samples rejected, 0 filtered: listed in "+out+".rejects.jsonl") {
				t.Errorf("max_errors %q: last line %q", c.maxErrors, last)
			}
		}
		if c.want == exitRejected && !strings.Contains(err.Error(), "2 samples rejected") {
			t.Errorf("message %q", err)
		}
	}
}

// chunk_size: 1e12 passed validation and then ran out of memory: validate
// now names the key and its line.
func TestValidateRefusesHugeChunkSize(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "r.yaml")
	os.WriteFile(cfg, []byte("source: {type: images, path: "+dir+"}\nfields: [{name: image, type: image}]\noutput: "+
		filepath.Join(dir, "o.mldf")+"\nchunk_size: 1e12\npage_size: 1e12\nworkers: 100000\n"), 0o644)
	_, _, err := run(t, "validate", cfg)
	if !errors.Is(err, recipe.ErrRecipe) {
		t.Fatalf("got %v", err)
	}
	// Values that do not parse are reported with the ranges of the others, at once; an
	// integer key refuses 1e12 (a float) rather than converting it.
	for _, want := range []string{`line 4: chunk_size: "1e12" is not an integer`, `line 5: page_size: "1e12" is not a size`, "line 6: workers 100000 is out of range"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
	os.WriteFile(cfg, []byte("source: {type: images, path: "+dir+"}\nfields: [{name: image, type: image}]\noutput: "+
		filepath.Join(dir, "o.mldf")+"\nchunk_size: 1000000000000\nworkers: 100000\n"), 0o644)
	_, _, err = run(t, "validate", cfg)
	for _, want := range []string{"line 4: chunk_size 1000000000000 is out of range", "line 5: workers 100000 is out of range"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}
