package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mldf/convert/format/mldf"
)

// An unreadable image (permissions) is a rejected sample named in the rejects file; the run
// goes on. Root reads everything, so as root the command runs as nobody (uid 65534).
func TestUnreadableFileIsRejected(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} { // nobody must reach the files
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := buildConvert(t, dir)
	data := filepath.Join(dir, "data")
	writeNoiseFolder(t, data, 6, 8)
	secret := filepath.Join(data, "class1", "0003.png")
	if err := os.Chmod(secret, 0o000); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "out")
	if err := os.Mkdir(outDir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(outDir, 0o777); err != nil { // umask
		t.Fatal(err)
	}
	out := filepath.Join(outDir, "x.mldf")
	cmd := exec.Command(bin, "images", data, out, "--mode", "png")
	var sys *syscall.SysProcAttr
	if os.Geteuid() == 0 {
		sys = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	cmd.SysProcAttr = sys
	// A completed run with a rejected sample and no max_errors exits 3, the count last.
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitRejected {
		t.Fatalf("run: %v, want exit status %d\n%s", err, exitRejected, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "convert: 1 sample rejected") {
		t.Fatalf("last line %q, want the rejected count", last)
	}
	r, err := mldf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.NumSamples() != 5 {
		t.Fatalf("%d samples, want 5 (6 images, 1 unreadable)", r.NumSamples())
	}
	rej, err := os.ReadFile(out + ".rejects.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var line struct{ Origin, Reason, Error string }
	if err := json.Unmarshal(rej, &line); err != nil {
		t.Fatalf("rejects file %q: %v", rej, err)
	}
	if line.Origin != secret || line.Reason != "unreadable" || !strings.Contains(line.Error, "permission denied") {
		t.Fatalf("reject %+v", line)
	}
	// max_errors set: the rejects are accepted, exit status 0.
	cmd = exec.Command(bin, "images", data, out, "--mode", "png", "--max-errors", "1")
	cmd.SysProcAttr = sys
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run --max-errors 1: %v\n%s", err, msg)
	}
}
