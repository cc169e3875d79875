package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mldf/convert/objstore"
)

// A run whose rejects file is a bucket URL resumes: the rejects so far are kept in a local
// file beside the path standing for the output (not at the URL), and the object that appears
// at the commit is the bytes of an uninterrupted run's rejects. (file:// is a URL: it takes
// the bucket path through objstore.) A partial rejects file shorter than the checkpoint
// says starts the run over.
func TestResumeRejectsInBucket(t *testing.T) {
	ref := filepath.Join(t.TempDir(), "ref.mldf")
	mustRun(t, killSamplesConfig(ref, 0))
	want, _ := os.ReadFile(ref)
	wantRejects, err := os.ReadFile(ref + ".rejects.jsonl")
	if err != nil || len(wantRejects) == 0 {
		t.Fatalf("the reference run wrote no rejects: %v", err)
	}
	store := objstore.New()
	defer store.Close()
	for _, tc := range []struct {
		name    string
		damage  func(part string)
		message string
	}{
		{name: "resumes", message: "resumed at sample"},
		{name: "rejects cut", damage: func(part string) { os.Truncate(part, 1) }, message: "starting over: the partial rejects file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.mldf")
			rejects := filepath.Join(dir, "bkt", "rejects.jsonl")
			config := func(delay bool, log *lockedBuf) Config {
				cfg, _ := resumeConfig(out, 0, true, log)
				if delay {
					cfg, _ = resumeConfig(out, 2*time.Millisecond, true, log)
				}
				cfg.RejectsPath = "file://" + rejects
				cfg.Store = store
				return cfg
			}
			os.Mkdir(filepath.Dir(rejects), 0o755)
			var log1 lockedBuf
			interrupt(t, config(true, &log1), 2)
			part := filepath.Join(dir, ".out.mldf"+RejectsPartialSuffix)
			if fi, err := os.Stat(part); err != nil || fi.Size() == 0 {
				t.Fatalf("no rejects kept locally after the interruption (%v):\n%s", err, log1.String())
			}
			if _, err := os.Stat(rejects); err == nil {
				t.Fatal("a rejects object before the commit")
			}
			if tc.damage != nil {
				tc.damage(part)
			}
			var log2 lockedBuf
			mustRun(t, config(false, &log2))
			if !strings.Contains(log2.String(), tc.message) {
				t.Errorf("the second run's lines lack %q:\n%s", tc.message, log2.String())
			}
			if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
				t.Error("the output differs from an uninterrupted run's")
			}
			if got, err := os.ReadFile(rejects); err != nil || !bytes.Equal(got, wantRejects) {
				t.Errorf("the rejects object (%d bytes) differs from an uninterrupted run's (%d): %v", len(got), len(wantRejects), err)
			}
			if _, err := os.Stat(part); err == nil {
				t.Error("the local rejects file is left after the commit")
			}
		})
	}
}

// A rejects file that cannot be written at the end fails the run (the error was once lost).
func TestResumeRejectsUploadFails(t *testing.T) {
	store := objstore.New()
	defer store.Close()
	dir := t.TempDir()
	cfg, _ := resumeConfig(filepath.Join(dir, "out.mldf"), 0, true, &lockedBuf{})
	cfg.RejectsPath = "file://" + filepath.Join(dir, "missing", "rejects.jsonl")
	cfg.Store = store
	if _, err := Run(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), "rejects file") {
		t.Fatalf("Run: %v, want the rejects file's error", err)
	}
}
