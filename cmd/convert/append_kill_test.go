package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestKill9DuringAppendLeavesBase: convert append killed with SIGKILL at times from early on
// to past the end leaves BASE byte-identical to what it was, or (when it finished first)
// equal to the appended result; never anything in between.
func TestKill9DuringAppendLeavesBase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildConvert(t, dir)
	baseData, addData := filepath.Join(dir, "base-data"), filepath.Join(dir, "add-data")
	writeNoiseFolder(t, baseData, 40, 128)
	writeNoiseFolder(t, addData, 60, 96)
	base := filepath.Join(dir, "base.mldf")
	if b, err := exec.Command(bin, "images", baseData, base, "--mode", "png", "--workers", "1").CombinedOutput(); err != nil {
		t.Fatalf("base: %v\n%s", err, b)
	}
	orig, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	recipe := filepath.Join(dir, "add.yaml")
	text := fmt.Sprintf("source:\n  type: images\n  path: %q\nfields:\n  - name: image\n    type: image\n    mode: png\n  - name: label\n    type: int\noutput: %q\nworkers: 1\n", addData, base)
	if err := os.WriteFile(recipe, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	appendCmd := func() *exec.Cmd { return exec.Command(bin, "append", base, recipe) }
	start := time.Now()
	if b, err := appendCmd().CombinedOutput(); err != nil {
		t.Fatalf("full append: %v\n%s", err, b)
	}
	full := time.Since(start)
	appended, _ := os.ReadFile(base)
	if bytes.Equal(appended, orig) {
		t.Fatal("the append changed nothing")
	}
	killed := 0
	for i := range 12 {
		if err := os.WriteFile(base, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		after := full * time.Duration(i+1) / 11
		cmd := appendCmd()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(after)
		cmd.Process.Kill() // SIGKILL
		err := cmd.Wait()
		got, rerr := os.ReadFile(base)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err == nil {
			if !bytes.Equal(got, appended) {
				t.Fatalf("finished before the kill at %v, but BASE is not the appended file", after)
			}
			continue
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatal(err)
		}
		killed++
		if !bytes.Equal(got, orig) && !bytes.Equal(got, appended) {
			t.Fatalf("kill -9 after %v (of %v) left BASE neither as it was nor appended", after, full)
		}
	}
	t.Logf("killed %d of 12 appends", killed)
	if killed == 0 {
		t.Error("every append finished before its kill")
	}
	// The killed appends' working folders are removed by the next append.
	left, _ := filepath.Glob(filepath.Join(dir, ".base.mldf.append-*"))
	t.Logf("%d working folders left by the kills", len(left))
	if b, err := appendCmd().CombinedOutput(); err != nil {
		t.Fatalf("append after the kills: %v\n%s", err, b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".base.mldf.append-*")); len(left) != 0 {
		t.Errorf("the next append left the killed appends' working folders: %v", left)
	}
}
