package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/internal/suggest"
	"github.com/mldf/convert/recipe"
)

// parseArgs parses flags that may appear before, between or after positional arguments, and
// accepts each flag with '-' or '_' between words (--max-resolution or --max_resolution, the
// recipe key's spelling).
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		norm := make([]string, len(args))
		for i, a := range args {
			norm[i] = a
			if strings.HasPrefix(a, "-") && len(a) > 1 {
				name, val, hasVal := strings.Cut(a, "=")
				name = strings.ReplaceAll(name, "_", "-")
				if hasVal {
					name += "=" + val
				}
				norm[i] = name
			}
		}
		if err := fs.Parse(norm); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &helpRequest{fs}
			}
			return nil, newFlagError(fs, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// helpRequest is returned by parseArgs for -h: dispatch prints the command's help.
type helpRequest struct{ fs *flag.FlagSet }

func (h *helpRequest) Error() string { return "help requested" }

// flagError is a command-line mistake in a command's flags (a usage error, exit status 2):
// an unknown flag, with the nearest known one, or a value the flag refuses.
type flagError struct {
	cmd     string // the flag set's name: the command
	unknown string // the unknown flag's name as given, without dashes
	known   []string
	fields  bool   // the command takes field options (of some field types)
	msg     string // the flag package's message, flags spelled --name
}

// newFlagError makes the error of fs.Parse a usage error of the command fs belongs to.
func newFlagError(fs *flag.FlagSet, err error) *flagError {
	e := &flagError{cmd: fs.Name(), msg: err.Error()}
	const undefined = "flag provided but not defined: -"
	if name, ok := strings.CutPrefix(e.msg, undefined); ok {
		e.unknown = name
		fs.VisitAll(func(f *flag.Flag) { e.known = append(e.known, f.Name) })
		e.known = append(e.known, "help")
		e.fields = fs.Lookup("mode") != nil
	}
	// The flag package names flags with one dash; the help and the docs spell them --name.
	e.msg = strings.Replace(e.msg, "flag -", "flag --", 1)
	return e
}

func (e *flagError) Error() string {
	see := fmt.Sprintf("convert %s --help lists its flags", e.cmd)
	if e.unknown == "" {
		return fmt.Sprintf("%s: %s (%s)", e.cmd, e.msg, see)
	}
	hint := ""
	if s := suggest.Closest(e.unknown, e.known); s != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", dashed(s))
	} else if types := optionOf(e.unknown); e.fields && len(types) > 0 {
		hint = fmt.Sprintf(" (an option of %s fields, which convert %s does not write; a recipe and convert run take it)",
			strings.Join(types, " and "), e.cmd)
	}
	return fmt.Sprintf("%s: unknown flag %s%s; %s", e.cmd, printable(dashed(e.unknown)), hint, see)
}

func (e *flagError) Unwrap() error { return errUsage }

// optionOf lists the field types that take the option a flag of this name would set.
func optionOf(flagName string) []string {
	key := strings.ReplaceAll(flagName, "-", "_")
	var types []string
	for _, t := range encoders.Types() {
		if recipe.Applies(t, key) {
			types = append(types, t)
		}
	}
	return types
}

// dashed spells a flag as the help does: -q for one letter, --name for a word.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// runFlags are the run options every converting command takes; each has the name of its recipe
// key. Only flags given on the command line override the recipe.
type runFlags struct {
	output, format, pageSize, onError, maxErrors, rejects, report, logFormat string
	workers, chunkSize, shard, shards                                        int
	cpuProfile, trace                                                        string
	checksums, dryRun, json, directIO                                        bool
	dedup                                                                    string
	abortOlderThan                                                           time.Duration
	resume                                                                   *resumeFlags // run only
	fs                                                                       *flag.FlagSet
	seed                                                                     *dedupSeed // an append's dedup table (not a flag)
	// cached writes the output through the page cache whatever direct_io says: an append's
	// new samples, read back at once (not a flag; not in the recipe, whose hash it would change).
	cached bool
	// planned, when set, is called with a run's plan before it runs; an error ends the run
	// (an append's check of its record, not a flag).
	planned func(*recipe.Plan) error
}

