package appendfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestWorkDirCleanup: a new append removes the working folders of killed appends to the same
// base (not held by any process), and leaves alone the one of an append still running (held)
// and the folders of other bases.
func TestWorkDirCleanup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the working folder's lock (flock) is taken on Linux only")
	}
	dir := t.TempDir()
	base := filepath.Join(dir, "base.mldf")
	live, err := NewWorkDir(dir, base)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()
	// What a killed append leaves: a folder with its half-written samples, never held now.
	stale := filepath.Join(dir, ".base.mldf.append-123456789")
	other := filepath.Join(dir, ".other.mldf.append-123456789")
	notOurs := filepath.Join(dir, ".base.mldf.append-keep")
	for _, d := range []string{stale, other, notOurs} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "new.mldf"), []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	next, err := NewWorkDir(dir, base)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		kept bool
	}{
		{stale, false},
		{live.Path(), true},
		{other, true},
		{notOurs, true},
		{next.Path(), true},
	} {
		if _, err := os.Stat(tc.path); (err == nil) != tc.kept {
			t.Errorf("%s: kept %v (%v), want kept %v", filepath.Base(tc.path), err == nil, err, tc.kept)
		}
	}
	if err := next.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(next.Path()); !os.IsNotExist(err) {
		t.Fatalf("Remove left %s: %v", next.Path(), err)
	}
}
