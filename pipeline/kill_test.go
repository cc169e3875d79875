package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

const killChildEnv = "PIPELINE_KILL_CHILD_OUTPUT"

func killSamplesConfig(out string, delay time.Duration) Config {
	src := newSource(mixedSamples(600, 4096, true))
	src.delay = delay
	return Config{Source: src, Fields: testFields(), Output: out, PageSize: 4096, Workers: 2, ChunkSize: 8, Checksums: true,
		RejectsPath: out + ".rejects.jsonl"}
}

// killChild is the re-executed test binary: it converts slowly to the path in the
// environment, then exits.
func killChild() {
	out := os.Getenv(killChildEnv)
	fmt.Fprintln(os.Stderr, "child started")
	if _, err := Run(context.Background(), killSamplesConfig(out, time.Millisecond)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestKill9 kills a converting child process at several moments: there is never a file at
// the output path or the rejects path (the run rejects samples), and a rerun gives the bytes
// of an uninterrupted run and removes any temporary file the kills left.
func TestKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	ref := filepath.Join(t.TempDir(), "ref.mldf")
	mustRun(t, killSamplesConfig(ref, 0))
	want, _ := os.ReadFile(ref)
	wantRejects, _ := os.ReadFile(ref + ".rejects.jsonl")
	if len(wantRejects) == 0 {
		t.Fatal("the kill test's samples have no rejects")
	}

	dir := t.TempDir()
	out := filepath.Join(dir, "out.mldf")
	killed := 0
	for _, after := range []time.Duration{20 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond, 400 * time.Millisecond, 600 * time.Millisecond} {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), killChildEnv+"="+out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(after)
		cmd.Process.Kill() // SIGKILL
		err := cmd.Wait()
		if err == nil {
			// The child finished before the kill; the file must then be complete.
			got, _ := os.ReadFile(out)
			if !bytes.Equal(got, want) {
				t.Fatalf("child finished before the kill at %v with different bytes", after)
			}
			os.Remove(out)
			os.Remove(out + ".rejects.jsonl")
			continue
		}
		if !strings.Contains(err.Error(), "killed") {
			t.Fatalf("child: %v: %s", err, stderr.String())
		}
		killed++
		for _, p := range []string{out, out + ".rejects.jsonl"} {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("killed after %v: something at %s (%v)", after, p, err)
			}
		}
	}
	t.Logf("killed the child %d times", killed)
	if killed == 0 {
		t.Error("the child always finished before it was killed")
	}
	// On Linux the temporary files have no name until the commit, so kills leave nothing
	// (except in the instant between naming and renaming one); elsewhere a leftover is a
	// ".out.mldf.tmp-*" or ".out.mldf.rejects.jsonl.tmp-*" file, never the output. A leftover
	// as a kill in that instant leaves it, and one from a kill elsewhere, for the rerun.
	for _, n := range []string{".out.mldf.tmp-0123456789ab", ".out.mldf.rejects.jsonl.tmp-42"} {
		os.WriteFile(filepath.Join(dir, n), []byte("left by a kill"), 0o644)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".out.mldf.tmp-") && !strings.HasPrefix(e.Name(), ".out.mldf.rejects.jsonl.tmp-") {
			t.Errorf("left behind after kills: %s", e.Name())
		}
	}
	t.Logf("%d temporary files left on %s (2 planted)", len(ents), runtime.GOOS)
	mustRun(t, killSamplesConfig(out, 0))
	got, _ := os.ReadFile(out)
	if !bytes.Equal(got, want) {
		t.Fatal("rerun after kills differs from an uninterrupted run")
	}
	if got, _ := os.ReadFile(out + ".rejects.jsonl"); !bytes.Equal(got, wantRejects) {
		t.Fatal("rerun's rejects differ from an uninterrupted run's")
	}
	ents, _ = os.ReadDir(dir)
	if len(ents) != 2 {
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		t.Fatalf("after the rerun the folder holds %v, want the output and its rejects", n)
	}
}