// bindRunFlags defines the run options as flags; with run false (convert validate, which
// runs nothing) not those that only a run uses: --dry-run, --direct-io, --cpuprofile,
// --trace and --abort-incomplete-older-than.
func bindRunFlags(fs *flag.FlagSet, run bool) *runFlags {
	f := &runFlags{fs: fs}
	fs.StringVar(&f.output, "output", "", "write to `FILE` (.mldf, .beton; a folder for scdl and mds)")
	choiceVar(fs, &f.format, "format", "container: mldf (default), beton (FFCV), scdl or mds (MosaicML Streaming: a directory)", "mldf", "beton", "scdl", "mds")
	checkedVar(fs, &f.pageSize, "page-size", "SIZE", "page size, a power of two (e.g. 2MiB)", checkPageSize)
	intVar(fs, &f.workers, "workers", 0, 0, recipe.MaxWorkers, "0 = all cores", "encoder workers (0 = all cores)")
	intVar(fs, &f.chunkSize, "chunk-size", 0, 0, recipe.MaxChunkSize, "0 = adaptive", "samples per work unit (0 = default)")
	fs.BoolVar(&f.checksums, "checksums", true, "write CRC-32C and xxhash64 checksums")
	choiceVar(fs, &f.onError, "on-error", "skip (default) or fail on a bad sample", "skip", "fail")
	checkedVar(fs, &f.maxErrors, "max-errors", "N|N%", "fail when more samples than this are rejected (count or N%)", checkMaxErrors)
	fs.StringVar(&f.rejects, "rejects", "", "rejected samples, one JSON line each, to `FILE` (default OUTPUT.rejects.jsonl)")
	fs.StringVar(&f.report, "report", "", "the run's report (JSON) to `FILE` (default OUTPUT.report.json)")
	choiceVar(fs, &f.logFormat, "log-format", "text or json log lines", "text", "json")
	intVar(fs, &f.shard, "shard", -1, 0, recipe.MaxShards-1, "less than --shards",
		"this task's slice (default: SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX)")
	intVar(fs, &f.shards, "shards", 0, 0, recipe.MaxShards, "0 = not sharded", "number of slices (default: SLURM_ARRAY_TASK_COUNT)")
	fs.BoolVar(&f.json, "json", false, "print the plan (--dry-run, validate), the summary and errors as JSON (docs/schema)")
	checkedVar(fs, &f.dedup, "dedup", "FIELDS[:report]", "drop samples whose payloads in these fields equal an earlier sample's: FIELD[,FIELD...][:report] (report: keep and list them)", checkDedup)
	if !run {
		return f
	}
	fs.BoolVar(&f.dryRun, "dry-run", false, "validate and print the plan without writing (convert validate)")
	fs.BoolVar(&f.directIO, "direct-io", true, "write a local output around the page cache (O_DIRECT) where its file system takes it; off, through the cache, which then holds the output (a bucket output ignores it)")
	durationVar(fs, &f.abortOlderThan, "abort-incomplete-older-than",
		"bucket output: before uploading, abort the incomplete uploads (of killed runs) to the same key started more than this long ago; 0 = all of them")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to `FILE` (go tool pprof)")
	fs.StringVar(&f.trace, "trace", "", "write a Go execution trace of the run to `FILE` (go tool trace; bench/tracebusy.py)")
	f.resume = bindResumeFlags(fs)
	return f
}

// apply copies the flags that were given into r. Each value was checked as it was parsed;
// --shard and --shards given together are checked against each other here.
func (f *runFlags) apply(r *recipe.Recipe) error {
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) {
		given[fl.Name] = true
		switch fl.Name {
		case "output":
			r.Output = f.output
		case "format":
			r.Format = f.format
		case "page-size":
			n, _ := recipe.ParseSize(f.pageSize) // checked by checkPageSize
			r.PageSize = recipe.Size(n)
		case "workers":
			r.Workers = f.workers
		case "chunk-size":
			r.ChunkSize = f.chunkSize
		case "checksums":
			r.Checksums = &f.checksums
		case "direct-io":
			r.DirectIO = &f.directIO
		case "on-error":
			r.OnError = f.onError
		case "max-errors":
			r.MaxErrors = f.maxErrors
		case "rejects":
			r.Rejects = f.rejects
		case "report":
			r.Report = f.report
		case "log-format":
			r.LogFormat = f.logFormat
		case "shard":
			r.Shard = f.shard
		case "shards":
			r.Shards = f.shards
		case "dedup":
			r.Dedup = parseDedup(f.dedup)
		case "checkpoint-every":
			r.CheckpointEvery = f.resume.every.String()
		case "checkpoint-bytes":
			n, _ := recipe.ParseSize(f.resume.bytes) // checked by checkSize
			r.CheckpointBytes = recipe.Size(n)
		}
	})
	if given["shard"] && given["shards"] && f.shard >= f.shards {
		return fmt.Errorf("%w: --shard %d --shards %d: want 0 <= --shard < --shards", errUsage, f.shard, f.shards)
	}
	return nil
}

// fieldFlags are the field options as flags. A given flag applies to every field of the recipe
// whose type takes that option (--max-resolution to image fields, --sample-rate to audio ones).
type fieldFlags struct {
	mode, filter, channels, sampleType, onLong, tokenizer, remainder string
	maxResolution, jpegQuality, sampleRate, seqLen                   int
	maxPixels                                                        int64
	maxDuration                                                      float64
	appendEOT                                                        bool
	fs                                                               *flag.FlagSet
}

