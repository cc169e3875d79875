package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/mldf/convert/internal/appendfile"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/recipe"
)

// errDeltaDone: the new samples of a resumed append were converted by the killed append (its
// record says so, and their file is there): the append goes on from them.
var errDeltaDone = errors.New("append: the new samples are converted already")

// appendWork is the working folder of an append and, when it checkpoints, its record
// (appendfile.State): a killed append started again with the same base and recipe resumes
// the conversion of the new samples from its checkpoint (the run's own resume, in the
// folder), skips it when it had finished, and builds the result again (docs/RESUME.md).
type appendWork struct {
	work      *appendfile.WorkDir
	resumable bool
	base      string
	state     appendfile.State
	converted bool // the new samples are converted (new.mldf is complete)
	stderr    io.Writer
}

// appendResumable reports whether an append checkpoints: --checkpoint-every (or the
// recipe's checkpoint_every) is not 0, and it is not a dry run.
func appendResumable(r *recipe.Recipe, rf *runFlags) bool {
	if rf.resume == nil || rf.dryRun {
		return false
	}
	every := pipeline.DefaultCheckpointEvery
	if r.CheckpointEvery != "" {
		if d, err := time.ParseDuration(r.CheckpointEvery); err == nil {
			every = d
		}
	}
	rf.fs.Visit(func(f *flag.Flag) {
		if f.Name == "checkpoint-every" {
			every = rf.resume.every
		}
	})
	return every > 0
}

// openAppendWork opens the working folder of an append to base (of Fingerprint fp) in dir
// ("": the system's temporary folder). A resumable append's folder has a fixed name (in the
// local state directory of docs/RESUME.md for a base in a bucket) and is checked against its
// record: a base that changed since the killed append starts it over, saying so. It returns
// nil, nil when the killed append had published its result already (nothing is left to do).
func openAppendWork(ctx context.Context, store *objstore.Client, base, fp, dir string, r *recipe.Recipe, rf *runFlags, stderr io.Writer) (*appendWork, error) {
	aw := &appendWork{base: base, stderr: stderr}
	resumable := appendResumable(r, rf)
	if resumable && !localFile(base) {
		st, err := stateDir(base)
		if err != nil {
			fmt.Fprintf(stderr, "convert: %s: no local state directory for the append's checkpoints (%v): a killed append starts over\n", base, err)
			resumable = false
		} else {
			dir = filepath.Dir(st)
		}
	}
	if !resumable {
		work, err := appendfile.NewWorkDir(dir, base)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errAppend, err)
		}
		aw.work = work
		return aw, nil
	}
	work, err := appendfile.OpenResumable(dir, base, rf.resume.restart)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errAppend, err)
	}
	aw.work, aw.resumable = work, true
	old, ok := work.LoadState()
	switch {
	case ok && old.Base == base && old.Result == fp:
		fmt.Fprintf(stderr, "convert: %s: the killed append to it had finished (the base is its result): nothing more to append\n", base)
		work.Remove()
		return nil, nil
	case ok && (old.Base != base || old.BaseFingerprint != fp):
		fmt.Fprintf(stderr, "convert: %s: starting the append over: the base changed since the killed append\n", base)
		if err := work.Clear(); err != nil {
			work.Release()
			return nil, err
		}
		ok = false
	}
	if ok {
		aw.state = old
		aw.state.Result = "" // killed before the publication: the base is as it was
		aw.abortUpload(ctx, store)
	} else {
		aw.state = appendfile.State{Base: base, BaseFingerprint: fp}
	}
	if err := work.SaveState(aw.state); err != nil {
		work.Release()
		return nil, err
	}
	return aw, nil
}

// abortUpload aborts the multipart upload of a killed append's result in a bucket: the
// result is built again in a new upload (the server-side copy of the base's data region
// is cheap), and the old one would otherwise wait for --abort-incomplete-older-than.
func (aw *appendWork) abortUpload(ctx context.Context, store *objstore.Client) {
	id := aw.state.Upload
	if id == "" {
		return
	}
	aw.state.Upload = ""
	u, _, err := store.ResumeUpload(ctx, aw.base, id)
	if err == nil {
		err = u.Abort(ctx)
	}
	if err != nil && !errors.Is(err, objstore.ErrNotFound) {
		fmt.Fprintf(aw.stderr, "convert: %s: could not abort the killed append's upload %s: %v\n", aw.base, id, err)
	}
}

// planned is the runFlags.planned hook of the conversion of the new samples into out: it
// records the conversion's identity (its recipe, inputs and the tool) before it runs, and
// returns errDeltaDone when the record holds that same identity and out is there: out appears
// only when its run finished (the pipeline's rename), so the killed append had converted them.
func (aw *appendWork) planned(out string) func(*recipe.Plan) error {
	if !aw.resumable {
		return nil
	}
	return func(plan *recipe.Plan) error {
		in, err := sliceInputs(plan.Inputs, 0, math.MaxInt)
		if err != nil {
			return err
		}
		id := fmt.Sprintf("recipe %s, tool %s %s, inputs %d:%d:%s", shardRecipeHash(plan.Recipe),
			version, gatherBuildFacts().commit, in.Count, in.Bytes, in.SHA256)
		_, statErr := os.Stat(out)
		if aw.state.Delta == id && statErr == nil {
			fmt.Fprintf(aw.stderr, "convert: %s: the killed append had converted the new samples: appending them\n", aw.base)
			aw.converted = true
			return errDeltaDone
		}
		if aw.state.Delta != "" && aw.state.Delta != id {
			fmt.Fprintf(aw.stderr, "convert: %s: converting the new samples again: the recipe, its inputs or the tool changed since the killed append\n", aw.base)
		}
		if err := os.Remove(out); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %w", errAppend, err)
		}
		aw.state.Delta, aw.state.Rejected = id, 0
		return aw.work.SaveState(aw.state)
	}
}

// deltaDone records how many samples the conversion of the new samples rejected (rej), for
// the exit status of a restart that does not convert them again.
func (aw *appendWork) deltaDone(rej *rejectedError) error {
	aw.converted = true
	if !aw.resumable || rej == nil {
		return nil
	}
	aw.state.Rejected = rej.n
	return aw.work.SaveState(aw.state)
}

// options are the options of the append proper: a resumable append records its upload and,
// just before the publication, the result's fingerprint.
func (aw *appendWork) options(store *objstore.Client) appendfile.Options {
	opt := appendfile.Options{Store: store}
	if aw.resumable {
		opt.Started = func(id string) error {
			aw.state.Upload = id
			return aw.work.SaveState(aw.state)
		}
		opt.Committing = func(fp string) error {
			aw.state.Result = fp
			return aw.work.SaveState(aw.state)
		}
	}
	return opt
}

// close removes the working folder, but keeps a resumable append's for the next run when it
// was interrupted (ctx) or failed after converting the new samples for another reason than
// the files themselves (a full disk, a bucket that failed).
func (aw *appendWork) close(ctx context.Context, err error) {
	keep := aw.resumable && err != nil && (ctx.Err() != nil ||
		aw.converted && !errors.Is(err, appendfile.ErrIncompatible) && !errors.Is(err, appendfile.ErrCorrupt))
	if keep {
		aw.work.Release()
		return
	}
	aw.work.Remove()
	if aw.resumable && !localFile(aw.base) {
		os.Remove(filepath.Dir(aw.work.Path())) // the state directory's folder of the URL, when empty
	}
}
