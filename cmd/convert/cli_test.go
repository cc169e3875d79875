package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mldf/convert/recipe"
)

// The flags of every command, as its help lists them (-o and -q are other names of --output
// and --quiet). A command gets only its own flags: convert images takes no text or audio
// options, validate none that only a run uses.
var commandFlagLists = map[string][]string{
	"run": {"output", "format", "page-size", "checksums", "direct-io", "report", "rejects",
		"workers", "chunk-size", "on-error", "max-errors", "log-format", "json", "dedup", "dry-run", "abort-incomplete-older-than", "cpuprofile", "trace", "checkpoint-every", "checkpoint-bytes", "restart",
		"shard", "shards",
		"mode", "max-resolution", "jpeg-quality", "filter", "channels", "max-pixels",
		"sample-rate", "sample-type", "max-duration", "on-long",
		"tokenizer", "append-eot", "seq-len", "remainder",
		"quiet", "help"},
	"append": {"output", "format", "page-size", "checksums", "direct-io", "report", "rejects",
		"workers", "chunk-size", "on-error", "max-errors", "log-format", "json", "dedup", "dry-run", "abort-incomplete-older-than", "cpuprofile", "trace", "checkpoint-every", "checkpoint-bytes", "restart",
		"shard", "shards",
		"mode", "max-resolution", "jpeg-quality", "filter", "channels", "max-pixels",
		"sample-rate", "sample-type", "max-duration", "on-long",
		"tokenizer", "append-eot", "seq-len", "remainder",
		"quiet", "help"},
	"validate": {"output", "format", "page-size", "checksums", "report", "rejects",
		"workers", "chunk-size", "on-error", "max-errors", "log-format", "json", "dedup",
		"shard", "shards",
		"mode", "max-resolution", "jpeg-quality", "filter", "channels", "max-pixels",
		"sample-rate", "sample-type", "max-duration", "on-long",
		"tokenizer", "append-eot", "seq-len", "remainder",
		"quiet", "help"},
	"images": {"flat", "output", "format", "page-size", "checksums", "direct-io", "report", "rejects",
		"workers", "chunk-size", "on-error", "max-errors", "log-format", "json", "dedup", "dry-run", "abort-incomplete-older-than", "cpuprofile", "trace", "checkpoint-every", "checkpoint-bytes", "restart",
		"shard", "shards",
		"mode", "max-resolution", "jpeg-quality", "filter", "channels", "max-pixels",
		"quiet", "help"},
	"inspect":    {"json", "sample", "help"},
	"verify":     {"decode", "json", "require-checksums", "workers", "quiet", "help"},
	"cat":        {"field", "sample", "help"},
	"export":     {"field", "format", "key", "label", "shard-samples", "shard-size", "verify", "quiet", "help"},
	"merge":      {"check-parts", "copy", "json", "verify", "verify-parts", "quiet", "help"},
	"index":      {"contiguous", "output", "quiet", "help"},
	"storage":    {"older-than", "quiet", "help"},
	"help":       {"help"},
	"completion": {"help"},
	"version":    {"help"},
}

// helpFlag matches a flag in the left column of a help: "  -o, --output FILE", "      --flat".
var helpFlag = regexp.MustCompile(`(?m)^  (?:-([a-z]), |    )--([a-z0-9-]+)`)

// Every command's help, asked for in each of the three ways, exits 0 and lists exactly the
// command's flags, each spelled --name.
func TestHelpOfEveryCommand(t *testing.T) {
	for _, name := range commandNames() {
		if _, ok := commandFlagLists[name]; !ok {
			t.Errorf("command %s: add its flags to commandFlagLists", name)
		}
	}
	for name, want := range commandFlagLists {
		t.Run(name, func(t *testing.T) {
			if _, ok := lookup(name); !ok {
				t.Fatalf("no command %s", name)
			}
			ways := [][]string{{"help", name}, {name, "--help"}, {name, "-h"}, {name, "-help"}}
			var first string
			for _, args := range ways {
				stdout, stderr, err := run(t, args...)
				if err != nil || exitCode(err, false) != exitOK {
					t.Fatalf("convert %s: %v", strings.Join(args, " "), err)
				}
				if stderr != "" {
					t.Errorf("convert %s printed on stderr: %q", strings.Join(args, " "), stderr)
				}
				if first == "" {
					first = stdout
				} else if stdout != first {
					t.Errorf("convert %s differs from convert help %s:\n%s", strings.Join(args, " "), name, stdout)
				}
			}
			if !strings.HasPrefix(first, "Usage: convert "+name) {
				t.Errorf("help starts %q", first[:min(len(first), 60)])
			}
			var got []string
			for _, m := range helpFlag.FindAllStringSubmatch(first, -1) {
				got = append(got, m[2])
			}
			slices.Sort(got)
			w := slices.Sorted(slices.Values(want))
			if !slices.Equal(got, w) {
				t.Errorf("help lists %v\nwant %v\n%s", got, w, first)
			}
			if regexp.MustCompile(`(?m)^\s+-[a-z][a-z]`).MatchString(first) {
				t.Errorf("a flag spelled -name, not --name:\n%s", first)
			}
		})
	}
	// The converting commands' flags are grouped, with their defaults.
	stdout, _, _ := run(t, "images", "--help")
	for _, want := range []string{"\nOutput:\n", "\nImage fields:\n", "\nGlobal flags:\n", "--checksums", "(default true;", "-q, --quiet"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("images --help lacks %q", want)
		}
	}
	stdout, _, _ = run(t, "index", "--help")
	if !strings.Contains(stdout, "  -o, --output FILE") {
		t.Errorf("index --help lacks -o, --output:\n%s", stdout)
	}
	for _, args := range [][]string{nil, {"help"}, {"--help"}, {"-h"}} {
		stdout, _, err := run(t, args...)
		if err != nil || !strings.Contains(stdout, "  images      ") || !strings.Contains(stdout, "  completion  ") {
			t.Errorf("convert %v: %v\n%s", args, err, stdout)
		}
	}
}

