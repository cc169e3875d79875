package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/recipe"
	"github.com/mldf/convert/runner"
)

// --direct-io and the recipe's direct_io reach the pipeline's NoDirect (the flag over the
// key); they leave the hash that a resumed run, a
// sharded task's record and an append's working folder match unchanged.
func TestDirectIOReachesPipeline(t *testing.T) {
	no, yes := false, true
	for _, c := range []struct {
		key      *bool
		args     []string
		noDirect bool
	}{
		{nil, nil, false},
		{&no, nil, true},
		{&yes, nil, false},
		{nil, []string{"--direct-io=false"}, true},
		{nil, []string{"--direct_io=false"}, true},
		{nil, []string{"-direct-io=false"}, true},
		{&no, []string{"--direct-io"}, false},
		{&yes, []string{"--direct-io=false"}, true},
	} {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		rf := bindRunFlags(fs, true)
		if _, err := parseArgs(fs, c.args); err != nil {
			t.Fatal(err)
		}
		r := &recipe.Recipe{Output: "o.mldf", DirectIO: c.key}
		if err := rf.apply(r); err != nil {
			t.Fatal(err)
		}
		r.Defaults()
		cfg, err := runner.Config(&recipe.Plan{Recipe: r}, r.Output)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.NoDirect != c.noDirect {
			t.Errorf("direct_io %v, flags %q: NoDirect %v, want %v", fmtKey(c.key), c.args, cfg.NoDirect, c.noDirect)
		}
		unset := *r
		unset.DirectIO = nil
		if shardRecipeHash(r) != shardRecipeHash(&unset) {
			t.Errorf("direct_io %v, flags %q: the run's hash changed", fmtKey(c.key), c.args)
		}
	}
}

// fmtKey shows an optional boolean key as the recipe has it.
func fmtKey(b *bool) string {
	if b == nil {
		return "unset"
	}
	return fmt.Sprint(*b)
}

// A run with --direct-io=false, or a recipe's direct_io: false, writes the default run's
// bytes; convert validate accepts the key and refuses the flag (a run option).
func TestDirectIOOffWritesSameBytes(t *testing.T) {
	dir := t.TempDir()
	recipeText := func(out, extra string) string {
		path := filepath.Join(dir, strings.TrimSuffix(filepath.Base(out), ".mldf")+".yaml")
		y := "source: {type: images, path: " + filepath.Join(repoRoot(t), "testdata/images/photos") + ", flat: true}\n" +
			"fields: [{name: image, type: image, mode: raw}]\noutput: " + out + "\non_error: fail\n" + extra
		if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var want []byte
	for _, c := range []struct {
		name, extra string
		args        []string
	}{
		{"default", "", nil},
		{"flag", "", []string{"--direct-io=false"}},
		{"key", "direct_io: false\n", nil},
		{"flag over key", "direct_io: false\n", []string{"--direct-io"}},
	} {
		out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".mldf")
		cfg := recipeText(out, c.extra)
		if _, stderr, err := run(t, append([]string{"run", cfg, "--workers", "2", "--page-size", "64KiB"}, c.args...)...); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, stderr)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = got
		} else if !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes differ from the default run's %d", c.name, len(got), len(want))
		}
		if c.name == "key" {
			if _, stderr, err := run(t, "validate", cfg); err != nil {
				t.Errorf("validate %s: %v\n%s", c.name, err, stderr)
			}
			if _, _, err := run(t, "validate", cfg, "--direct-io=false"); err == nil || exitCode(err, false) != exitUsage {
				t.Errorf("validate --direct-io=false: %v, want a usage error", err)
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("no output")
	}
}

// The file of an append's new samples (storage.cached) goes through the page cache whatever
// direct_io says, without a change to the recipe (whose hash the report shows); any other
// output follows the key.
func TestCachedOutputIgnoresDirectIO(t *testing.T) {
	no, yes := false, true
	for _, c := range []struct {
		key              *bool
		cached, noDirect bool
	}{
		{nil, false, false},
		{&yes, false, false},
		{&no, false, true},
		{nil, true, true},
		{&yes, true, true},
		{&no, true, true},
	} {
		r := &recipe.Recipe{Output: filepath.Join(t.TempDir(), "new.mldf"), DirectIO: c.key}
		r.Defaults()
		before := shardRecipeHash(r)
		cfg, err := runner.Config(&recipe.Plan{Recipe: r}, r.Output)
		if err != nil {
			t.Fatal(err)
		}
		st := &storage{cached: c.cached}
		st.configure(context.Background(), &cfg, r.Output)
		if cfg.NoDirect != c.noDirect {
			t.Errorf("direct_io %v, cached %v: NoDirect %v, want %v", fmtKey(c.key), c.cached, cfg.NoDirect, c.noDirect)
		}
		if cfg.Sink != nil {
			t.Errorf("direct_io %v, cached %v: a sink for the local file %s", fmtKey(c.key), c.cached, r.Output)
		}
		if shardRecipeHash(r) != before || (c.key == nil) != (r.DirectIO == nil) {
			t.Errorf("direct_io %v, cached %v: the recipe changed", fmtKey(c.key), c.cached)
		}
	}
}
