package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/merge"
)

// sameSamples checks that a and b hold the same fields (by name, with the same descriptor)
// and, sample by sample, the same metadata structs (payload references aside) and payloads.
func sameSamples(t *testing.T, a, b string) {
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
	fa, fb := ra.Fields(), rb.Fields()
	if len(fa) != len(fb) {
		t.Fatalf("%s has fields %v, %s has %v", a, fa, b, fb)
	}
	for ka, f := range fa {
		kb := rb.FieldIndex(f.Name)
		if kb < 0 || fb[kb].Type != f.Type || fb[kb].Arguments != f.Arguments {
			t.Fatalf("field %q: %+v in %s, %+v in %s", f.Name, f, a, fb[max(kb, 0)], b)
		}
		for i := range ra.NumSamples() {
			ma, mb := ra.Meta(i, ka), rb.Meta(i, kb)
			skip := 0
			if f.Type != mldf.TypeInt && f.Type != mldf.TypeFloat {
				skip = 12 // data_ptr and data_size differ with the layout
			}
			if !bytes.Equal(ma[skip:], mb[skip:]) {
				t.Fatalf("sample %d field %q: metadata % x vs % x", i, f.Name, ma, mb)
			}
			if skip == 0 {
				continue
			}
			pa, err := ra.Payload(i, ka)
			if err != nil {
				t.Fatal(err)
			}
			pb, err := rb.Payload(i, kb)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(pa, pb) {
				t.Fatalf("sample %d field %q: payloads of %d and %d bytes differ", i, f.Name, len(pa), len(pb))
			}
		}
	}
}

// TestParquetRoundTrip: Hub-style Parquet → MLDF → exported Parquet → MLDF keeps every sample
// byte-identical, and the class names.
func TestParquetRoundTrip(t *testing.T) {
	for _, cfg := range []string{"configs/hf-text.yaml", "configs/hf-image-classification.yaml"} {
		t.Run(filepath.Base(cfg), func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("OUT", dir)
			name := strings.TrimSuffix(filepath.Base(cfg), ".yaml")
			first := filepath.Join(dir, map[string]string{"hf-text": "hf-text.mldf", "hf-image-classification": "hf-images.mldf"}[name])
			if _, stderr, err := run(t, "run", cfg, "--workers", "2"); err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			exported := filepath.Join(dir, "exported")
			if _, _, err := run(t, "export", first, exported, "--format", "parquet"); err != nil {
				t.Fatalf("export: %v", err)
			}
			// Read the export back with a recipe that infers every field.
			second := filepath.Join(dir, "second.mldf")
			recipe := filepath.Join(dir, "back.yaml")
			extra := ""
			if name == "hf-image-classification" {
				extra = "fields:\n  - {name: image, type: image, mode: smart, max_resolution: 256}\n  - {name: label, type: int}\n"
			}
			if err := os.WriteFile(recipe, []byte("source:\n  type: parquet\n  inputs: ["+exported+"/data-*.parquet]\n"+extra+"output: "+second+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, _, err := run(t, "validate", recipe)
			if err != nil {
				t.Fatal(err)
			}
			if name == "hf-text" && !strings.Contains(stdout, "Hugging Face ClassLabel (2 names)") {
				t.Errorf("validate does not print the inferred mapping:\n%s", stdout)
			}
			if _, stderr, err := run(t, "run", recipe, "--workers", "1"); err != nil {
				t.Fatalf("run back: %v\n%s", err, stderr)
			}
			sameSamples(t, first, second)
			// The class names are in the files (no side file), and survive the round trip.
			ca, cb := classNamesOf(t, first), classNamesOf(t, second)
			if len(ca) == 0 || strings.Join(ca, "|") != strings.Join(cb, "|") {
				t.Fatalf("class names %q, after the round trip %q", ca, cb)
			}
			if _, err := os.Stat(first + ".classes.json"); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("side file written: %v", err)
			}
		})
	}
}

type hfAudio struct {
	Bytes []byte  `parquet:"bytes,optional"`
	Path  *string `parquet:"path,optional"`
}

type hfAudioRow struct {
	Audio *hfAudio `parquet:"audio,optional"`
	Label *int64   `parquet:"label,optional"`
}

