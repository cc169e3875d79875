// Command convert turns ML datasets (image folders, audio trees, WebDataset tar shards, JSONL,
// Parquet, single-cell matrices), local or in object storage, into one random-access MLDF file
// (or FFCV .beton, or an SCDL archive), and inspects, verifies, merges and exports such files.
//
// The flow of a conversion (convert run RECIPE, or a one-shot form such as convert images):
//
//	recipe.Load → flags override → Defaults → Validate against the registered source types
//	(every problem, with lines) → recipe.BuildWith (source + field encoders: a plan)
//	→ runner.Run (pipeline.Run into MLDF or .beton, or the SCDL writer; class-names side file)
//	→ report JSON + summary
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// version is the tool version recorded in reports.
const version = "0.1.0"

type command struct {
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
	summary string
}

func commands() map[string]command {
	return map[string]command{
		"run":      {cmdRun, "run RECIPE.yaml [flags]: convert as a recipe says (flags override it)"},
		"validate": {cmdValidate, "validate RECIPE.yaml: check a recipe and print the resolved plan"},
		"images":   {cmdImages, "images SRC_DIR OUT.mldf [flags]: convert an ImageFolder (root/<class>/<image>)"},
		"inspect":  {cmdInspect, "inspect FILE [--sample N]: header, fields, sizes (also .taridx and .beton)"},
		"verify":   {cmdVerify, "verify FILE [--decode] [--require-checksums]: check every structural invariant, field rule and checksum"},
		"index":    {cmdIndex, "index SHARD.tar [...] [-o FOLD.taridx]: write a TARIDX index"},
		"merge":    {cmdMerge, "merge OUT.mldf PARTS...: join the parts of a sharded run"},
		"append":   {cmdAppend, "append BASE.mldf RECIPE.yaml: add the samples a recipe reads to BASE, atomically"},
		"cat":      {cmdCat, "cat FILE --sample N --field F: write one payload to stdout"},
		"storage":  {cmdStorage, "storage ls-incomplete URL | abort-incomplete URL [--older-than D]: list or abort the uploads killed runs left"},
		"export":   {cmdExport, "export FILE DIR --format folder|webdataset|parquet: write samples back out"},
	}
}

// Exit statuses (README, "Exit status").
const (
	exitOK          = 0   // done; with rejected samples only where max_errors accepts them
	exitError       = 1   // failed: nothing new at the output path
	exitUsage       = 2   // a command-line mistake
	exitRejected    = 3   // done, output written, but samples were rejected and max_errors is unset
	exitInterrupted = 130 // SIGINT or SIGTERM: stopped, nothing new at the output path
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	interrupted := ctx.Err() != nil
	stop()
	code := exitCode(err, interrupted)
	if err != nil {
		printError(os.Stderr, os.Args[1:], err, code) // text, or JSON with --json or --log-format json
	}
	os.Exit(code)
}

// exitCode maps dispatch's error to the exit status.
func exitCode(err error, interrupted bool) int {
	var rej *rejectedError
	switch {
	case err == nil:
		return exitOK
	case interrupted:
		return exitInterrupted
	case errors.As(err, &rej):
		return exitRejected
	case errors.Is(err, errUsage):
		return exitUsage
	}
	return exitError
}

// rejectedError ends a run that completed, its output written, with samples rejected while
// the recipe did not say rejects are acceptable (max_errors unset). main prints it last.
type rejectedError struct {
	n       int64
	rejects string
}

func (e *rejectedError) Error() string {
	return fmt.Sprintf("%s rejected (listed in %s); the output holds the other samples. "+
		"Exit status %d: set max_errors (e.g. --max-errors %d, or a percentage) to accept rejected samples",
		plural(e.n, "sample"), e.rejects, exitRejected, e.n)
}

// plural writes "1 sample", "2 samples".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// errUsage marks a command-line mistake; dispatch prints the usage with it.
var errUsage = errors.New("usage")

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout, cmds)
		return nil
	}
	if args[0] == "version" || args[0] == "--version" {
		fmt.Fprintln(stdout, "convert", version)
		return nil
	}
	c, ok := cmds[args[0]]
	if !ok {
		usage(stderr, cmds)
		return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	err := c.run(ctx, args[1:], stdout, stderr)
	var help *helpRequest
	if errors.As(err, &help) {
		// -h: the command's synopsis and every flag with its default, on stdout.
		fmt.Fprintf(stdout, "convert %s\n\nFlags (named like the recipe keys, with '-' for '_'):\n", c.summary)
		help.fs.SetOutput(stdout)
		help.fs.PrintDefaults()
		return nil
	}
	return err
}

func usage(w io.Writer, cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "convert turns ML datasets into one random-access MLDF file.\n\nUsage:")
	for _, n := range names {
		fmt.Fprintf(w, "  convert %s\n", cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun convert COMMAND -h for a command's flags. Recipes: docs/RECIPES.md.")
}

func usageErr(_, synopsis string) error {
	return fmt.Errorf("%w: convert %s", errUsage, strings.TrimSpace(synopsis))
}
