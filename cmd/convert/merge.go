package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/jsonout"
	"github.com/mldf/convert/internal/outpath"
	"github.com/mldf/convert/merge"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/recipe"
	"github.com/mldf/convert/runner"
)

// cmdMerge joins the parts of a sharded run: convert merge OUT.mldf [PARTS...], or
// convert merge RECIPE.yaml to merge the parts of the recipe's output.
func cmdMerge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	verifyParts := fs.Bool("verify-parts", false, "verify every part fully (every structural and field rule) before merging")
	checkParts := fs.Bool("check-parts", true, "check every payload's CRC-32C while copying (=false: trust the parts and copy with copy_file_range, unread)")
	verifyOut := fs.Bool("verify", false, "verify the merged file (every rule and checksum) after writing it")
	copyBy := new(string)
	*copyBy = "auto"
	choiceVar(fs, copyBy, "copy", "data copy: auto (copy_file_range where the kernel allows) | readwrite", "auto", "readwrite", "read-write")
	asJSON := fs.Bool("json", false, "print the merge report as JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 {
		return usageErr("merge", "merge OUT.mldf [PARTS...] | merge RECIPE.yaml [--check-parts=false] [--verify-parts] [--verify] [--copy auto|readwrite]")
	}
	opt := merge.Options{VerifyParts: *verifyParts, TrustParts: !*checkParts}
	switch *copyBy {
	case "auto":
	case "readwrite", "read-write":
		opt.Copy = merge.CopyReadWrite
	}
	out, parts := pos[0], pos[1:]
	recipePath := ""                  // merge RECIPE.yaml reads the recipe
	reportPath, rejectsPath := "", "" // the merged output's side files; default beside it
	if ext := strings.ToLower(filepath.Ext(out)); ext == ".yaml" || ext == ".yml" {
		if len(parts) > 0 {
			return usageErr("merge", "merge RECIPE.yaml (the parts follow from the recipe's output)")
		}
		r, err := loadRecipe(out)
		if err != nil {
			return err
		}
		r.Defaults()
		if err := r.Validate(); err != nil { // keys and types are checked here, with the rest
			return err
		}
		recipePath = pos[0]
		out, reportPath, rejectsPath = r.Output, r.Report, r.Rejects
	}
	if reportPath == "" {
		reportPath = out + ".report.json"
	}
	if rejectsPath == "" {
		rejectsPath = out + ".rejects.jsonl"
	}
	// Without part checksums: see objstore.WithoutPartChecksums (server-side copies).
	st := &storage{client: objstore.New(objstore.WithoutPartChecksums())}
	defer st.Close()
	opt.Store = st.client
	if !localFile(out) {
		// In a bucket the data regions are copied server-side, unread: checking their
		// CRC-32C would pull every byte through this machine (verify the result instead).
		explicit := false
		fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "check-parts" })
		opt.TrustParts = opt.TrustParts || !explicit
		if *verifyOut {
			return fmt.Errorf("%w: merge --verify reads a local file; run convert verify %s after the merge", errUsage, out)
		}
	}
	if len(parts) == 0 {
		if parts, err = merge.FindObjectParts(ctx, st.client, out); err != nil {
			return err
		}
	}
	if err := checkMergeOutputs(out, reportPath, rejectsPath, parts); err != nil {
		return err
	}
	if recipePath != "" {
		if err := checkFileOutput(out, "recipe", recipePath); err != nil {
			return err
		}
	}
	classes, err := runner.PartClasses(ctx, st.client, parts) // class-label names beside the parts (parquet)
	if err != nil {
		return err
	}
	rep, err := merge.MergeWith(ctx, out, parts, opt)
	if err != nil {
		return err
	}
	if classes != nil {
		if err := runner.WriteClasses(ctx, st.client, out+recipe.ClassesSuffix, classes); err != nil {
			return err
		}
	}
	// The side files: the parts' rejects joined, then the parts' reports summed (the order a
	// run publishes its files in).
	withRejects, err := writeMergedRejects(ctx, st, parts, rejectsPath)
	if err != nil {
		return fmt.Errorf("merged rejects %s: %w", rejectsPath, err)
	}
	sum, err := mergedReport(ctx, st, parts, rep)
	switch {
	case errors.Is(err, errNoPartReport):
		fmt.Fprintf(stderr, "note: no merged report written: %v\n", err)
		reportPath = ""
	case err != nil:
		return err
	default:
		if err := writeFileAtomic(ctx, st, reportPath, sum); err != nil {
			return fmt.Errorf("merged report: %w", err)
		}
	}
	verified := ""
	if *verifyOut {
		if _, err := mldf.Verify(out); err != nil {
			return fmt.Errorf("merged file %s does not verify: %w", out, err)
		}
		verified = "; verified"
	}
	if *asJSON {
		mj := mergeJSON(rep, verified != "")
		mj.Report, mj.NumRejected = reportPath, sum.NumRejected
		if withRejects > 0 {
			mj.Rejects = rejectsPath
		}
		return writeJSON(stdout, mj)
	}
	secs := max(rep.Elapsed.Seconds(), 1e-9)
	fmt.Fprintf(stdout, "merged %d parts into %s: %d samples, %d payloads, %.1f MB (data %.1f MB by %s) in %s, %.2f GB/s%s\n",
		rep.Parts, rep.Output, rep.Samples, rep.Entries, float64(rep.Size)/1e6, float64(rep.DataBytes)/1e6,
		rep.CopyMethodName(), rep.Elapsed.Round(time.Millisecond), float64(rep.Size)/1e9/secs, verified)
	if withRejects > 0 {
		fmt.Fprintf(stdout, "rejected samples of %s: listed in %s\n", plural(int64(withRejects), "part"), rejectsPath)
	}
	if reportPath != "" {
		fmt.Fprintf(stdout, "report: %s\n", reportPath)
	}
	return nil
}

