package main

import (
	"context"
	"io"
)

// command is one entry of the command table. Dispatch, the help (convert help CMD, convert
// CMD --help) and the shell completions all read this table and the command's own flag set,
// so adding a command is adding an entry here, and the help and completions cannot drift
// from what the command parses.
type command struct {
	name    string
	args    string // the positional arguments as the synopsis shows them: "RECIPE.yaml"
	summary string // one line for the command list
	about   string // the help's text after the synopsis (optional)
	section string // the command list's heading

	// run parses args with parseArgs and a flag set of its own, before it does anything
	// else: given -h it returns the helpRequest holding that flag set, which is how help and
	// completion learn the command's flags. nil: dispatch handles the command itself.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error

	groups  []flagGroup       // the help's headings for the flags; a flag in none is under "Flags"
	aliases map[string]string // a one-letter flag → the flag it is another name of
	quiet   bool              // takes --quiet / -q: nothing is printed but errors
	words   []string          // what the first positional argument may be (the shells complete it)
	noFiles bool              // its arguments are never file names (the shells complete none)
	recipe  bool              // its flags are named like recipe keys (the help says so)
}

// flagGroup is a heading of a command's help and the flags listed under it.
type flagGroup struct {
	title string
	flags []string
}

// Headings of the command list.
const (
	secConvert = "Convert"
	secRead    = "Read and check a file"
	secCluster = "Cluster runs and buckets"
	secShell   = "This program"
)

// sections lists the command list's headings in order.
func sections() []string { return []string{secConvert, secRead, secCluster, secShell} }

// commandTable lists the commands in the order the help shows them.
func commandTable() []command {
	// The help's headings of the converting commands' flags (bindRunFlags, bindFieldFlags).
	output := flagGroup{"Output", []string{"output", "format", "page-size", "checksums", "direct-io", "report", "rejects"}}
	run := flagGroup{"Run", []string{"workers", "chunk-size", "on-error", "max-errors", "log-format", "json", "dedup", "dry-run", "abort-incomplete-older-than", "cpuprofile", "trace", "checkpoint-every", "checkpoint-bytes", "restart"}}
	shard := flagGroup{"Sharding (one task of a cluster job)", []string{"shard", "shards"}}
	image := flagGroup{"Image fields", []string{"mode", "max-resolution", "jpeg-quality", "filter", "channels", "max-pixels"}}
	audio := flagGroup{"Audio fields", []string{"sample-rate", "sample-type", "max-duration", "on-long"}}
	text := flagGroup{"Text fields", []string{"tokenizer", "append-eot", "seq-len", "remainder"}}
	convertGroups := []flagGroup{output, run, shard, image, audio, text}
	return []command{
		{name: "run", args: "RECIPE.yaml", section: secConvert, run: cmdRun, groups: convertGroups, quiet: true, recipe: true,
			summary: "convert as a recipe says (flags override its keys)",
			about: "Converts the dataset the recipe describes (docs/RECIPES.md). A flag overrides the recipe key\n" +
				"of its name; a field option given as a flag applies to every field that takes it."},
		{name: "validate", args: "RECIPE.yaml", section: secConvert, run: cmdValidate, groups: convertGroups, quiet: true, recipe: true,
			summary: "check a recipe and print the resolved plan; writes nothing",
			about:   "Checks the recipe (every problem, with its line) and its inputs, and prints the plan a run\nwould follow. Flags override the recipe's keys as in convert run."},
		{name: "images", args: "SRC_DIR OUT.mldf", section: secConvert, run: cmdImages, quiet: true, recipe: true,
			groups:  []flagGroup{{"Source", []string{"flat"}}, output, run, shard, image},
			summary: "convert an ImageFolder (SRC_DIR/<class>/<image>) without a recipe",
			about:   "Converts an ImageFolder into one file of two fields: image, and label (the class folder's\nindex in sorted order); with --flat, a flat folder of images and no label."},
		{name: "append", args: "BASE.mldf RECIPE.yaml", section: secConvert, run: cmdAppend, groups: convertGroups, quiet: true, recipe: true,
			summary: "add the samples a recipe reads to an MLDF file, atomically",
			about: "Runs the recipe and appends its samples to BASE (local or in a bucket): readers see the old\n" +
				"file or the new one, BASE's sample ids and class ids stay, and the result equals one run over\n" +
				"all inputs in order (docs/APPEND.md). A BASE that does not exist is written by a plain run.\n" +
				"A killed append started again with the same BASE and recipe resumes (docs/RESUME.md)."},
		{name: "inspect", args: "FILE", section: secRead, run: cmdInspect,
			summary: "print a file's header, fields, options and sizes (MLDF, .beton, .taridx, SCDL, MDS)"},
		{name: "verify", args: "FILE", section: secRead, run: cmdVerify, quiet: true,
			summary: "check every structural rule, field rule and checksum of a file"},
		{name: "cat", args: "FILE --sample N --field F", section: secRead, run: cmdCat,
			summary: "write one stored payload to stdout"},
		{name: "export", args: "FILE DIR --format FORMAT", section: secRead, run: cmdExport, quiet: true,
			groups: []flagGroup{{"Format", []string{"format"}}, {"Fields", []string{"field", "label", "key"}},
				{"Shards", []string{"shard-size", "shard-samples"}}, {"Checks", []string{"verify"}}},
			summary: "write the samples back out: image folders, WebDataset shards, Parquet, MDS"},
		{name: "merge", args: "OUT.mldf [PARTS...] | RECIPE.yaml", section: secCluster, run: cmdMerge, quiet: true,
			groups:  []flagGroup{{"Checks", []string{"check-parts", "verify-parts", "verify"}}, {"Copy", []string{"copy"}}},
			summary: "join the parts of a sharded run into one file",
			about:   "Joins the parts a sharded run wrote (OUT.part-K-of-N.mldf), given or found beside OUT;\nwith a recipe, the parts of its output."},
		{name: "index", args: "SHARD.tar [SHARD.tar...]", section: secCluster, run: cmdIndex, quiet: true,
			aliases: map[string]string{"o": "output"},
			summary: "write a TARIDX index of WebDataset tar shards",
			about:   "Globs and {000..127} ranges work; shards and the index may be paths or s3:// gs:// az:// URLs."},
		{name: "storage", args: "ls-incomplete URL | abort-incomplete URL", section: secCluster, run: cmdStorage, quiet: true,
			words:   storageSubcommands(),
			summary: "list or abort the multipart uploads killed runs left in a bucket"},
		{name: "help", args: "[COMMAND]", section: secShell, run: cmdHelp, noFiles: true,
			summary: "print the help of convert or of a command"},
		{name: "completion", args: "bash|zsh|fish", section: secShell, run: cmdCompletion, noFiles: true,
			words:   []string{"bash", "zsh", "fish"},
			summary: "print the shell completion script (see docs/CLI.md to install it)"},
		{name: "version", section: secShell, run: cmdVersion, noFiles: true, summary: "print the version, commit, build date, and the codecs and stores compiled in"},
	}
}

// lookup returns the command named name.
func lookup(name string) (command, bool) {
	for _, c := range commandTable() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// commandNames lists the commands' names in the table's order.
func commandNames() []string {
	var names []string
	for _, c := range commandTable() {
		names = append(names, c.name)
	}
	return names
}
