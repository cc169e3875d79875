package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mldf/convert/format/beton"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/recipe"
	"github.com/mldf/convert/sources/h5ad"
)

// root is where configs/ and testdata/ live; recipes use paths relative to it. It is set
// once, before any test changes directory.
var root string

func TestMain(m *testing.M) {
	var err error
	if root, err = filepath.Abs("../.."); err != nil {
		panic(err)
	}
	code := m.Run()
	if builtConvert.dir != "" {
		os.RemoveAll(builtConvert.dir)
	}
	os.Exit(code)
}

func repoRoot(*testing.T) string { return root }

// testdataRef is a relative testdata/ path in recipe text.
var testdataRef = regexp.MustCompile(`(^|[\s\["'])testdata/`)

// rootPaths makes the testdata/ paths of a recipe absolute: a recipe's relative paths are
// relative to its own folder, and test recipes are written to temporary folders.
func rootPaths(y string) string {
	return testdataRef.ReplaceAllString(y, "${1}"+filepath.Join(root, "testdata")+"/")
}

// run calls the command in-process from the repository root.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	t.Chdir(repoRoot(t))
	var stdout, stderr bytes.Buffer
	err := dispatch(context.Background(), args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func TestEveryConfigValidatesAndConverts(t *testing.T) {
	configs, err := filepath.Glob(filepath.Join(repoRoot(t), "configs", "*.yaml"))
	if err != nil || len(configs) == 0 {
		t.Fatalf("no configs: %v", err)
	}
	for _, cfg := range configs {
		name := strings.TrimSuffix(filepath.Base(cfg), ".yaml")
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			t.Setenv("OUT", out)
			if rr, err := recipe.Load(cfg); err == nil && rr.Source.Type == "h5ad" && !h5ad.Available() {
				t.Skip("built without cgo: no h5ad (libhdf5)")
			}
			stdout, _, err := run(t, "validate", cfg)
			if err != nil {
				t.Fatalf("validate: %v", err)
			}
			if !strings.Contains(stdout, "recipe OK") {
				t.Fatalf("validate printed %q", stdout)
			}
			if _, err := os.Stat(out); err == nil {
				if entries, _ := os.ReadDir(out); len(entries) != 0 {
					t.Fatalf("validate wrote files: %v", entries)
				}
			}
			r, err := recipe.Load(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r.Defaults()
			stdout, stderr, err := run(t, "run", cfg, "--workers", "2")
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			if r.Format == "scdl" { // an archive directory: scdl_test.go checks it further
				if _, _, err := run(t, "verify", r.Output); err != nil {
					t.Fatalf("convert verify: %v", err)
				}
				return
			}
			if r.Format == "beton" {
				b, err := beton.Open(r.Output)
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				if _, err := b.Verify(); err != nil {
					t.Fatalf("verify %s: %v", r.Output, err)
				}
				if _, _, err := run(t, "verify", r.Output); err != nil {
					t.Fatalf("convert verify: %v", err)
				}
				return
			}
			rd, err := mldf.Open(r.Output)
			if err != nil {
				t.Fatalf("output: %v (stdout %q)", err, stdout)
			}
			defer rd.Close()
			if rd.NumSamples() == 0 {
				t.Fatalf("%s has no samples", r.Output)
			}
			if _, err := rd.Verify(); err != nil {
				t.Fatalf("verify: %v", err)
			}
			var rep runReport
			b, err := os.ReadFile(r.Report)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &rep); err != nil || !rep.OK || rep.NumSamples != int64(rd.NumSamples()) || (len(r.Fields) > 0 && len(rep.Fields) != len(r.Fields)) { // parquet: fields may be inferred
				t.Fatalf("report %s: %+v (%v)", r.Report, rep, err)
			}
		})
	}
}

func TestImagesOneShotAndFlagsOverride(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.mldf")
	_, _, err := run(t, "images", "testdata/images", out, "--max-resolution", "64", "--mode=jpeg", "--jpeg_quality", "80", "--workers", "1")
	if err != nil {
		t.Fatal(err)
	}
	rd, err := mldf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	for i := range rd.NumSamples() {
		m, _, err := rd.Image(i, 0)
		if err != nil {
			t.Fatal(err)
		}
		if max(m.Width, m.Height) > 64 {
			t.Fatalf("sample %d is %dx%d, flag said 64", i, m.Width, m.Height)
		}
	}
	stdout, _, err := run(t, "inspect", out)
	if err != nil || !strings.Contains(stdout, "mode=jpeg max_resolution=64 jpeg_quality=80 filter=box") {
		t.Fatalf("inspect: %v\n%s", err, stdout)
	}
	if _, _, err := run(t, "verify", out); err != nil {
		t.Fatal(err)
	}
	var cat bytes.Buffer
	t.Chdir(repoRoot(t))
	if err := dispatch(context.Background(), []string{"cat", out, "--sample", "0", "--field", "image"}, &cat, &cat); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(cat.Bytes(), []byte{0xff, 0xd8}) {
		t.Fatalf("cat wrote % x..., want a JPEG", cat.Bytes()[:4])
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"nosuch"}, {"run"}, {"images", "only-one"}, {"inspect"}, {"cat", "f"}, {"run", "x.yaml", "--bogus"},
	} {
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	if _, _, err := run(t, "run", "configs/nosuch.yaml"); err == nil || !strings.Contains(err.Error(), "nosuch.yaml") {
		t.Errorf("missing recipe: %v", err)
	}
}

func TestBadRecipeNoOutput(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bad.yaml")
	out := filepath.Join(dir, "o.mldf")
	src := "source: {type: images, path: testdata/images}\nfields:\n  - {name: image, type: image, jpeg_quality: 101}\noutput: " + out + "\npage_size: 1000\n"
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := run(t, "run", cfg)
	if !errors.Is(err, recipe.ErrRecipe) || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "line 5") {
		t.Fatalf("want both problems with lines, got %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("output exists after a bad recipe: %v", err)
	}
}

func TestShardFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	for _, c := range []struct {
		env           map[string]string
		flagShard     int
		shard, shards int
		err           string
	}{
		{map[string]string{"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "2", "SLURM_ARRAY_TASK_COUNT": "8"}, -1, 3, 8, ""},
		{map[string]string{"JOB_COMPLETION_INDEX": "4"}, -1, 0, 0, "pass --shards"},
		{map[string]string{"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "2"}, -1, 0, 0, "not a task index"},
		{map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "4"}, 2, 2, 4, ""},
		{map[string]string{}, -1, 0, 0, ""},
	} {
		r := &recipe.Recipe{}
		err := shardFromEnv(r, &runFlags{shard: c.flagShard}, env(c.env))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: err %v, want %q", c.env, err, c.err)
			}
			continue
		}
		if err != nil || r.Shard != c.shard || r.Shards != c.shards {
			t.Errorf("%v: shard %d/%d (%v), want %d/%d", c.env, r.Shard, r.Shards, err, c.shard, c.shards)
		}
	}
	if got := partPath("out/x.mldf", 3, 8); got != "out/x.part-00003-of-00008.mldf" {
		t.Errorf("partPath = %q", got)
	}
}

// A WebDataset member that no field reads makes its sample a bad sample (the error policy
// applies), unless the recipe says unknown_members: ignore.
func TestTarUnknownMembers(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		policy  string
		samples int
		err     string
	}{
		{"", 0, ""}, {"ignore", 25, ""}, {"reject\non_error: fail", 0, "json read by no field"},
	} {
		cfg := filepath.Join(dir, "r.yaml")
		out := filepath.Join(dir, "o.mldf")
		src := "source:\n  type: tar\n  inputs: [testdata/tar/wds/shard-*.tar]\n"
		if c.policy != "" {
			src += "  unknown_members: " + strings.SplitN(c.policy, "\n", 2)[0] + "\n"
		}
		src += "fields:\n  - {name: image, type: image, from: jpg|png}\n  - {name: label, type: int, from: cls}\noutput: " + out + "\n"
		if strings.Contains(c.policy, "\n") {
			src += strings.SplitN(c.policy, "\n", 2)[1] + "\n"
		}
		if err := os.WriteFile(cfg, []byte(rootPaths(src)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := run(t, "run", cfg)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.policy, err, c.err)
			}
			continue
		}
		// Every sample rejected (the default policy): a run that would write no sample fails
		// (exit status 1) and writes nothing.
		if c.policy == "" {
			if !errors.Is(err, pipeline.ErrEmpty) || !strings.Contains(err.Error(), "25 rejected") || exitCode(err, false) != exitError {
				t.Fatalf("%q: %v, want no sample to write (exit status 1)", c.policy, err)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%q: output written (%v)", c.policy, err)
			}
			continue
		} else if err != nil {
			t.Fatalf("%q: %v", c.policy, err)
		}
		rd, err := mldf.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		if rd.NumSamples() != c.samples {
			t.Errorf("%q: %d samples, want %d", c.policy, rd.NumSamples(), c.samples)
		}
		rd.Close()
		os.Remove(out)
	}
}

func TestHelpListsFlags(t *testing.T) {
	for _, cmd := range []string{"run", "images", "inspect", "verify", "cat", "index", "export", "merge"} {
		stdout, _, err := run(t, cmd, "-h")
		if err != nil || !strings.Contains(stdout, "convert "+cmd) {
			t.Errorf("%s -h: %v\n%s", cmd, err, stdout)
		}
	}
	stdout, _, _ := run(t, "run", "--help")
	for _, want := range []string{"-max-resolution", "-workers", "-page-size", "-on-error"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("run --help lacks %s", want)
		}
	}
}

// convert index writes the reference implementation's bytes (a golden fold of three real Go
// toolchain tars), and inspect and verify read the index.
func TestIndexCommandMatchesGolden(t *testing.T) {
	out := filepath.Join(t.TempDir(), "go.taridx")
	tars := "testdata/tar/taridx/tars/gostd/"
	_, _, err := run(t, "index", tars+"gnu.tar", tars+"star.tar", tars+"v7.tar", tars+"xattrs.tar", "-o", out)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	want, err := os.ReadFile(filepath.Join(root, "testdata/tar/taridx/golden/folds/go.taridx"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("index differs from the reference's (%d vs %d bytes)", len(got), len(want))
	}
	stdout, _, err := run(t, "inspect", out)
	if err != nil || !strings.Contains(stdout, "TARIDX 1.0") {
		t.Fatalf("inspect: %v\n%s", err, stdout)
	}
	if stdout, _, err = run(t, "verify", out); err != nil || !strings.Contains(stdout, "OK") {
		t.Fatalf("verify: %v\n%s", err, stdout)
	}
}

// --trace writes a Go execution trace of the run (what bench/tracebusy.py reads) beside the
// output, and the output is the same as without it.
func TestTraceFlag(t *testing.T) {
	dir := t.TempDir()
	out, tr := filepath.Join(dir, "x.mldf"), filepath.Join(dir, "run.trace")
	if _, stderr, err := run(t, "images", "testdata/images", out, "--max-resolution", "64", "--mode=jpeg", "--workers", "2", "--trace", tr); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	b, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("go 1.")) || !bytes.Contains(b[:16], []byte(" trace")) {
		t.Fatalf("trace file starts %q, not a Go execution trace", b[:min(len(b), 16)])
	}
	rd, err := mldf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if rd.NumSamples() == 0 {
		t.Fatal("no samples")
	}
}
