package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/export"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/recipe"
	"github.com/mldf/convert/runner"
	"github.com/mldf/convert/sample"
	pqsrc "github.com/mldf/convert/sources/parquet"
)

// samePayloads checks that files a and b hold the same image bytes and labels, sample by
// sample.
func samePayloads(t *testing.T, a, b string) {
	t.Helper()
	ra, err := mldf.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer ra.Close()
	rb, err := mldf.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	if ra.NumSamples() != rb.NumSamples() || ra.NumSamples() == 0 {
		t.Fatalf("%s has %d samples, %s has %d", a, ra.NumSamples(), b, rb.NumSamples())
	}
	ia, la := ra.FieldIndex("image"), ra.FieldIndex("label")
	ib, lb := rb.FieldIndex("image"), rb.FieldIndex("label")
	for i := range ra.NumSamples() {
		pa, err := ra.Payload(i, ia)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := rb.Payload(i, ib)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(pa, pb) {
			t.Fatalf("sample %d: image payloads differ (%d and %d bytes)", i, len(pa), len(pb))
		}
		va, _ := ra.Int(i, la)
		vb, err := rb.Int(i, lb)
		if err != nil || va != vb {
			t.Fatalf("sample %d: label %d vs %d (%v)", i, va, vb, err)
		}
	}
}

func TestExportWebDatasetRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a, tdir, b := filepath.Join(dir, "A.mldf"), filepath.Join(dir, "T"), filepath.Join(dir, "B.mldf")
	if _, stderr, err := run(t, "images", "testdata/images", a, "--mode", "smart", "--workers", "2"); err != nil {
		t.Fatalf("images: %v\n%s", err, stderr)
	}
	stdout, _, err := run(t, "export", a, tdir, "--format", "webdataset", "--shard-samples", "10")
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	if !strings.Contains(stdout, "3 shards") || !strings.Contains(stdout, "KEY.jpg|png") || !strings.Contains(stdout, "KEY.cls") {
		t.Fatalf("export printed %q", stdout)
	}
	cfg := filepath.Join(dir, "tar.yaml")
	recipe := "source: {type: tar, inputs: [" + tdir + "/*.tar]}\n" +
		"fields:\n  - {name: image, type: image, from: jpg, mode: smart}\n  - {name: label, type: int, from: cls}\n" +
		"output: " + b + "\non_error: fail\n"
	if err := os.WriteFile(cfg, []byte(recipe), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := run(t, "run", cfg, "--workers", "2"); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	samePayloads(t, a, b)

	// Exporting again gives the same bytes.
	t2 := filepath.Join(dir, "T2")
	if _, _, err := run(t, "export", a, t2, "--format=webdataset", "--shard_samples=10"); err != nil {
		t.Fatal(err)
	}
	shards, _ := filepath.Glob(filepath.Join(tdir, "*.tar"))
	for _, s := range shards {
		x, _ := os.ReadFile(s)
		y, _ := os.ReadFile(filepath.Join(t2, filepath.Base(s)))
		if !bytes.Equal(x, y) {
			t.Fatalf("%s differs between two exports", filepath.Base(s))
		}
	}
}

func TestExportFolderRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a, fdir, b := filepath.Join(dir, "A.mldf"), filepath.Join(dir, "F"), filepath.Join(dir, "B.mldf")
	if _, _, err := run(t, "images", "testdata/images", a, "--mode", "smart", "--workers", "2"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "export", a, fdir, "--format", "folder"); err != nil {
		t.Fatal(err)
	}
	// The class folders are the class names the file holds: those of testdata/images.
	if _, err := os.Stat(filepath.Join(fdir, "photos", "000000.jpg")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "images", fdir, b, "--mode", "smart", "--workers", "2"); err != nil {
		t.Fatal(err)
	}
	samePayloads(t, a, b)
	na, nb := classNamesOf(t, a), classNamesOf(t, b)
	if strings.Join(na, ",") != "photos,skimage,tango_apps,tango_emotes" || strings.Join(na, ",") != strings.Join(nb, ",") {
		t.Fatalf("class names %q, after the round trip %q", na, nb)
	}
	stdout, _, err := run(t, "inspect", a)
	if err != nil || !strings.Contains(stdout, `class names (4, from the file): "photos", "skimage", "tango_apps", "tango_emotes"`) {
		t.Fatalf("inspect: %v\n%s", err, stdout)
	}
	stdout, _, err = run(t, "inspect", a, "--json")
	if err != nil || !strings.Contains(stdout, `"class_names": [`) || !strings.Contains(stdout, `"tango_emotes"`) {
		t.Fatalf("inspect --json: %v\n%s", err, stdout)
	}

	// Raw images come out as PNG files with the same pixels; re-imported as raw, equal.
	c, gdir, d := filepath.Join(dir, "C.mldf"), filepath.Join(dir, "G"), filepath.Join(dir, "D.mldf")
	if _, _, err := run(t, "images", "testdata/images", c, "--mode", "raw", "--max-resolution", "32", "--workers", "2"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "export", c, gdir, "--format", "folder"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "images", gdir, d, "--mode", "raw", "--workers", "2"); err != nil {
		t.Fatal(err)
	}
	samePayloads(t, c, d)
}