// bindFieldFlags defines the field options of the field types given (all of them when none
// is given) as flags: convert images, whose fields are an image and a label, takes only the
// image options.
func bindFieldFlags(fs *flag.FlagSet, types ...string) *fieldFlags {
	f := &fieldFlags{fs: fs}
	takes := func(key string) bool {
		if len(types) == 0 {
			return true
		}
		return slices.ContainsFunc(types, func(t string) bool { return recipe.Applies(t, key) })
	}
	def := func(key string, define func(name string)) {
		if takes(key) {
			define(strings.ReplaceAll(key, "_", "-"))
		}
	}
	def("mode", func(n string) {
		choiceVar(fs, &f.mode, n, "image storage: jpeg | png | raw | smart", recipe.ImageModes...)
	})
	def("max_resolution", func(n string) {
		intVar(fs, &f.maxResolution, n, 0, 0, recipe.MaxResolution, "0 = keep", "image longest side in pixels (0 = keep)")
	})
	def("jpeg_quality", func(n string) {
		intVar(fs, &f.jpegQuality, n, 0, 1, 100, "default 90", "JPEG quality 1..100 (default 90)")
	})
	def("filter", func(n string) {
		choiceVar(fs, &f.filter, n, "resize filter: lanczos | catmullrom | linear | box | nearest | ...", recipe.ImageFilters...)
	})
	var channels []string
	if len(types) == 0 || slices.Contains(types, "image") {
		channels = append(channels, imageChannels...)
	}
	if len(types) == 0 || slices.Contains(types, "audio") {
		channels = append(channels, audioChannels...)
	}
	def("channels", func(n string) {
		usage := "image: 1 | 3 | 4; audio: mono | keep"
		if !slices.Contains(channels, "mono") {
			usage = "image channels: 1 (gray), 3 (RGB) or 4 (RGBA)"
		}
		choiceVar(fs, &f.channels, n, usage, channels...)
	})
	def("max_pixels", func(n string) {
		int64Var(fs, &f.maxPixels, n, 0, 0, recipe.MaxPixels, "0 = the default limit", "refuse images whose decoding costs more pixels than this (decompression bombs; JPEGs count their DCT-scaled size)")
	})
	def("sample_rate", func(n string) {
		intVar(fs, &f.sampleRate, n, 0, 0, recipe.MaxSampleRate, "0 = keep the input's rate", "audio: resample to this rate in Hz")
	})
	def("sample_type", func(n string) {
		choiceVar(fs, &f.sampleType, n, "audio waveform samples: int16 | int32 | float32", recipe.SampleTypes...)
	})
	def("max_duration", func(n string) {
		fs.Var(&floatFlag{p: &f.maxDuration, lo: 0, hi: recipe.MaxDuration, note: "seconds; 0 = no limit"}, n, "audio: longest clip in `SECONDS`")
	})
	def("on_long", func(n string) {
		choiceVar(fs, &f.onLong, n, "audio longer than max-duration: truncate | skip", "truncate", "skip")
	})
	def("tokenizer", func(n string) {
		choiceVar(fs, &f.tokenizer, n, "text: cl100k_base | o200k_base | p50k_base | r50k_base | none", recipe.Tokenizers...)
	})
	def("append_eot", func(n string) { fs.BoolVar(&f.appendEOT, n, false, "text: append the end-of-text token") })
	def("seq_len", func(n string) {
		intVar(fs, &f.seqLen, n, 0, 1, recipe.MaxSeqLen, "tokens per row", "packed text: tokens per row")
	})
	def("remainder", func(n string) {
		choiceVar(fs, &f.remainder, n, "packed text: drop | pad the last partial row", "drop", "pad")
	})
	return f
}

// apply copies the given field flags into every field of r they apply to. A value valid for
// some field types but not for a field it applies to (--channels mono on an image field) is a
// usage error naming the flag.
func (f *fieldFlags) apply(r *recipe.Recipe) error {
	var err error
	f.fs.Visit(func(fl *flag.Flag) {
		key := strings.ReplaceAll(fl.Name, "-", "_")
		for i := range r.Fields {
			fd := &r.Fields[i]
			if !recipe.Applies(fd.Type, key) {
				continue
			}
			switch key {
			case "mode":
				fd.Mode = f.mode
			case "max_resolution":
				fd.MaxResolution = f.maxResolution
			case "jpeg_quality":
				fd.JPEGQuality = f.jpegQuality
			case "filter":
				fd.Filter = f.filter
			case "channels":
				want := audioChannels
				if fd.Type == "image" {
					want = imageChannels
				}
				if !slices.Contains(want, f.channels) && err == nil {
					err = fmt.Errorf("%w: --channels %q: the %s field %q takes one of %s",
						errUsage, f.channels, fd.Type, fd.Name, strings.Join(want, ", "))
				}
				fd.Channels = f.channels
			case "max_pixels":
				fd.MaxPixels = f.maxPixels
			case "sample_rate":
				fd.SampleRate = f.sampleRate
			case "sample_type":
				fd.SampleType = f.sampleType
			case "max_duration":
				fd.MaxDuration = f.maxDuration
			case "on_long":
				fd.OnLong = f.onLong
			case "tokenizer":
				fd.Tokenizer = f.tokenizer
			case "append_eot":
				fd.AppendEOT = f.appendEOT
			case "seq_len":
				fd.SeqLen = f.seqLen
			case "remainder":
				fd.Remainder = f.remainder
			}
		}
	})
	return err
}

// printable is name as it is when every rune of it prints, else quoted with escapes, so that
// a control byte in a mistyped flag never reaches the terminal.
func printable(name string) string {
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return quote.Q(name)
		}
	}
	return quote.S(name)
}
