package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/format/mldf"
)

// TestRun writes the fixtures and checks that every good one verifies with the Go reader and
// has its expected JSON, and that bad.json describes every damaged file.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("writes every fixture")
	}
	dir := t.TempDir()
	if err := run(context.Background(), dir, 0); err != nil {
		t.Fatal(err)
	}
	var index struct{ Fixtures []string }
	readJSON(t, filepath.Join(dir, "index.json"), &index)
	if len(index.Fixtures) < 7 {
		t.Fatalf("index lists %d fixtures", len(index.Fixtures))
	}
	for _, name := range index.Fixtures {
		if _, err := mldf.Verify(filepath.Join(dir, name+".mldf")); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		var e expected
		readJSON(t, filepath.Join(dir, name+".expected.json"), &e)
		if e.NumSamples == 0 || len(e.Samples) != e.NumSamples {
			t.Errorf("%s: %d samples, %d exported", name, e.NumSamples, len(e.Samples))
		}
	}
	var cases []badCase
	readJSON(t, filepath.Join(dir, "bad.json"), &cases)
	for _, c := range cases {
		if c.OpenOK && c.VerifyOK && c.DecodeRule == "" && c.File != "ok_newer_minor.mldf" {
			t.Errorf("%s (%s): the Go reader accepts it, even with --decode", c.File, c.What)
		}
		if _, err := os.Stat(filepath.Join(dir, c.File)); err != nil {
			t.Error(err)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
