package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bad flag value is a usage error (exit status 2) that names the flag and what it accepts,
// for every flag whose value is checked, on every command that takes it; never an "invalid
// recipe" about a key the user did not write, and never a run.
func TestBadFlagValuesAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	writeNoiseFolder(t, data, 2, 8)
	out := filepath.Join(dir, "o.mldf")
	cfg := filepath.Join(dir, "r.yaml")
	y := "source: {type: images, path: " + data + "}\nfields:\n  - {name: image, type: image}\n  - {name: label, type: int}\noutput: " + out + "\n"
	if err := os.WriteFile(cfg, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	images := func(flags ...string) []string { return append([]string{"images", data, out}, flags...) }
	cases := []struct {
		args []string
		want []string // in the message: the flag and what it accepts
	}{
		{images("--mode", "smrt"), []string{"-mode", "smrt", "jpeg, png, raw, smart"}},
		{images("--filter", "bicubik"), []string{"-filter", "lanczos"}},
		{images("--channels", "5"), []string{"-channels", "1, 3, 4"}},
		{images("--channels", "mono"), []string{"--channels", "1, 3, 4"}}, // an audio value on an image field
		{images("--jpeg-quality", "101"), []string{"-jpeg-quality", "1 to 100"}},
		{images("--jpeg-quality", "0"), []string{"-jpeg-quality", "1 to 100"}},
		{images("--jpeg-quality", "90.5"), []string{"-jpeg-quality", "1 to 100"}},
		{images("--max-resolution", "-1"), []string{"-max-resolution", "0 to 65535"}},
		{images("--max-pixels", "-5"), []string{"-max-pixels"}},
		{images("--format", "tfrecord"), []string{"-format", "mldf, beton, scdl"}},
		{images("--page-size", "3000"), []string{"-page-size", "power of two"}},
		{images("--page-size", "big"), []string{"-page-size", "power of two"}},
		{images("--workers", "-2"), []string{"-workers", "0 to"}},
		{images("--chunk-size", "-1"), []string{"-chunk-size", "0 to"}},
		{images("--on-error", "ignore"), []string{"-on-error", "skip, fail"}},
		{images("--max-errors", "lots"), []string{"-max-errors", "percentage"}},
		{images("--log-format", "xml"), []string{"-log-format", "text, json"}},
		{images("--shards", "-1"), []string{"-shards", "0 to 99999"}},
		{images("--shard", "-3", "--shards", "2"), []string{"-shard", "0 to"}},
		{images("--shard", "2", "--shards", "2"), []string{"--shard", "--shards"}},
		{images("--abort-incomplete-older-than", "-1h"), []string{"-abort-incomplete-older-than", "duration"}},
		{[]string{"run", cfg, "--sample-rate", "-1"}, []string{"-sample-rate", "0 to"}},
		{[]string{"run", cfg, "--sample-type", "int8"}, []string{"-sample-type", "int16, int32, float32"}},
		{[]string{"run", cfg, "--max-duration", "NaN"}, []string{"-max-duration", "0 to"}},
		{[]string{"run", cfg, "--on-long", "cut"}, []string{"-on-long", "truncate, skip"}},
		{[]string{"run", cfg, "--tokenizer", "gpt2"}, []string{"-tokenizer", "cl100k_base"}},
		{[]string{"run", cfg, "--seq-len", "0"}, []string{"-seq-len", "1 to"}},
		{[]string{"run", cfg, "--remainder", "keep"}, []string{"-remainder", "drop, pad"}},
		{[]string{"validate", cfg, "--mode", "smrt"}, []string{"-mode", "jpeg, png, raw, smart"}},
		{[]string{"verify", out, "--workers", "-1"}, []string{"-workers", "0 to"}},
		{[]string{"inspect", out, "--sample", "-2"}, []string{"-sample", "0 to"}},
		{[]string{"cat", out, "--sample", "-2", "--field", "image"}, []string{"-sample", "0 to"}},
		{[]string{"export", out, filepath.Join(dir, "e"), "--format", "tar"}, []string{"-format", "folder, webdataset, parquet"}},
		{[]string{"export", out, filepath.Join(dir, "e"), "--format", "webdataset", "--shard-size", "0"}, []string{"-shard-size", "size"}},
		{[]string{"export", out, filepath.Join(dir, "e"), "--format", "webdataset", "--shard-samples", "-1"}, []string{"-shard-samples", "0 to"}},
		{[]string{"merge", out, "--copy", "splice"}, []string{"-copy", "auto, readwrite"}},
		{[]string{"storage", "abort-incomplete", "s3://b/x", "--older-than", "-1h"}, []string{"-older-than", "duration"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, _, err := run(t, c.args...)
			if code := exitCode(err, false); code != exitUsage {
				t.Fatalf("exit status %d (%v), want %d", code, err, exitUsage)
			}
			msg := err.Error()
			if strings.Contains(msg, "recipe") {
				t.Errorf("%q speaks of a recipe", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}
