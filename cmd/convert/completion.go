package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/mldf/convert/internal/quote"
)

// Shell completion scripts for bash, zsh and fish, written from the command table and each
// command's own flag set (the same flagInfos the help prints), so a new command or flag is
// completed without editing anything here. The scripts are static: completing never runs
// the program.

// cmdCompletion prints the completion script of the shell named.
func cmdCompletion(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("completion", flag.ContinueOnError)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("completion", "completion bash|zsh|fish")
	}
	cmds, err := completionTable()
	if err != nil {
		return err
	}
	switch pos[0] {
	case "bash":
		return writeBash(stdout, cmds)
	case "zsh":
		return writeZsh(stdout, cmds)
	case "fish":
		return writeFish(stdout, cmds)
	}
	return fmt.Errorf("%w: completion: no script for the shell %s: bash, zsh or fish", errUsage, quote.Q(pos[0]))
}

// compCommand is a command as the completions see it.
type compCommand struct {
	name, summary string
	flags         []flagInfo
	words         []string // what its first argument may be; none: file names
	noFiles       bool     // its arguments are never file names
}

// completionTable lists every command with its flags.
func completionTable() ([]compCommand, error) {
	var out []compCommand
	for _, c := range commandTable() {
		fs, err := commandFlags(c)
		if err != nil {
			return nil, err
		}
		cc := compCommand{name: c.name, summary: c.summary, flags: flagInfos(c, fs), words: c.words, noFiles: c.noFiles}
		if c.name == "help" {
			cc.words = commandNames()
		}
		out = append(out, cc)
	}
	return out, nil
}

// topFlags are the flags convert takes before a command.
func topFlags() []flagInfo {
	return []flagInfo{
		{name: "quiet", short: "q", usage: quietUsage, kind: kindSwitch},
		{name: "help", short: "h", usage: "print the list of commands", kind: kindSwitch},
		{name: "version", usage: "print the version", kind: kindSwitch},
	}
}

// spellings lists a flag's names as typed: -q --quiet.
func spellings(f flagInfo) []string {
	var s []string
	if f.short != "" {
		s = append(s, "-"+f.short)
	}
	return append(s, dashed(f.name))
}

