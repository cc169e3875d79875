package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/internal/suggest"
)

// The help: the command list (usage), a command's help (convert help CMD, convert CMD
// --help), and the flag descriptions the shell completions are made from. Everything here is
// read from the command table (commands.go) and each command's own flag set.

// usage prints the command list.
func usage(w io.Writer) {
	fmt.Fprint(w, "convert turns ML datasets into one random-access file: MLDF, FFCV .beton, SCDL or MDS.\n\n"+
		"Usage: convert [-q] COMMAND [ARGUMENTS] [FLAGS]\n")
	table := commandTable()
	for _, sec := range sections() {
		fmt.Fprintf(w, "\n%s:\n", sec)
		for _, c := range table {
			if c.section == sec {
				fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
			}
		}
	}
	fmt.Fprint(w, "\nRun convert help COMMAND (or convert COMMAND --help) for its arguments and flags.\n"+
		"Recipes: docs/RECIPES.md. The command line, exit statuses and completions: docs/CLI.md.\n")
}

// cmdHelp prints the command list, or the help of the command named.
func cmdHelp(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("help", flag.ContinueOnError)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch len(pos) {
	case 0:
		usage(stdout)
		return nil
	case 1:
		c, ok := lookup(pos[0])
		if !ok {
			return unknownCommand(pos[0])
		}
		return commandHelp(stdout, c)
	}
	return usageErr("help", "help [COMMAND]")
}

// unknownCommand is the usage error for a command name not in the table, naming the nearest.
func unknownCommand(name string) error {
	hint := "; convert help lists the commands"
	if s := suggest.Closest(name, commandNames()); s != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", s)
	}
	return fmt.Errorf("%w: unknown command %s%s", errUsage, quote.Q(name), hint)
}

// commandHelp prints c's help, with the flags of the flag set its run parses.
func commandHelp(w io.Writer, c command) error {
	fs, err := commandFlags(c)
	if err != nil {
		return err
	}
	writeHelp(w, c, fs)
	return nil
}

// commandFlags returns the flag set c's run parses: asked for its help, run returns it
// before doing anything else. A command dispatch runs itself (version) has none.
func commandFlags(c command) (*flag.FlagSet, error) {
	if c.run == nil {
		return flag.NewFlagSet(c.name, flag.ContinueOnError), nil
	}
	err := c.run(context.Background(), []string{"-h"}, io.Discard, io.Discard)
	var help *helpRequest
	if !errors.As(err, &help) {
		return nil, fmt.Errorf("convert %s -h did not return its flags: %v", c.name, err) // a bug in the command
	}
	return help.fs, nil
}

// writeHelp prints c's synopsis, description and flags, grouped, with their defaults.
func writeHelp(w io.Writer, c command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: convert %s", c.name)
	if c.args != "" {
		fmt.Fprintf(w, " %s", c.args)
	}
	infos := flagInfos(c, fs)
	own := 0 // flags of the command's own, besides the global ones
	for _, f := range infos {
		if f.group != globalGroup {
			own++
		}
	}
	if own > 0 {
		fmt.Fprint(w, " [FLAGS]")
	}
	fmt.Fprintf(w, "\n\n%s.\n", upperFirst(c.summary))
	if c.about != "" {
		fmt.Fprintf(w, "\n%s\n", c.about)
	}
	group := ""
	for _, f := range infos {
		if f.group != group {
			group = f.group
			fmt.Fprintf(w, "\n%s:\n", group)
		}
		left := "      --" + f.name
		if f.short != "" {
			left = "  -" + f.short + ", --" + f.name
		}
		if f.meta != "" {
			left += " " + f.meta
		}
		desc := f.usage
		if f.def != "" {
			desc += " (default " + f.def + ")"
		}
		writeWrapped(w, left, desc)
	}
	if own > 0 {
		fmt.Fprint(w, "\nA flag may come before, between or after the arguments; -name is --name.\n")
		if c.recipe {
			fmt.Fprint(w, "Flags are named like the recipe keys: --max-resolution or --max_resolution is max_resolution.\n")
		}
	}
}

// Help layout: descriptions start in column descCol and wrap at lineWidth.
const (
	descCol   = 34
	lineWidth = 100
)

