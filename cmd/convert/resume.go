package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/recipe"
)

// resumeFlags are the checkpoint options of a run (docs/RESUME.md); --checkpoint-every and
// --checkpoint-bytes, when given, override the recipe's keys (runFlags.apply).
type resumeFlags struct {
	every   time.Duration
	bytes   string
	restart bool
}

// bindResumeFlags defines --checkpoint-every, --checkpoint-bytes and --restart.
func bindResumeFlags(fs *flag.FlagSet) *resumeFlags {
	f := &resumeFlags{}
	fs.DurationVar(&f.every, "checkpoint-every", pipeline.DefaultCheckpointEvery,
		"a single run checkpoints this often, so a killed run started again resumes (0 = no checkpoints, no resume)")
	checkedVar(fs, &f.bytes, "checkpoint-bytes", "SIZE", "also checkpoint after this many payload bytes (default 1GiB)", checkSize)
	fs.BoolVar(&f.restart, "restart", false, "discard the checkpoint of a killed run and start from the first sample")
	return f
}

// checkSize checks a size flag (1GiB, 512MB, 1048576).
func checkSize(s string) error {
	n, err := recipe.ParseSize(s)
	if err == nil && n <= 0 {
		err = fmt.Errorf("want a size > 0")
	}
	return err
}

// resumeOf returns the Resume of a single run (nil: checkpoints off, or a format whose writer
// does not checkpoint, said on log).
func resumeOf(f *resumeFlags, plan *recipe.Plan, st *storage, log io.Writer) *pipeline.Resume {
	r := plan.Recipe
	every := pipeline.DefaultCheckpointEvery
	if r.CheckpointEvery != "" {
		every, _ = time.ParseDuration(r.CheckpointEvery) // checked by Validate
	}
	if f == nil || every <= 0 {
		return nil
	}
	res := &pipeline.Resume{Every: every, Bytes: int64(r.CheckpointBytes), Restart: f.restart, Log: log,
		Fingerprint: pipeline.Fingerprint{Recipe: shardRecipeHash(r), Version: version + " " + gatherBuildFacts().commit, Inputs: plan.Inputs}}
	if !localFile(r.Output) {
		state, err := stateDir(r.Output)
		if err != nil {
			fmt.Fprintf(log, "convert: %s: no local state directory for its checkpoints (%v): a killed run starts over\n", r.Output, err)
			return nil
		}
		res.State, res.Reattach = state, st.reattach(r.Output)
	}
	return res
}

// stateDir returns the local path standing for an output in a bucket in its checkpoints
// (pipeline.Resume.State), made when missing: $XDG_CACHE_HOME/convert/resume/HASH/BASE
// (~/.cache when XDG_CACHE_HOME is unset; the system's temporary directory when neither
// is known), HASH the first 16 hex digits of the SHA-256 of the output's URL.
func stateDir(output string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	sum := sha256.Sum256([]byte(output))
	dir := filepath.Join(base, "convert", "resume", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	name := path.Base(output)
	if name == "" || name == "." || name == "/" || strings.ContainsAny(name, ":\\") {
		name = "output"
	}
	return filepath.Join(dir, name), nil
}