// TestParquetAudioRoundTrip: a Hub-style audio dataset (Audio struct of WAV and FLAC files,
// ClassLabel) converts with no fields (audio → flac), exports and converts back identically.
func TestParquetAudioRoundTrip(t *testing.T) {
	dir := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "testdata/audio/commands/*/*"))
	var rows []hfAudioRow
	for i, f := range files {
		if ext := filepath.Ext(f); ext != ".wav" && ext != ".flac" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name, label := filepath.Base(f), int64(i%3)
		rows = append(rows, hfAudioRow{Audio: &hfAudio{Bytes: b, Path: &name}, Label: &label})
	}
	if len(rows) < 3 {
		t.Fatalf("%d audio files", len(rows))
	}
	in := filepath.Join(dir, "audio.parquet")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	w := pq.NewGenericWriter[hfAudioRow](f, pq.KeyValueMetadata("huggingface",
		`{"info": {"features": {"audio": {"sampling_rate": 16000, "_type": "Audio"}, "label": {"names": ["down", "go", "yes"], "_type": "ClassLabel"}}}}`))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	recipe := func(name, inputs string) string {
		p := filepath.Join(dir, name+".yaml")
		src := "source:\n  type: parquet\n  inputs: [" + inputs + "]\noutput: " + filepath.Join(dir, name+".mldf") + "\n"
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stdout, _, err := run(t, "validate", recipe("first", in))
	if err != nil || !strings.Contains(stdout, `"audio"                  → flac`) {
		t.Fatalf("validate: %v\n%s", err, stdout)
	}
	if _, stderr, err := run(t, "run", recipe("first", in), "--on-error", "fail"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if _, _, err := run(t, "export", filepath.Join(dir, "first.mldf"), filepath.Join(dir, "out"), "--format", "parquet"); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := run(t, "run", recipe("second", filepath.Join(dir, "out", "data-000000.parquet")), "--on-error", "fail"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	sameSamples(t, filepath.Join(dir, "first.mldf"), filepath.Join(dir, "second.mldf"))
}

// TestParquetWorkersIdentical: the output file is byte-identical for any worker count.
func TestParquetWorkersIdentical(t *testing.T) {
	var first []byte
	for _, w := range []string{"1", "2", "5"} {
		dir := t.TempDir()
		t.Setenv("OUT", dir)
		if _, stderr, err := run(t, "run", "configs/hf-image-classification.yaml", "--workers", w); err != nil {
			t.Fatalf("workers %s: %v\n%s", w, err, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, "hf-images.mldf"))
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if !bytes.Equal(first, b) {
			t.Fatalf("workers %s: the output differs from workers 1", w)
		}
	}
}

// TestParquetSharded: a run split in two slices of the inputs (two Parquet files), merged,
// holds the samples of a single run; each part has its class names.
func TestParquetSharded(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata/parquet/hf-text.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.parquet", "b.parquet"} {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name string) string {
		p := filepath.Join(dir, name+".yaml")
		y := "source:\n  type: parquet\n  inputs: [\"" + dir + "/{a,b}.parquet\"]\noutput: " + filepath.Join(dir, name+".mldf") + "\nmax_errors: 10%\n"
		if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	single, sharded := write("single"), write("sharded")
	if _, stderr, err := run(t, "run", single); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	out := filepath.Join(dir, "sharded.mldf")
	for i := range 2 {
		if _, stderr, err := run(t, "run", sharded, "--shards", "2", "--shard", strconv.Itoa(i)); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, stderr)
		}
		if names := classNamesOf(t, merge.PartPath(out, i, 2)); len(names) == 0 {
			t.Errorf("part %d has no class names", i)
		}
	}
	if _, _, err := run(t, "merge", out); err != nil {
		t.Fatal(err)
	}
	sameSamples(t, filepath.Join(dir, "single.mldf"), out)
	a, b := classNamesOf(t, filepath.Join(dir, "single.mldf")), classNamesOf(t, out)
	if len(a) == 0 || strings.Join(a, "|") != strings.Join(b, "|") {
		t.Fatalf("merged class names %q, single run %q", b, a)
	}
}

// classNamesOf returns the class names the file holds for its field "label".
func classNamesOf(t *testing.T, path string) []string {
	t.Helper()
	r, err := mldf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	names, err := r.Field("label").ClassNames()
	if err != nil {
		t.Fatal(err)
	}
	return names
}
