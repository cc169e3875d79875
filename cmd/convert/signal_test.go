package main

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// builtConvert is the binary buildConvert built: one link for all the tests of a run (each
// test linking its own took most of their time outside -race). TestMain removes its folder.
var builtConvert struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// buildConvert builds the command (once per test process) and returns its path. dir is not
// used: the binary lives in a folder of its own (mode 0755), which TestMain removes.
func buildConvert(t *testing.T, dir string) string {
	t.Helper()
	if raceEnabled {
		t.Skip("runs a binary built without -race: run without -race (race_test.go)")
	}
	b := &builtConvert
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "convert-test-bin-"); b.err != nil {
			return
		}
		// Others may run it: TestUnreadableFileIsRejected runs it as nobody.
		if b.err = os.Chmod(b.dir, 0o755); b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "convert")
		cmd := exec.Command("go", "build", "-o", b.bin, ".")
		cmd.Dir = filepath.Join(root, "cmd", "convert")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// writeNoiseFolder writes an ImageFolder of n copies of one noisy PNG (slow to re-encode) in
// 2 classes.
func writeNoiseFolder(t *testing.T, root string, n, size int) {
	t.Helper()
	seed := uint32(1)
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	for p := 0; p < len(img.Pix); p += 4 {
		seed = seed*1664525 + 1013904223
		img.Pix[p], img.Pix[p+1], img.Pix[p+2], img.Pix[p+3] = uint8(seed>>24), uint8(seed>>16), uint8(seed>>8), 255
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("class%d", i%2))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%04d.png", i)), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// SIGINT and SIGTERM stop a run promptly: the process exits non-zero, nothing is at the output
// path, its report or rejects path, and no temporary file is left beside it. An older file at
// the output path is untouched.
func TestSignalsStopAndCleanUp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildConvert(t, dir)
	data := filepath.Join(dir, "data")
	writeNoiseFolder(t, data, 400, 256)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			outDir := t.TempDir()
			out := filepath.Join(outDir, "x.mldf")
			old := []byte("an older file that must survive")
			if sig == syscall.SIGTERM {
				if err := os.WriteFile(out, old, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(bin, "images", data, out, "--mode", "png", "--workers", "1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(700 * time.Millisecond) // well into the run (400 PNG re-encodes take seconds)
			sent := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second): // a deadlock guard, not a timing assertion
				_ = cmd.Process.Kill()
				t.Fatalf("still running 30s after %v", sig)
			}
			t.Logf("%v: exited %v after the signal (%v)", sig, time.Since(sent).Round(time.Millisecond), err)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("want a non-zero exit, got %v\n%s", err, stderr.String())
			}
			entries, _ := os.ReadDir(outDir)
			for _, e := range entries {
				switch e.Name() {
				case "x.mldf":
					got, _ := os.ReadFile(out)
					if sig != syscall.SIGTERM || !bytes.Equal(got, old) {
						t.Fatalf("output path holds %d bytes after an interrupted run", len(got))
					}
				default:
					t.Errorf("left behind: %s", e.Name())
				}
			}
		})
	}
}

// kill -9 at any moment of a run, from start-up to the report, leaves nothing partial at the
// output's paths (the data file, the rejects log, the report): each is written to a temporary
// file (unnamed on Linux) and renamed at the end, in that order, so a kill leaves nothing new
// or a complete output (verified) with or without its side files. A temporary file a kill leaves (in the
// instant between naming and renaming, or planted here as from an earlier kill) is removed by
// the next run to the same output.
func TestKill9LeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildConvert(t, dir)
	data := filepath.Join(dir, "data")
	writeNoiseFolder(t, data, 120, 96)
	for i := range 3 { // rejected samples, so there is a rejects log to write
		if err := os.WriteFile(filepath.Join(data, "class0", fmt.Sprintf("bad%d.png", i)), []byte("not a png"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outDir := filepath.Join(dir, "out")
	os.Mkdir(outDir, 0o755)
	out := filepath.Join(outDir, "x.mldf")
	paths := []string{out, out + ".rejects.jsonl", out + ".report.json"}
	convert := func() *exec.Cmd {
		return exec.Command(bin, "images", data, out, "--mode", "png", "--workers", "1")
	}
	// One full run gives the span to kill in (not asserted on).
	start := time.Now()
	err := convert().Run()
	full := time.Since(start)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitRejected {
		t.Fatalf("full run: %v, want exit status %d", err, exitRejected)
	}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("full run: %v", err)
		}
		os.Remove(p)
	}
	killed := 0
	for i := range 12 {
		after := full * time.Duration(i+1) / 11 // from early on to past the end
		cmd := convert()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(after)
		cmd.Process.Kill() // SIGKILL
		err := cmd.Wait()
		if errors.As(err, &exit) && exit.ExitCode() == exitRejected {
			for _, p := range paths { // finished before the kill: all three complete
				if _, err := os.Stat(p); err != nil {
					t.Fatalf("finished before the kill at %v: %v", after, err)
				}
				os.Remove(p)
			}
			continue
		}
		killed++
		// The three files are published one after the other, each atomically: the output
		// (complete, verified), then its rejects, then the report. A kill in the instants
		// between those renames leaves a prefix of that order, never a partial file.
		var present []bool
		for _, p := range paths {
			_, err := os.Stat(p)
			present = append(present, err == nil)
		}
		ents, _ := os.ReadDir(outDir)
		for _, e := range ents {
			name := e.Name()
			if strings.HasPrefix(name, ".") && (strings.Contains(name, ".tmp-") || strings.Contains(name, ".partial") || strings.HasSuffix(name, ".checkpoint")) {
				continue // a temporary file, or the state a resumed run continues from (hidden)
			}
			i := slices.Index(paths, filepath.Join(outDir, name))
			if i < 0 || (i > 0 && !present[i-1]) {
				t.Fatalf("kill -9 after %v (of %v) left %s (present: %v)", after, full, name, present)
			}
		}
		if present[0] {
			if b, err := exec.Command(bin, "verify", out).CombinedOutput(); err != nil {
				t.Fatalf("kill -9 after %v left an output that does not verify: %v\n%s", after, err, b)
			}
			t.Logf("kill -9 after %v: landed between the publications (present: %v)", after, present)
			for _, p := range paths {
				os.Remove(p)
			}
		}
	}
	t.Logf("killed %d of 12 runs", killed)
	if killed == 0 {
		t.Error("every run finished before its kill")
	}
	for _, n := range []string{".x.mldf.tmp-0123456789ab", ".x.mldf.rejects.jsonl.tmp-42", ".x.mldf.report.json.tmp-1234"} {
		os.WriteFile(filepath.Join(outDir, n), []byte("left by a kill"), 0o644)
	}
	if err := convert().Run(); !errors.As(err, &exit) || exit.ExitCode() != exitRejected {
		t.Fatalf("rerun: %v", err)
	}
	ents, _ := os.ReadDir(outDir)
	if len(ents) != len(paths) {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("after the rerun: %v, want the output, its rejects and its report", names)
	}
}
