//go:build !race

package main

import (
	"bytes"
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
	want := dirBytes(t, ref)
	out := filepath.Join(dir, "out", "out.mds")
	os.Mkdir(filepath.Dir(out), 0o755)
	rnd := rand.New(rand.NewPCG(30, 2))
	var logs strings.Builder
	kills := 0
	for i := 0; ; i++ {
		if i > 50 {
			t.Fatalf("%d attempts and the run has not finished:\n%s", i, logs.String())
		}
		cmd := exec.Command(bin, "run", recipe, "--output", out, "--checkpoint-every", "50ms")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killing := kills < 8
		if killing {
			// Every other kill in the first third of the run, in the conversion (the export of
			// short lines takes most of the run).
			span := full
			if kills%2 == 0 {
				span = full / 3
			}
			time.Sleep(150*time.Millisecond + time.Duration(rnd.Int64N(int64(span))))
			cmd.Process.Kill()
		}
		err := cmd.Wait()
		fmt.Fprintf(&logs, "attempt %d (killed %v, %v):\n%s", i, killing, err, stderr.String())
		if err == nil {
			break
		}
		if !killing {
			t.Fatalf("the last run failed: %v\n%s", err, logs.String())
		}
		kills++
	}
	if got := dirBytes(t, out); len(got) != len(want) {
		t.Fatalf("after %d kills the dataset has %d files, an uninterrupted run's %d\n%s", kills, len(got), len(want), logs.String())
	} else {
		for name, b := range want {
			if !bytes.Equal(got[name], b) {
				t.Fatalf("after %d kills %s differs from an uninterrupted run's\n%s", kills, name, logs.String())
			}
		}
	}
	left, _ := os.ReadDir(filepath.Dir(out))
	for _, e := range left {
		if e.Name() != "out.mds" && e.Name() != "out.mds.report.json" {
			t.Errorf("left beside the output: %s", e.Name())
		}
	}
	conv, exp := strings.Count(logs.String(), "resumed at sample"), strings.Count(logs.String(), "resumed the export")
	t.Logf("uninterrupted %v; %d kills; %d resumes of the conversion, %d of the export", full.Round(time.Millisecond), kills, conv, exp)
	if kills >= 3 && conv+exp == 0 {
		t.Errorf("%d kills and not one resume:\n%s", kills, logs.String())
	}
}

// dirBytes returns the files of dir by name.
func dirBytes(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = b
	}
	return m
}