// Command-line mistakes are usage errors (exit status 2) naming the nearest command, flag or
// subcommand; a misspelled recipe key names the nearest key and stays a recipe error (exit
// status 1, as for every invalid recipe).
func TestMistakesSuggest(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "r.yaml")
	if err := os.WriteFile(cfg, []byte("source: {type: images, path: "+dir+"}\nfeilds: [{name: image, type: image}]\noutput: "+
		filepath.Join(dir, "o.mldf")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"imgaes", "a", "b"}, `unknown command "imgaes" (did you mean images?)`, exitUsage},
		{[]string{"verfy", "a"}, `(did you mean verify?)`, exitUsage},
		{[]string{"help", "imgaes"}, `unknown command "imgaes" (did you mean images?)`, exitUsage},
		{[]string{"frobnicate"}, `unknown command "frobnicate"; convert help lists the commands`, exitUsage},
		{[]string{"images", "--max-resolutoin", "256", "a", "b"}, `unknown flag --max-resolutoin (did you mean --max-resolution?)`, exitUsage},
		{[]string{"images", "a", "b", "--max_resolutoin=256"}, `(did you mean --max-resolution?)`, exitUsage},
		{[]string{"images", "a", "b", "-jpg-quality", "90"}, `(did you mean --jpeg-quality?)`, exitUsage},
		{[]string{"images", "a", "b", "--tokenizer", "none"}, `unknown flag --tokenizer (an option of`, exitUsage},
		{[]string{"run", cfg, "--wokers", "2"}, `(did you mean --workers?)`, exitUsage},
		{[]string{"run", cfg, "--quite"}, `(did you mean --quiet?)`, exitUsage},
		{[]string{"validate", cfg, "--dry-run"}, `unknown flag --dry-run`, exitUsage},
		{[]string{"verify", "x.mldf", "--decoed"}, `(did you mean --decode?)`, exitUsage},
		{[]string{"merge", "o.mldf", "--verfy"}, `(did you mean --verify?)`, exitUsage},
		{[]string{"index", "s.tar", "-0", "x"}, `(did you mean -o?)`, exitUsage},
		{[]string{"storage", "abort-incomplet", "s3://b/k"}, `unknown subcommand "abort-incomplet" (did you mean abort-incomplete?)`, exitUsage},
		{[]string{"inspect", "x.mldf", "-q"}, `unknown flag -q`, exitUsage},
		{[]string{"-q", "cat", "x.mldf"}, `convert cat takes no --quiet`, exitUsage},
		{[]string{"run", cfg, "--quiet=maybe"}, `--quiet: want true or false`, exitUsage},
		{[]string{"--bogus"}, `unknown flag "--bogus" before the command`, exitUsage},
		{[]string{"completion", "tcsh"}, `no script for the shell "tcsh"`, exitUsage},
		{[]string{"help", "a", "b"}, `convert help [COMMAND]`, exitUsage},
		{[]string{"validate", cfg}, `line 2: unknown key "feilds" (did you mean fields?)`, exitError},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			_, _, err := run(t, c.args...)
			if code := exitCode(err, false); code != c.code {
				t.Fatalf("exit status %d (%v), want %d", code, err, c.code)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("%q does not say %q", err, c.want)
			}
			if c.code == exitError && !errors.Is(err, recipe.ErrRecipe) {
				t.Errorf("%v is not a recipe error", err)
			}
		})
	}
	// A command name far from every other is answered with the list of commands.
	_, stderr, _ := run(t, "frobnicate")
	if !strings.Contains(stderr, "Usage: convert") {
		t.Errorf("stderr %q", stderr)
	}
	_, stderr, _ = run(t, "imgaes")
	if stderr != "" {
		t.Errorf("a suggestion, and the list of commands too: %q", stderr)
	}
}

