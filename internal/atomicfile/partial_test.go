package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestPartial: a partial file survives Keep under its name, is reopened as it was (or empty
// when fresh), is locked while open, and Commit renames it onto the target.
func TestPartial(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.bin")
	tmp := PartialName(target, ".partial")
	if tmp != filepath.Join(dir, ".out.bin.partial") {
		t.Fatalf("PartialName = %s", tmp)
	}
	f, err := OpenPartial(target, tmp, 0o644, true)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("first")
	if runtime.GOOS == "linux" {
		if !Busy(tmp) {
			t.Error("an open partial file is not busy")
		}
		if _, err := OpenPartial(target, tmp, 0o644, false); !errors.Is(err, ErrBusy) {
			t.Errorf("a second open: %v, want ErrBusy", err)
		}
	}
	if err := f.Keep(f.File.Close); err != nil {
		t.Fatal(err)
	}
	RemoveLeftovers(dir, "out.bin") // not a leftover: kept for a resume
	if Busy(tmp) {
		t.Error("a closed partial file is busy")
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("Keep published the file")
	}
	f, err = OpenPartial(target, tmp, 0o644, false)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(tmp); string(b) != "first" {
		t.Fatalf("reopened: %q", b)
	}
	f.WriteAt([]byte(" and more"), 5)
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "first and more" {
		t.Fatalf("committed: %q", b)
	}
	if _, err := os.Stat(tmp); err == nil {
		t.Fatal("the partial file is still there after the commit")
	}
	f, err = OpenPartial(target, tmp, 0o644, true)
	if err != nil {
		t.Fatal(err)
	}
	f.Abort()
	if _, err := os.Stat(tmp); err == nil {
		t.Fatal("Abort left the partial file")
	}
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	if _, err := OpenPartial(filepath.Join(dir, "d"), tmp, 0o644, true); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a directory as the target: %v", err)
	}
}
