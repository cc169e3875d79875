package pagewriter

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

func writeOutput(t *testing.T, target string, named bool, data string) *Output {
	t.Helper()
	o, err := createOutput(target, nil, named)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.WriteAt([]byte(data), 0); err != nil {
		t.Fatal(err)
	}
	return o
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range ents {
		n = append(n, e.Name())
	}
	return n
}

// Output never renames over a directory, a device, a pipe or a socket: neither at Create nor
// at Commit (when one appeared meanwhile). A symbolic link is replaced, its target untouched.
func TestOutputTargetKinds(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	for _, target := range []string{dir, fifo, "/dev/null"} {
		if _, err := CreateOutput(target, nil); !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s: got %v, want ErrNotRegular", target, err)
		}
	}
	for _, named := range []bool{false, true} {
		target := filepath.Join(dir, "later")
		o := writeOutput(t, target, named, "data")
		if err := os.Mkdir(target, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := o.Commit(); !errors.Is(err, ErrNotRegular) {
			t.Fatalf("named %v: commit over a directory that appeared: %v", named, err)
		}
		if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
			t.Fatalf("the directory was replaced: %v", err)
		}
		os.Remove(target)
	}
	// A symbolic link to a file: the link is replaced, the file it pointed to is untouched.
	keep := filepath.Join(dir, "keep")
	os.WriteFile(keep, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(keep, link)
	if err := writeOutput(t, link, false, "new").Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(keep); string(b) != "keep" {
		t.Fatalf("link target overwritten: %q", b)
	}
	if b, _ := os.ReadFile(link); string(b) != "new" {
		t.Fatalf("output %q", b)
	}
}

// The temporary files a killed run leaves (".BASE.tmp-*") are removed by the next output to
// the same target; other files, and the temporary file of a run still going, are not.
func TestOutputRemovesLeftovers(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.mldf")
	leftovers := []string{".out.mldf.tmp-1234567890", ".out.mldf.tmp-0a1b2c3d4e5f"}
	others := []string{".out.mldf.tmp-notours", ".out.mldf.tmp-", ".other.mldf.tmp-123", "out.mldf.tmp-123", ".out.mldf.report.json.tmp-123"}
	for _, n := range append(slices.Clone(leftovers), others...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A run in progress to the same target, with a named temporary file.
	running := writeOutput(t, target, true, "running")
	o := writeOutput(t, target, false, "next")
	got := names(t, dir)
	for _, n := range leftovers {
		if slices.Contains(got, n) {
			t.Errorf("leftover %s not removed", n)
		}
	}
	for _, n := range others {
		if !slices.Contains(got, n) {
			t.Errorf("%s removed", n)
		}
	}
	if runtime.GOOS == "linux" {
		if _, err := os.Stat(running.TempPath()); err != nil {
			t.Errorf("the running output's temporary file was removed: %v", err)
		}
		if err := running.Commit(); err != nil {
			t.Fatal(err)
		}
	} else {
		running.Abort()
	}
	if err := o.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "next" {
		t.Fatalf("output %q", b)
	}
	if got := names(t, dir); len(got) != 1+len(others) {
		t.Fatalf("files left: %v", got)
	}
}