// --quiet (or -q, anywhere among the flags, or before the command) prints nothing, but the
// error and the exit status are those of a run without it.
func TestQuiet(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	writeNoiseFolder(t, data, 2, 4)
	for i, args := range [][]string{
		{"images", data, "OUT", "--mode", "png", "-q"},
		{"images", "--quiet", data, "OUT", "--mode", "png"},
		{"-q", "images", data, "OUT", "--mode", "png"},
		{"images", data, "OUT", "--mode", "png", "--quiet=true", "--workers", "1"},
	} {
		out := filepath.Join(dir, fmt.Sprintf("o%d.mldf", i))
		args[slices.Index(args, "OUT")] = out
		stdout, stderr, err := run(t, args...)
		if err != nil || stdout != "" || stderr != "" {
			t.Errorf("%v: %v, stdout %q, stderr %q", args, err, stdout, stderr)
		}
		if _, err := os.Stat(out); err != nil {
			t.Errorf("%v: %v", args, err)
		}
		for _, cmd := range [][]string{{"verify", out, "-q"}, {"export", out, out + ".d", "--format", "folder", "-q"}} {
			if stdout, stderr, err := run(t, cmd...); err != nil || stdout != "" || stderr != "" {
				t.Errorf("%v: %v, stdout %q, stderr %q", cmd, err, stdout, stderr)
			}
		}
	}
	// --quiet=false prints as without it.
	stdout, _, err := run(t, "images", data, filepath.Join(dir, "loud.mldf"), "--mode", "png", "--quiet=false")
	if err != nil || !strings.Contains(stdout, "0 samples rejected") {
		t.Errorf("--quiet=false: %v, stdout %q", err, stdout)
	}
	// Rejected samples: exit status 3 and its message, and nothing else printed.
	if err := os.WriteFile(filepath.Join(data, "class0", "bad.png"), []byte("not a png"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := run(t, "images", data, filepath.Join(dir, "rej.mldf"), "--mode", "png", "-q")
	if exitCode(err, false) != exitRejected || !strings.Contains(err.Error(), "1 sample rejected") || stdout != "" || stderr != "" {
		t.Errorf("rejects: %v, stdout %q, stderr %q", err, stdout, stderr)
	}
	// A failure: exit status 1 with its error.
	_, _, err = run(t, "verify", filepath.Join(dir, "missing.mldf"), "-q")
	if exitCode(err, false) != exitError {
		t.Errorf("verify of a missing file: %v", err)
	}
}

// takeQuiet finds --quiet among the flags by the command's own flag types: a flag's value
// that reads -q is the value, and after -- nothing is a flag.
func TestTakeQuiet(t *testing.T) {
	c, _ := lookup("images")
	for _, tc := range []struct {
		args, rest []string
		quiet      bool
	}{
		{[]string{"a", "b"}, []string{"a", "b"}, false},
		{[]string{"a", "-q", "b"}, []string{"a", "b"}, true},
		{[]string{"--quiet", "a"}, []string{"a"}, true},
		{[]string{"-quiet=false", "a"}, []string{"a"}, false},
		{[]string{"--report", "-q", "a"}, []string{"--report", "-q", "a"}, false},
		{[]string{"--report=x", "-q", "a"}, []string{"--report=x", "a"}, true},
		{[]string{"--flat", "-q", "a"}, []string{"--flat", "a"}, true},
		{[]string{"--max_resolution", "-q", "a"}, []string{"--max_resolution", "-q", "a"}, false},
		{[]string{"a", "--", "-q"}, []string{"a", "--", "-q"}, false},
	} {
		rest, quiet, err := takeQuiet(c, tc.args)
		if err != nil || quiet != tc.quiet || !slices.Equal(rest, tc.rest) {
			t.Errorf("takeQuiet(%q) = %q, %v, %v; want %q, %v", tc.args, rest, quiet, err, tc.rest, tc.quiet)
		}
	}
}

// completionScript writes convert completion SHELL to a file.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	stdout, _, err := run(t, "completion", shell)
	if err != nil {
		t.Fatalf("completion %s: %v", shell, err)
	}
	path := filepath.Join(t.TempDir(), "convert."+shell)
	if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every script names every command and every flag of every command: they are written from
// the same table as the help.
func TestCompletionCoversTheTable(t *testing.T) {
	cmds, err := completionTable()
	if err != nil {
		t.Fatal(err)
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		b, err := os.ReadFile(completionScript(t, shell))
		if err != nil {
			t.Fatal(err)
		}
		script := string(b)
		for _, c := range cmds {
			if !strings.Contains(script, c.name) {
				t.Errorf("%s: no command %s", shell, c.name)
			}
			for _, f := range c.flags {
				spelled := "--" + f.name
				if shell == "fish" {
					spelled = "-l " + f.name
				}
				if !strings.Contains(script, spelled) {
					t.Errorf("%s: no flag %s of %s", shell, spelled, c.name)
				}
			}
		}
	}
}

// The bash script completes commands, flags, the choices of a flag and subcommands, run as
// bash runs it: COMP_WORDS and COMP_CWORD set, then the completion function.
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	script := completionScript(t, "bash")
	for _, c := range []struct {
		words string // the command line; the last word is the one completed
		want  []string
	}{
		{`convert ima`, []string{"images"}},
		{`convert -q ru`, []string{"run"}},
		{`convert images --max-res`, []string{"--max-resolution"}},
		{`convert images --tok`, nil}, // images takes no text options
		{`convert run r.yaml --tok`, []string{"--tokenizer"}},
		{`convert images a b --mode ''`, []string{"jpeg", "png", "raw", "smart"}},
		{`convert images a b -mode s`, []string{"smart"}},
		{`convert images a b --mode = p`, []string{"png"}}, // --mode=p: bash splits the word at =
		{`convert images a b --workers ''`, nil},           // a number
		{`convert storage ''`, []string{"ls-incomplete", "abort-incomplete"}},
		{`convert storage --older-than 1h a`, []string{"abort-incomplete"}},
		{`convert storage --older-than = 1h a`, []string{"abort-incomplete"}},
		{`convert storage abort-incomplete ''`, nil}, // a URL
		{`convert help me`, []string{"merge"}},
		{`convert completion ''`, []string{"bash", "zsh", "fish"}},
		{`convert index -`, []string{"--contiguous", "-o", "--output", "-q", "--quiet", "-h", "--help"}},
		{`convert --v`, []string{"--version"}},
	} {
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c",
			`source "$1" && eval "COMP_WORDS=($2)" && COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) && { _convert; printf '%s\n' "${COMPREPLY[@]}"; }`,
			"bash", script, c.words)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("%s: %v\n%s", c.words, err, stderr.String())
		}
		got := strings.Fields(string(out))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: completed %q, want %q", c.words, got, c.want)
		}
	}
}

