package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/appendfile"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/recipe"
)

// errAppend: an append that cannot start (the base is missing, not local, not MLDF).
var errAppend = errors.New("append")

// cmdAppend adds the samples a recipe reads to an existing MLDF file (docs/APPEND.md).
func cmdAppend(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("append", flag.ContinueOnError)
	rf, ff := bindRunFlags(fs, true), bindFieldFlags(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageErr("append", "append BASE.mldf RECIPE.yaml [--workers N] ...")
	}
	r, err := loadRecipe(pos[1])
	if err != nil {
		return err
	}
	return appendRecipe(ctx, pos[0], r, rf, ff, stdout, stderr)
}

// appendRecipe runs r into a temporary file beside base, then appends that file's samples to
// base (internal/appendfile): base is replaced by one rename when the whole append succeeds,
// and is left as it was otherwise. A base that does not exist yet is written by a plain run.
// The recipe's page size defaults to base's; its report and rejects default to
// BASE.report.json and BASE.rejects.jsonl. With checkpoints (the default), a killed append
// started again continues where it stopped (appendWork).
func appendRecipe(ctx context.Context, base string, r *recipe.Recipe, rf *runFlags, ff *fieldFlags, stdout, stderr io.Writer) (err error) {
	base = plainPath(base)
	local := localFile(base)
	// Without part checksums: see objstore.WithoutPartChecksums (server-side copies).
	store := objstore.New(objstore.WithoutPartChecksums())
	defer store.Close()
	if _, err := store.Stat(ctx, base); errors.Is(err, objstore.ErrNotFound) {
		// Nothing to append to yet (the first night of a nightly append): a plain run
		// writes the base.
		r.Mode, r.Base, r.Output = "", "", base
		return convertRecipe(ctx, r, rf, ff, stdout, stderr)
	}
	obj, err := store.OpenReaderAt(ctx, base)
	if err != nil {
		return fmt.Errorf("%w: base: %w", errAppend, err)
	}
	fp, err := appendfile.FingerprintAt(obj, obj.Size())
	if err != nil {
		obj.Close()
		return fmt.Errorf("%w: base %s: %w", errAppend, base, err)
	}
	rd, err := mldf.OpenReaderAt(base, struct{ io.ReaderAt }{obj}, obj.Size())
	obj.Close()
	if err != nil {
		return fmt.Errorf("%w: base: %w", errAppend, err)
	}
	page := rd.Header().PageSize
	rf.seed, err = seedAppend(ctx, r, rf, rd, base)
	rd.Close()
	if err != nil {
		return err
	}
	defer rf.seed.close()
	if r.PageSize == 0 {
		r.PageSize = recipe.Size(page)
	}
	if r.Report == "" {
		r.Report = base + ".report.json"
	}
	if r.Rejects == "" {
		r.Rejects = base + ".rejects.jsonl"
	}
	tmpIn := filepath.Dir(base)
	if !local {
		tmpIn = "" // the new samples' file is local: the system's temporary folder
	}
	src := r.File()
	if src == "" {
		src = "(flags)"
	}
	aw, err := openAppendWork(ctx, store, base, fp, tmpIn, r, rf, stderr)
	if err != nil || aw == nil {
		return err
	}
	defer func() { aw.close(ctx, err) }()
	r.Mode, r.Base, r.Output = "", "", filepath.Join(aw.work.Path(), "new.mldf")
	// The new samples' file is read right back (appended to the base): written through the
	// page cache, it is still there.
	rf.planned, rf.cached = aw.planned(r.Output), true
	err = convertRecipe(ctx, r, rf, ff, stdout, stderr)
	rf.planned, rf.cached = nil, false
	var rej *rejectedError
	switch {
	case errors.Is(err, errDeltaDone):
		err = rejectsAccepted(r, aw.state.Rejected)
	case err != nil && !errors.As(err, &rej):
		return err
	case rf.dryRun:
		return err
	default:
		if err := aw.deltaDone(rej); err != nil {
			return err
		}
	}
	rep, aerr := appendfile.AppendOpts(ctx, base, r.Output, base, aw.options(store))
	if errors.Is(aerr, appendfile.ErrIncompatible) {
		return fmt.Errorf("%w (%s holds the samples of recipe %s, run with the recipe's options)", aerr, r.Output, src)
	}
	if aerr != nil {
		return aerr
	}
	fmt.Fprintf(stdout, "appended %d samples to %s: %d samples (ids 0..%d unchanged), %d bytes; cloned %d bytes (%d by copy_file_range, %d server-side) in %s\n",
		rep.Added, base, rep.BaseSamples+rep.Added, rep.BaseSamples-1, rep.Size, rep.Cloned, rep.RangeCopied, rep.ServerCopied, rep.CloneTime.Round(1e6))
	return err
}
