package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// killRuns runs bin with args again and again until a run finishes: each of the first kills
// runs is killed with SIGKILL once wait(k, began) returns (k counts the kills so far, began is
// when the run started); a run not killed must succeed. It returns every run's stderr, headed
// by its attempt, and the number of kills.
func killRuns(t *testing.T, bin string, args []string, kills, attempts int, wait func(k int, began time.Time)) (string, int) {
	t.Helper()
	var logs strings.Builder
	k := 0
	for i := 0; ; i++ {
		if i > attempts {
			t.Fatalf("%d attempts and the run has not finished:\n%s", i, logs.String())
		}
		cmd := exec.Command(bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		began := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killing := k < kills
		if killing {
			wait(k, began)
			cmd.Process.Kill()
		}
		err := cmd.Wait()
		fmt.Fprintf(&logs, "attempt %d (killed %v, %v):\n%s", i, killing, err, stderr.String())
		if err == nil {
			return logs.String(), k
		}
		if !killing {
			t.Fatalf("the last run failed: %v\n%s", err, logs.String())
		}
		k++
	}
}

// treeFiles returns the files under dir by relative path.
func treeFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		m[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameTree fails unless the directory out holds the files of want, byte for byte; kills and
// logs go into the message.
func sameTree(t *testing.T, out string, want map[string][]byte, kills int, logs string) {
	t.Helper()
	got := treeFiles(t, out)
	if len(got) != len(want) {
		t.Fatalf("after %d kills %s has %d files, an uninterrupted run's %d\n%s", kills, out, len(got), len(want), logs)
	}
	for name, b := range want {
		if !bytes.Equal(got[name], b) {
			t.Fatalf("after %d kills %s differs from an uninterrupted run's\n%s", kills, name, logs)
		}
	}
}

// onlyFiles fails if dir holds anything but the names in keep (a partial file, a checkpoint).
func onlyFiles(t *testing.T, dir string, keep ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		found := false
		for _, k := range keep {
			found = found || e.Name() == k
		}
		if !found {
			t.Errorf("left behind in %s: %s", dir, e.Name())
		}
	}
}
