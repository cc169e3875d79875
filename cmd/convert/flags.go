package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

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
			// The flag package names flags with one dash; the README and -h spell them --name.
			msg := strings.Replace(err.Error(), "flag -", "flag --", 1)
			return nil, fmt.Errorf("%w: %s: %s (see convert %s -h)", errUsage, fs.Name(), msg, fs.Name())
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// helpRequest is returned by parseArgs for -h: dispatch prints the command's flags.
type helpRequest struct{ fs *flag.FlagSet }

func (h *helpRequest) Error() string { return "help requested" }

// runFlags are the run options every converting command takes; each has the name of its recipe
// key. Only flags given on the command line override the recipe.
type runFlags struct {
	output, format, pageSize, onError, maxErrors, rejects, report, logFormat string
	workers, chunkSize, shard, shards                                        int
	cpuProfile                                                               string
	checksums, dryRun                                                        bool
	dedup                                                                    string
	abortOlderThan                                                           time.Duration
	fs                                                                       *flag.FlagSet
}

func bindRunFlags(fs *flag.FlagSet) *runFlags {
	f := &runFlags{fs: fs}
	fs.StringVar(&f.output, "output", "", "output file (.mldf or .beton)")
	choiceVar(fs, &f.format, "format", "container: mldf (default), beton (FFCV), scdl or mds (MosaicML Streaming: a directory)", "mldf", "beton", "scdl", "mds")
	checkedVar(fs, &f.pageSize, "page-size", "page size, a power of two (e.g. 2MiB)", checkPageSize)
	intVar(fs, &f.workers, "workers", 0, 0, recipe.MaxWorkers, "0 = all cores", "encoder workers (0 = all cores)")
	intVar(fs, &f.chunkSize, "chunk-size", 0, 0, recipe.MaxChunkSize, "0 = adaptive", "samples per work unit (0 = default)")
	fs.BoolVar(&f.checksums, "checksums", true, "write CRC-32C and xxhash64 checksums")
	choiceVar(fs, &f.onError, "on-error", "skip (default) or fail on a bad sample", "skip", "fail")
	checkedVar(fs, &f.maxErrors, "max-errors", "fail when more samples than this are rejected (count or N%)", checkMaxErrors)
	fs.StringVar(&f.rejects, "rejects", "", "rejects JSONL (default OUTPUT.rejects.jsonl)")
	fs.StringVar(&f.report, "report", "", "report JSON (default OUTPUT.report.json)")
	choiceVar(fs, &f.logFormat, "log-format", "text or json log lines", "text", "json")
	intVar(fs, &f.shard, "shard", -1, 0, recipe.MaxShards-1, "less than --shards",
		"this task's slice (default: SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX)")
	intVar(fs, &f.shards, "shards", 0, 0, recipe.MaxShards, "0 = not sharded", "number of slices (default: SLURM_ARRAY_TASK_COUNT)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "validate and print the plan without writing")
	checkedVar(fs, &f.dedup, "dedup", "drop samples whose payloads in these fields equal an earlier sample's: FIELD[,FIELD...][:report] (report: keep and list them)", checkDedup)
	durationVar(fs, &f.abortOlderThan, "abort-incomplete-older-than",
		"bucket output: before uploading, abort the incomplete uploads (of killed runs) to the same key started more than this long ago; 0 = all of them")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to this file (go tool pprof)")
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

func bindFieldFlags(fs *flag.FlagSet) *fieldFlags {
	f := &fieldFlags{fs: fs}
	choiceVar(fs, &f.mode, "mode", "image storage: jpeg | png | raw | smart", recipe.ImageModes...)
	intVar(fs, &f.maxResolution, "max-resolution", 0, 0, recipe.MaxResolution, "0 = keep", "image longest side in pixels (0 = keep)")
	intVar(fs, &f.jpegQuality, "jpeg-quality", 0, 1, 100, "default 90", "JPEG quality 1..100 (default 90)")
	choiceVar(fs, &f.filter, "filter", "resize filter: lanczos | catmullrom | linear | box | nearest | ...", recipe.ImageFilters...)
	choiceVar(fs, &f.channels, "channels", "image: 1 | 3 | 4; audio: mono | keep", append(slices.Clone(imageChannels), audioChannels...)...)
	int64Var(fs, &f.maxPixels, "max-pixels", 0, 0, recipe.MaxPixels, "0 = the default limit", "refuse images whose decoding costs more pixels than this (decompression bombs; JPEGs count their DCT-scaled size)")
	intVar(fs, &f.sampleRate, "sample-rate", 0, 0, recipe.MaxSampleRate, "0 = keep the input's rate", "audio: resample to this rate in Hz")
	choiceVar(fs, &f.sampleType, "sample-type", "audio waveform samples: int16 | int32 | float32", recipe.SampleTypes...)
	fs.Var(&floatFlag{p: &f.maxDuration, lo: 0, hi: recipe.MaxDuration, note: "seconds; 0 = no limit"}, "max-duration", "audio: longest clip in seconds")
	choiceVar(fs, &f.onLong, "on-long", "audio longer than max-duration: truncate | skip", "truncate", "skip")
	choiceVar(fs, &f.tokenizer, "tokenizer", "text: cl100k_base | o200k_base | p50k_base | r50k_base | none", recipe.Tokenizers...)
	fs.BoolVar(&f.appendEOT, "append-eot", false, "text: append the end-of-text token")
	intVar(fs, &f.seqLen, "seq-len", 0, 1, recipe.MaxSeqLen, "tokens per row", "packed text: tokens per row")
	choiceVar(fs, &f.remainder, "remainder", "packed text: drop | pad the last partial row", "drop", "pad")
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