func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "A.mldf")
	if _, _, err := run(t, "images", "testdata/images", a, "--mode", "jpeg", "--max-resolution", "16", "--workers", "1"); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.mldf")
	if err := os.WriteFile(bad, []byte("not an mldf file"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file with a flipped payload byte fails the checksum check before anything is written.
	flipped := filepath.Join(dir, "flipped.mldf")
	raw, _ := os.ReadFile(a)
	r, err := mldf.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := r.Ref(0, 0)
	r.Close()
	raw[ref.Ptr] ^= 0xff
	if err := os.WriteFile(flipped, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(dir, "full")
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	for _, c := range []struct {
		args  []string
		is    error
		msg   string
		empty string // a directory that must not exist afterwards
	}{
		{[]string{"export", a, filepath.Join(dir, "o1")}, errUsage, "--format", ""},
		{[]string{"export", a, filepath.Join(dir, "o2"), "--format", "zip"}, errUsage, "--format", ""},
		{[]string{"export", a}, errUsage, "", ""},
		{[]string{"export", a, filepath.Join(dir, "o3"), "--format", "folder", "--shard-samples", "3"}, errUsage, "webdataset", ""},
		{[]string{"export", a, filepath.Join(dir, "o4"), "--format", "webdataset", "--shard-size", "lots"}, errUsage, "lots", ""},
		{[]string{"export", bad, filepath.Join(dir, "o5"), "--format", "webdataset"}, mldf.ErrSignature, "bad.mldf", "o5"},
		{[]string{"export", flipped, filepath.Join(dir, "o6"), "--format", "folder"}, mldf.ErrChecksum, "flipped.mldf", "o6"},
		{[]string{"export", a, full, "--format", "folder"}, export.ErrDirNotEmpty, "full", ""},
		{[]string{"export", a, filepath.Join(dir, "o7"), "--format", "folder", "--label", "image"}, export.ErrField, "IMAGE_JPEG", "o7"},
		{[]string{"export", a, filepath.Join(dir, "o8"), "--format", "webdataset", "--key", "nope"}, export.ErrField, "nope", "o8"},
	} {
		_, _, err := run(t, c.args...)
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v: err %v, want %v with %q", c.args[1:], err, c.is, c.msg)
		}
		if c.empty != "" {
			if _, err := os.Stat(filepath.Join(dir, c.empty)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%v: output directory created (%v)", c.args[1:], err)
			}
		}
	}
}

// oldSource yields three labelled samples.
type oldSource struct{}

func (oldSource) Len() int64 { return 3 }
func (oldSource) Run(ctx context.Context, emit func(sample.Sample) error) error {
	for i := range 3 {
		if err := emit(sample.Sample{Index: int64(i), Values: []sample.Column{{Name: "label", Value: sample.Value{Kind: sample.KindInt, Int: int64(i)}}}}); err != nil {
			return err
		}
	}
	return nil
}

// TestClassNamesSideFile: a file written before class names went into the file (its names in
// FILE.classes.json beside it) still shows them in inspect and exports them as a ClassLabel.
func TestClassNamesSideFile(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.mldf")
	names := []string{"neg", "pos", "mixed"}
	cl, err := encoders.NewClassLabel("label", names)
	if err != nil {
		t.Fatal(err)
	}
	// Hidden from the writer, the names stay out of the file, as older writers did.
	if _, err := pipeline.Run(context.Background(), pipeline.Config{Source: oldSource{}, Output: old, PageSize: 4096,
		Fields: []pipeline.Binding{{Field: struct{ encoders.Field }{cl}, Column: "label"}}}); err != nil {
		t.Fatal(err)
	}
	if err := runner.WriteClasses(context.Background(), nil, old+recipe.ClassesSuffix, map[string][]string{"label": names}); err != nil {
		t.Fatal(err)
	}
	stdout, _, err := run(t, "inspect", old)
	if err != nil || !strings.Contains(stdout, `class names (3, from the side file `) || !strings.Contains(stdout, `"neg", "pos", "mixed"`) {
		t.Fatalf("inspect: %v\n%s", err, stdout)
	}
	pq := filepath.Join(dir, "pq")
	if _, _, err := run(t, "export", old, pq, "--format", "parquet"); err != nil {
		t.Fatal(err)
	}
	_, meta, err := pqsrc.ReadSchema(filepath.Join(pq, "data-000000.parquet"), nil)
	if err != nil {
		t.Fatal(err)
	}
	feats, _ := pqsrc.Features(meta)
	if f := feats["label"]; f.Type != "ClassLabel" || strings.Join(f.Names, ",") != "neg,pos,mixed" {
		t.Fatalf("label feature %+v", f)
	}
	// Without the side file the names are unknown, and inspect says so.
	os.Remove(old + recipe.ClassesSuffix)
	stdout, _, err = run(t, "inspect", old)
	if err != nil || !strings.Contains(stdout, "class names: not in the file") {
		t.Fatalf("inspect: %v\n%s", err, stdout)
	}
}