// The zsh and fish scripts parse (zsh -n, fish -n), and fish completes a command and a flag.
func TestCompletionZshFish(t *testing.T) {
	for _, shell := range []string{"zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			bin, err := exec.LookPath(shell)
			if err != nil {
				t.Skipf("%s is not installed: its script is not checked", shell)
			}
			script := completionScript(t, shell)
			if out, err := exec.Command(bin, "-n", script).CombinedOutput(); err != nil {
				t.Fatalf("%s -n: %v\n%s", shell, err, out)
			}
			if shell != "fish" {
				return
			}
			for _, c := range []struct{ line, want string }{
				{"convert ima", "images\t"},
				{"convert images --max-res", "--max-resolution\t"},
				{"convert images --mode=", "--mode=smart"},
				{"convert storage ", "abort-incomplete"},
			} {
				out, err := exec.Command(bin, "--no-config", "-c", `source $argv[1]; complete -C $argv[2]`, script, c.line).CombinedOutput()
				if err != nil || !strings.Contains(string(out), c.want) {
					t.Errorf("fish: complete -C %q: %v\n%s", c.line, err, out)
				}
			}
		})
	}
}

// The command table and the dispatch agree: every command with a run is dispatched, and its
// help is made from the flag set its run parses (asked for with -h, before any work).
func TestCommandTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range commandTable() {
		if seen[c.name] {
			t.Errorf("command %s twice", c.name)
		}
		seen[c.name] = true
		if c.summary == "" || !slices.Contains(sections(), c.section) {
			t.Errorf("command %s: summary %q, section %q", c.name, c.summary, c.section)
		}
		if c.run == nil {
			continue
		}
		if _, err := commandFlags(c); err != nil {
			t.Error(err)
		}
		for _, g := range c.groups {
			for _, f := range g.flags {
				if slices.Contains([]string{"quiet", "q", "help", "h"}, f) {
					t.Errorf("command %s: the global flag %s in group %s", c.name, f, g.title)
				}
			}
		}
	}
	if err := dispatch(context.Background(), []string{"help", "run"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	// docs/CLI.md lists every command.
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "CLI.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range commandNames() {
		if !strings.Contains(string(doc), "`convert "+name) {
			t.Errorf("docs/CLI.md does not list convert %s", name)
		}
	}
}
