package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"context"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
	pqsrc "github.com/mldf/convert/sources/parquet"
)

// textValues returns the TEXT_RAW field's values of every sample of path.
func textValues(t *testing.T, path, field string) []string {
	t.Helper()
	r, err := mldf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f := r.FieldIndex(field)
	var out []string
	for i := range r.NumSamples() {
		_, p, err := r.Text(i, f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(p))
	}
	return out
}

// TestKeysAndPaths: from: path on an image folder stores each image's path relative to the
// folder; from: __key__ on tar shards stores the sample keys; export --format parquet puts
// the paths in image.path. Before, every sample was rejected (no such column).
func TestKeysAndPaths(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.mldf")
	cfg := filepath.Join(dir, "a.yaml")
	y := "source: {type: images, path: " + filepath.Join(repoRoot(t), "testdata/images") + "}\n" +
		"fields:\n  - {name: image, type: image, mode: smart}\n  - {name: label, type: int}\n  - {name: path, type: text, from: path}\n" +
		"output: " + a + "\non_error: fail\n"
	if err := os.WriteFile(cfg, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := run(t, "run", cfg, "--workers", "2"); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	paths := textValues(t, a, "path")
	if len(paths) == 0 || paths[0] != "photos/123_456.jpg" {
		t.Fatalf("paths %q", paths)
	}
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(repoRoot(t), "testdata/images", p)); err != nil {
			t.Fatalf("path %q: %v", p, err)
		}
	}

	// Parquet export: image.path is the stored path.
	pq := filepath.Join(dir, "pq")
	if _, _, err := run(t, "export", a, pq, "--format", "parquet"); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(pq, "*.parquet"))
	src, err := pqsrc.New(files, []pqsrc.Column{{Name: "p", Path: "image.path", As: pqsrc.AsValue}}, pqsrc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := src.Run(context.Background(), func(s sample.Sample) error {
		v, _ := s.Get("p")
		got = append(got, string(v.Bytes))
		return s.Err
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != strings.Join(paths, ",") {
		t.Fatalf("image.path %q, want %q", got, paths)
	}

	// Tar shards: from: __key__.
	tdir := filepath.Join(dir, "T")
	if _, _, err := run(t, "export", a, tdir, "--format", "webdataset", "--shard-samples", "10"); err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(dir, "b.mldf")
	cfg = filepath.Join(dir, "b.yaml")
	y = "source: {type: tar, unknown_members: ignore, inputs: [" + tdir + "/*.tar]}\n" +
		"fields:\n  - {name: image, type: image, from: jpg|png, mode: smart}\n  - {name: label, type: int, from: cls}\n  - {name: key, type: text, from: __key__}\n" +
		"output: " + b + "\non_error: fail\n"
	if err := os.WriteFile(cfg, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := run(t, "run", cfg, "--workers", "2"); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	keys := textValues(t, b, "key")
	if len(keys) != len(paths) {
		t.Fatalf("%d keys for %d samples", len(keys), len(paths))
	}
	// The keys are those of the shards' members (the export names them by index).
	for i, k := range keys {
		if k == "" || (i > 0 && k <= keys[i-1]) {
			t.Fatalf("keys %q", keys)
		}
	}
	first, _ := os.ReadFile(filepath.Join(tdir, "shard-000000.tar"))
	if !strings.Contains(string(first), keys[0]+".cls") {
		t.Fatalf("key %q is not a member of the first shard", keys[0])
	}
}