// checkMergeOutputs refuses, before any work, a merge whose outputs (the merged file, its
// report and rejects log) are not new names or regular files, are one another, or are one of
// the parts.
func checkMergeOutputs(out, report, rejects string, parts []string) error {
	var outs outpath.Set
	for _, o := range [][2]string{{"output", out}, {"report", report}, {"rejects", rejects}} {
		if err := outs.Add(o[0], o[1]); err != nil {
			return err
		}
	}
	for _, p := range parts {
		if err := outs.Check("part", p); err != nil {
			return err
		}
	}
	return nil
}

// mergeReport is what merge --json prints (docs/schema/merge.schema.json).
type mergeReport struct {
	jsonout.Head
	Output         string  `json:"output"`
	NumParts       int     `json:"num_parts"`
	NumSamples     int64   `json:"num_samples"`
	NumPayloads    int64   `json:"num_payloads"`
	FileSize       int64   `json:"file_size"`
	DataBytes      int64   `json:"data_bytes"`
	CopyMethod     string  `json:"copy_method"`
	Checksum       string  `json:"checksum"`
	RecipeSHA256   string  `json:"recipe_sha256"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	Verified       bool    `json:"verified"`
	NumRejected    int64   `json:"num_rejected"`
	Rejects        string  `json:"rejects,omitempty"` // the merged rejects log, when a part rejected samples
	Report         string  `json:"report,omitempty"`  // the merged report
	Version        string  `json:"version"`
}

func mergeJSON(r merge.Report, verified bool) mergeReport {
	return mergeReport{Head: jsonout.NewHead(jsonout.KindMerge), Output: r.Output, NumParts: r.Parts, NumSamples: r.Samples,
		NumPayloads: r.Entries, FileSize: r.Size, DataBytes: r.DataBytes, CopyMethod: r.CopyMethodName(),
		Checksum: jsonout.Hex64(r.Checksum), RecipeSHA256: r.RecipeSHA256, ElapsedSeconds: r.Elapsed.Seconds(),
		Verified: verified, Version: version}
}
