package atomicfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/pagewriter"
)

// entries returns the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "r.json")
	for _, content := range []string{"first", "second, longer"} {
		if err := atomicfile.WriteFile(target, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(target)
		if err != nil || string(b) != content {
			t.Fatalf("read %q, %v", b, err)
		}
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	if es := entries(t, dir); len(es) != 1 {
		t.Errorf("left in the directory: %q", es)
	}
}

// A failing fill, an abort, a refused target and a failing rename leave the target as it was
// and no temporary file.
func TestFailuresLeaveTargetAlone(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "r.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := atomicfile.Write(target, 0o644, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write: %v", err)
	}
	f, err := atomicfile.Create(target, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("never published")
	if err := f.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); !errors.Is(err, atomicfile.ErrDone) {
		t.Fatalf("Commit after Abort: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Fatalf("target now %q", b)
	}
	if es := entries(t, dir); len(es) != 1 {
		t.Errorf("left in the directory: %q", es)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := atomicfile.Create(sub, 0o644); !errors.Is(err, atomicfile.ErrNotRegular) {
		t.Fatalf("a directory as target: %v", err)
	}
	// The target's directory disappears before the commit: the rename fails, reported.
	gone := filepath.Join(dir, "gone")
	os.Mkdir(gone, 0o755)
	f, err = atomicfile.Create(filepath.Join(gone, "x"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(f.Name())
	os.Remove(gone)
	if err := f.Commit(); err == nil {
		t.Fatal("Commit into a removed directory succeeded")
	}
	if err := atomicfile.SyncDir(gone); err == nil {
		t.Fatal("SyncDir of a missing directory succeeded")
	}
}

// A temporary file being written is locked: the page writer's clean-up of leftovers of a
// killed process (same naming) leaves it alone.
func TestTempFileHeld(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the lock is taken on Linux only")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "out.mldf")
	f, err := atomicfile.Create(target, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	// On Linux the file has no name until Commit (O_TMPFILE); with a name, it is locked.
	if names := entries(t, dir); len(names) > 0 {
		if len(names) != 1 || !strings.HasPrefix(names[0], ".out.mldf.tmp-") {
			t.Fatalf("temporary files %v", names)
		}
		pagewriter.RemoveLeftovers(dir, "out.mldf")
		if _, err := os.Stat(f.Name()); err != nil {
			t.Fatalf("a temporary file in use was removed: %v", err)
		}
	}
	f.WriteString("x")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
}

// Create removes the temporary files of killed writes to the same target (not those of other
// targets, not one a live writer holds): where the file is named before Commit (no
// O_TMPFILE, or killed between naming and renaming), kill -9 leaves clutter only until the
// next write.
func TestCreateRemovesLeftovers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("leftovers are told from live files by flock, on Linux")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "r.jsonl")
	for _, n := range []string{".r.jsonl.tmp-42", ".r.jsonl.tmp-ab12", ".other.tmp-7", ".r.jsonl.tmp-xyz"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	live, err := atomicfile.Create(target, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Abort()
	if err := atomicfile.WriteFile(target, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(entries(t, dir), " ")
	want := ".other.tmp-7 .r.jsonl.tmp-xyz r.jsonl"
	if _, err := os.Stat(live.Name()); err == nil { // a named temporary file: it stays
		want = ".other.tmp-7 " + filepath.Base(live.Name()) + " .r.jsonl.tmp-xyz r.jsonl"
	}
	if got != want {
		t.Fatalf("folder holds %s, want %s", got, want)
	}
}

// CommitUnsynced publishes like Commit (whole or nothing, the temporary file gone), and
// CreateWith NoClean leaves other writes' temporary files alone.
func TestCommitUnsyncedAndNoClean(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f.txt")
	left := filepath.Join(dir, ".f.txt.tmp-42")
	if err := os.WriteFile(left, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := atomicfile.CreateWith(target, 0o644, atomicfile.Options{NoClean: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("hello"); err != nil {
		t.Fatal(err)
	}
	if err := f.CommitUnsynced(); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); !errors.Is(err, atomicfile.ErrDone) {
		t.Fatalf("Commit after CommitUnsynced: %v", err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "hello" {
		t.Fatalf("target: %q, %v", b, err)
	}
	if got, want := strings.Join(entries(t, dir), " "), ".f.txt.tmp-42 f.txt"; got != want {
		t.Fatalf("folder holds %s, want %s", got, want)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", fi.Mode())
	}
}

// Killed before Commit, a write leaves nothing in the directory on Linux (O_TMPFILE): the
// temporary file has no name until Commit.
func TestUnnamedUntilCommit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("O_TMPFILE is Linux's")
	}
	dir := t.TempDir()
	f, err := atomicfile.Create(filepath.Join(dir, "r.jsonl"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("line\n"); err != nil {
		t.Fatal(err)
	}
	if names := entries(t, dir); len(names) != 0 {
		t.Skipf("this file system has no O_TMPFILE (%v)", names)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if names := entries(t, dir); strings.Join(names, " ") != "r.jsonl" {
		t.Fatalf("after Commit: %v", names)
	}
	if fi, err := os.Stat(filepath.Join(dir, "r.jsonl")); err != nil || fi.Mode().Perm() != 0o644 || fi.Size() != 5 {
		t.Fatalf("published file: %v %v", fi, err)
	}
}