// writeWrapped prints a flag's left column and its description, wrapped.
func writeWrapped(w io.Writer, left, desc string) {
	indent := strings.Repeat(" ", descCol)
	line := left
	if len(left) >= descCol-1 {
		fmt.Fprintln(w, left)
		line = indent
	} else {
		line += strings.Repeat(" ", descCol-len(left))
	}
	n := len(line)
	start := true
	for _, word := range strings.Fields(desc) {
		if !start && n+1+len(word) > lineWidth {
			fmt.Fprintln(w, line)
			line, n, start = indent, descCol, true
		}
		if !start {
			line += " "
			n++
		}
		line += word
		n += len(word)
		start = false
	}
	fmt.Fprintln(w, line)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// flagInfo is one flag as the help and the completions show it.
type flagInfo struct {
	name    string   // the long name (one letter for a flag of its own such as -q)
	short   string   // a one-letter name of the same flag: -o for --output
	meta    string   // what its value is (FILE, N, jpeg|png); "" for a switch (a bool flag)
	usage   string   // what it does
	def     string   // its default where it says something
	choices []string // the values it accepts, when they are a list
	kind    flagKind // what the shells complete as its value
	group   string   // the help's heading
}

// flagKind says what a flag's value is, for the shells' completions.
type flagKind int

const (
	kindSwitch flagKind = iota // no value: a bool flag
	kindChoice                 // one of its choices
	kindFile                   // a file or folder name
	kindValue                  // anything else: a number, a size, a name
)

// Global flags: every command takes --help, and the commands that print progress or a
// summary take --quiet (dispatch handles it).
const (
	globalGroup = "Global flags"
	quietUsage  = "print nothing but errors (no progress, no summary); the exit status is unchanged"
	helpUsage   = "print this help"
)

// flagInfos lists c's flags as the help shows them: by c's groups in their order, then the
// flags in no group (by name, under "Flags", or "Other flags" after groups), then the global
// flags.
func flagInfos(c command, fs *flag.FlagSet) []flagInfo {
	byName := map[string]flagInfo{}
	fs.VisitAll(func(f *flag.Flag) {
		if _, isAlias := c.aliases[f.Name]; isAlias {
			return
		}
		byName[f.Name] = describeFlag(f)
	})
	for short, long := range c.aliases {
		if f, ok := byName[long]; ok {
			f.short = short
			byName[long] = f
		}
	}
	var out []flagInfo
	for _, g := range c.groups {
		for _, name := range g.flags {
			if f, ok := byName[name]; ok {
				f.group = g.title
				out = append(out, f)
				delete(byName, name)
			}
		}
	}
	rest := make([]string, 0, len(byName))
	for name := range byName {
		rest = append(rest, name)
	}
	slices.Sort(rest)
	other := "Flags"
	if len(c.groups) > 0 {
		other = "Other flags"
	}
	for _, name := range rest {
		f := byName[name]
		f.group = other
		out = append(out, f)
	}
	if c.quiet {
		out = append(out, flagInfo{name: "quiet", short: "q", usage: quietUsage, kind: kindSwitch, group: globalGroup})
	}
	if c.run != nil {
		out = append(out, flagInfo{name: "help", short: "h", usage: helpUsage, kind: kindSwitch, group: globalGroup})
	}
	return out
}

// describeFlag tells what f's value is from its type: a `NAME` in its usage, else the value's
// kind (N for an integer, its choices when they are few).
func describeFlag(f *flag.Flag) flagInfo {
	meta, usage := flag.UnquoteUsage(f)
	info := flagInfo{name: f.Name, usage: usage, kind: kindValue}
	explicit := strings.Contains(f.Usage, "`")
	switch v := f.Value.(type) {
	case *choiceFlag:
		info.choices, info.kind = v.choices, kindChoice
		if !explicit {
			meta = strings.Join(v.choices, "|")
			if len(meta) > 32 {
				meta = strings.ToUpper(f.Name)
			}
		}
	case *intFlag, *intAdapter:
		if !explicit {
			meta = "N"
		}
	case *floatFlag:
		if !explicit {
			meta = "X"
		}
	case *durationFlag:
		if !explicit {
			meta = "DURATION"
		}
	case *checkedFlag:
		if !explicit {
			meta = v.meta
		}
	default:
		switch {
		case isBoolFlag(f):
			meta, info.kind = "", kindSwitch
		case !explicit:
			meta = strings.ToUpper(f.Name)
		case meta == "FILE" || meta == "DIR":
			info.kind = kindFile
		}
	}
	info.meta = meta
	switch f.DefValue {
	case "", "0", "-1", "false", "0s":
	default:
		info.def = f.DefValue
		if f.DefValue == "true" {
			info.def = "true; --" + f.Name + "=false turns it off"
		}
	}
	return info
}
