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
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/internal/suggest"
)

// version is the tool version recorded in reports.
const version = "0.1.0"

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

// dispatch runs the command args name (the command table, commands.go) and prints the help
// it asks for. Flags before the command: -q (--quiet), -h (--help), --version.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	quiet := false
	for len(args) > 0 && isQuietFlag(args[0]) { // convert -q COMMAND ...
		quiet, args = true, args[1:]
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		usage(stdout)
		return nil
	}
	if args[0] == "--version" {
		args = append([]string{"version"}, args[1:]...)
	}
	c, ok := lookup(args[0])
	if !ok || c.run == nil {
		if strings.HasPrefix(args[0], "-") {
			return fmt.Errorf("%w: unknown flag %s before the command (there: -q, --help, --version); convert help lists the commands", errUsage, quote.Q(args[0]))
		}
		if suggest.Closest(args[0], commandNames()) == "" {
			usage(stderr) // no near name: the list of commands
		}
		return unknownCommand(args[0])
	}
	args = args[1:]
	if c.quiet {
		var q bool
		var err error
		if args, q, err = takeQuiet(c, args); err != nil {
			return err
		}
		quiet = quiet || q
	} else if quiet {
		return fmt.Errorf("%w: convert %s takes no --quiet: what it prints is its output", errUsage, c.name)
	}
	out, errOut := stdout, stderr
	if quiet { // errors are returned, and main prints them
		out, errOut = io.Discard, io.Discard
	}
	err := c.run(ctx, args, out, errOut)
	var help *helpRequest
	if errors.As(err, &help) {
		writeHelp(stdout, c, help.fs)
		return nil
	}
	var fe *flagError
	if errors.As(err, &fe) && c.quiet {
		fe.known = append(fe.known, "quiet")
	}
	return err
}

// isQuietFlag reports whether arg is --quiet or -q (the flag package's spellings).
func isQuietFlag(arg string) bool {
	switch arg {
	case "-q", "--q", "-quiet", "--quiet":
		return true
	}
	return false
}

// takeQuiet removes --quiet (or -q, --quiet=BOOL) from the arguments of c, a command that
// takes it, wherever it is among the flags: the values of c's other flags are skipped by
// their type, so --report -q keeps -q as the report's name.
func takeQuiet(c command, args []string) (rest []string, quiet bool, err error) {
	fs, err := commandFlags(c)
	if err != nil {
		return nil, false, err
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			rest = append(rest, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if name == "q" || name == "quiet" {
			quiet = true
			if hasVal {
				if quiet, err = strconv.ParseBool(val); err != nil {
					return nil, false, fmt.Errorf("%w: %s: invalid value %s for flag --quiet: want true or false", errUsage, c.name, quote.Q(val))
				}
			}
			continue
		}
		rest = append(rest, a)
		f := fs.Lookup(strings.ReplaceAll(name, "_", "-"))
		if f != nil && !hasVal && !isBoolFlag(f) && i+1 < len(args) {
			rest = append(rest, args[i+1])
			i++
		}
	}
	return rest, quiet, nil
}

// isBoolFlag reports whether f is a switch (given without a value).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func usageErr(_, synopsis string) error {
	return fmt.Errorf("%w: convert %s", errUsage, strings.TrimSpace(synopsis))
}
