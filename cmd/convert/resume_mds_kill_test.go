//go:build !race

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An MDS output killed with SIGKILL at random moments (in the conversion or the export) and
// started again each time ends with the shards and index.json of an uninterrupted run, and
// nothing else is left beside it. Builds the binary: left out of the race pass and -short.
func TestResumeMDSKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildConvert(t, dir)
	jsonl := filepath.Join(dir, "lines.jsonl")
	writeResumeJSONL(t, jsonl, 400_000)
	recipe := filepath.Join(dir, "lines.yaml")
	text := fmt.Sprintf("source:\n  type: jsonl\n  inputs: [%q]\nfields:\n  - {name: n, type: int}\n  - {name: t, type: text}\nformat: mds\noutput: out.mds\n", jsonl)
	if err := os.WriteFile(recipe, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "ref", "ref.mds")
	start := time.Now()
	if b, err := exec.Command(bin, "run", recipe, "--output", ref, "--checkpoint-every", "0").CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, b)
	}
	full := time.Since(start)
	want := treeFiles(t, ref)
	out := filepath.Join(dir, "out", "out.mds")
	os.Mkdir(filepath.Dir(out), 0o755)
	rnd := rand.New(rand.NewPCG(30, 2))
	args := []string{"run", recipe, "--output", out, "--checkpoint-every", "50ms"}
	logs, kills := killRuns(t, bin, args, 8, 50, func(k int, _ time.Time) {
		// Every other kill in the first third of the run, in the conversion (the export of
		// short lines takes most of the run).
		span := full
		if k%2 == 0 {
			span = full / 3
		}
		time.Sleep(150*time.Millisecond + time.Duration(rnd.Int64N(int64(span))))
	})
	sameTree(t, out, want, kills, logs)
	onlyFiles(t, filepath.Dir(out), "out.mds", "out.mds.report.json")
	conv, exp := strings.Count(logs, "resumed at sample"), strings.Count(logs, "resumed the export")
	t.Logf("uninterrupted %v; %d kills; %d resumes of the conversion, %d of the export", full.Round(time.Millisecond), kills, conv, exp)
	if kills >= 3 && conv+exp == 0 {
		t.Errorf("%d kills and not one resume:\n%s", kills, logs)
	}
}