// describe shortens a flag's or command's description to a phrase that needs no escaping
// in any of the shells' quoted strings but for the single quote.
func describe(s string) string {
	if i := strings.Index(s, "; "); i > 0 {
		s = s[:i]
		if i := strings.LastIndex(s, " ("); i > 0 && strings.Count(s, "(") > strings.Count(s, ")") {
			s = s[:i] // the cut was inside a parenthesis
		}
	}
	s = strings.Map(func(r rune) rune {
		switch r {
		case '[', '{':
			return '('
		case ']', '}':
			return ')'
		case ':':
			return ' '
		case '\\', '`', '$', '"', '\n', '\t':
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		s = s[:80]
		if i := strings.LastIndexByte(s, ' '); i > 40 {
			s = s[:i]
		}
		s = strings.TrimRight(s, " ,(") + "..."
	}
	return s
}

// shellWord quotes s in single quotes for bash and zsh.
func shellWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// fishWord quotes s in single quotes for fish.
func fishWord(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// writeBash writes the bash script: a completion function with, per command, its flags,
// the flags that take a value, the choices of each choice flag and its first words.
func writeBash(w io.Writer, cmds []compCommand) error {
	var b strings.Builder
	b.WriteString(`# bash completion for convert, written by "convert completion bash" from its command table.
# Load it in a shell:  source <(convert completion bash)
# or for every shell:  convert completion bash > ~/.local/share/bash-completion/completions/convert

# _convert_flag spells a flag as the table does: -name and --name are the same flag, and so
# are --max_resolution and --max-resolution.
_convert_flag() {
    local f=${1%%=*}
    f=${f//_/-}
    if [[ $f == -[!-]?* ]]; then f=-$f; fi
    printf '%s' "$f"
}

_convert() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev= cmd= icmd=0 i w
    if (( COMP_CWORD >= 2 )) && [[ ${COMP_WORDS[COMP_CWORD-1]} == "=" ]]; then
        prev=${COMP_WORDS[COMP_CWORD-2]} # --flag=value: bash splits the word at the =
        [[ $cur == "=" ]] && cur=
    elif (( COMP_CWORD >= 1 )); then
        prev=${COMP_WORDS[COMP_CWORD-1]}
    fi
    for (( i = 1; i < COMP_CWORD; i++ )); do
        w=${COMP_WORDS[i]}
        if [[ $w != -* ]]; then
            cmd=$w icmd=$i
            break
        fi
    done
    local flags= vflags= words=
    case $cmd in
`)
	var top []string
	for _, f := range topFlags() {
		top = append(top, spellings(f)...)
	}
	var names []string
	for _, c := range cmds {
		names = append(names, c.name)
	}
	fmt.Fprintf(&b, "        '') flags=%s words=%s ;;\n", shellWord(strings.Join(top, " ")), shellWord(strings.Join(names, " ")))
	for _, c := range cmds {
		var all, valued []string
		for _, f := range c.flags {
			all = append(all, spellings(f)...)
			if f.kind != kindSwitch {
				valued = append(valued, spellings(f)...)
			}
		}
		fmt.Fprintf(&b, "        %s) flags=%s vflags=%s words=%s ;;\n", shellWord(c.name), shellWord(strings.Join(all, " ")),
			shellWord(" "+strings.Join(valued, " ")+" "), shellWord(strings.Join(c.words, " ")))
	}
	b.WriteString(`        *) return ;;
    esac
    local p
    p=$(_convert_flag "$prev")
    if [[ -n $cmd && $prev == -* && $vflags == *" $p "* ]]; then
        case "$cmd $p" in
`)
	for _, c := range cmds {
		for _, f := range c.flags {
			if f.kind != kindChoice {
				continue
			}
			var pats []string
			for _, s := range spellings(f) {
				pats = append(pats, shellWord(c.name+" "+s))
			}
			fmt.Fprintf(&b, "            %s) COMPREPLY=($(compgen -W %s -- \"$cur\")) ;;\n", strings.Join(pats, "|"), shellWord(strings.Join(f.choices, " ")))
		}
	}
	b.WriteString(`            *) COMPREPLY=() ;; # a file name (complete -o default) or a number
        esac
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
        return
    fi
    if [[ -n $words ]]; then
        local npos=0 skip=0
        if [[ -n $cmd ]]; then
            for (( i = icmd + 1; i < COMP_CWORD; i++ )); do
                w=${COMP_WORDS[i]}
                if [[ $w == "=" ]]; then skip=1; continue; fi # --flag=value, split at the =
                if (( skip )); then skip=0; continue; fi
                if [[ $w == -* ]]; then
                    p=$(_convert_flag "$w")
                    if [[ $w != *=* && $vflags == *" $p "* ]]; then skip=1; fi
                elif [[ $w != "=" ]]; then
                    npos=$((npos + 1))
                fi
            done
        fi
        if (( npos == 0 )); then
            COMPREPLY=($(compgen -W "$words" -- "$cur"))
            return
        fi
    fi
    COMPREPLY=() # file names: complete -o default
}

complete -o default -F _convert convert
`)
	_, err := io.WriteString(w, b.String())
	return err
}

// zshSpecs returns the _arguments specs of flags.
func zshSpecs(flags []flagInfo) []string {
	var specs []string
	for _, f := range flags {
		desc := "[" + describe(f.usage) + "]"
		arg := ""
		switch f.kind {
		case kindChoice:
			arg = ":" + f.name + ":(" + strings.Join(f.choices, " ") + ")"
		case kindFile:
			arg = ":" + f.name + ":_files"
		case kindValue:
			arg = ":" + f.name + ": "
		}
		excl := ""
		if f.short != "" {
			excl = "(-" + f.short + " --" + f.name + ")"
		}
		if f.name == "help" {
			excl = "(- *)"
		}
		for _, s := range spellings(f) {
			name := s
			if f.kind != kindSwitch && strings.HasPrefix(s, "--") {
				name += "=" // --name=VALUE or --name VALUE
			}
			specs = append(specs, shellWord(excl+name+desc+arg))
		}
	}
	return specs
}

// writeZsh writes the zsh script: one _arguments call per command.
func writeZsh(w io.Writer, cmds []compCommand) error {
	var b strings.Builder
	b.WriteString(`#compdef convert
# zsh completion for convert, written by "convert completion zsh" from its command table.
# Install: convert completion zsh > "${fpath[1]}/_convert" (a directory of $fpath), then
# restart zsh; or, after compinit, in one shell: source <(convert completion zsh)

_convert() {
    local -a commands
    commands=(
`)
	for _, c := range cmds {
		fmt.Fprintf(&b, "        %s\n", shellWord(c.name+":"+describe(c.summary)))
	}
	b.WriteString("    )\n    local curcontext=$curcontext state line ret=1\n    _arguments -C \\\n")
	for _, s := range zshSpecs(topFlags()) {
		fmt.Fprintf(&b, "        %s \\\n", s)
	}
	b.WriteString(`        '1: :->command' \
        '*:: :->argument' && ret=0
    case $state in
        command)
            _describe -t commands 'convert command' commands && ret=0
            ;;
        argument)
            case $words[1] in
`)
	for _, c := range cmds {
		fmt.Fprintf(&b, "                %s)\n                    _arguments \\\n", shellWord(c.name))
		for _, s := range zshSpecs(c.flags) {
			fmt.Fprintf(&b, "                        %s \\\n", s)
		}
		if len(c.words) > 0 {
			fmt.Fprintf(&b, "                        %s \\\n", shellWord("1:"+c.name+":("+strings.Join(c.words, " ")+")"))
		}
		b.WriteString("                        '*:file:_files' && ret=0\n                    ;;\n")
	}
	b.WriteString(`            esac
            ;;
    esac
    return ret
}

if [[ $funcstack[1] == _convert ]]; then
    _convert "$@"
else
    compdef _convert convert
fi
`)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFish writes the fish script: one complete line per command and per flag.
func writeFish(w io.Writer, cmds []compCommand) error {
	var b strings.Builder
	b.WriteString(`# fish completion for convert, written by "convert completion fish" from its command table.
# Install: convert completion fish > ~/.config/fish/completions/convert.fish
# or in one shell: convert completion fish | source

complete -c convert -f
`)
	flagLine := func(cond string, f flagInfo) {
		fmt.Fprintf(&b, "complete -c convert -n %s", fishWord(cond))
		if len(f.name) == 1 {
			fmt.Fprintf(&b, " -s %s", f.name)
		} else {
			if f.short != "" {
				fmt.Fprintf(&b, " -s %s", f.short)
			}
			fmt.Fprintf(&b, " -l %s", f.name)
		}
		switch f.kind {
		case kindChoice:
			fmt.Fprintf(&b, " -x -a %s", fishWord(strings.Join(f.choices, " ")))
		case kindFile:
			b.WriteString(" -r -F")
		case kindValue:
			b.WriteString(" -x")
		}
		fmt.Fprintf(&b, " -d %s\n", fishWord(describe(f.usage)))
	}
	for _, f := range topFlags() {
		flagLine("__fish_use_subcommand", f)
	}
	for _, c := range cmds {
		fmt.Fprintf(&b, "complete -c convert -n __fish_use_subcommand -a %s -d %s\n", fishWord(c.name), fishWord(describe(c.summary)))
	}
	for _, c := range cmds {
		cond := "__fish_seen_subcommand_from " + c.name
		fmt.Fprintf(&b, "\n# convert %s\n", c.name)
		if len(c.words) > 0 {
			fmt.Fprintf(&b, "complete -c convert -n %s -a %s\n", fishWord(cond), fishWord(strings.Join(c.words, " ")))
		}
		if !c.noFiles {
			fmt.Fprintf(&b, "complete -c convert -n %s -F\n", fishWord(cond))
		}
		for _, f := range c.flags {
			flagLine(cond, f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
