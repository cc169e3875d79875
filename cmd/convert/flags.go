package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
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
			return nil, fmt.Errorf("%w: %s: %w (see convert %s -h)", errUsage, fs.Name(), err, fs.Name())
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
	abortOlderThan                                                           time.Duration
	fs                                                                       *flag.FlagSet
}

func bindRunFlags(fs *flag.FlagSet) *runFlags {
	f := &runFlags{fs: fs}
	fs.StringVar(&f.output, "output", "", "output file (.mldf or .beton)")
	fs.StringVar(&f.format, "format", "", "container: mldf (default) or beton (FFCV)")
	fs.StringVar(&f.pageSize, "page-size", "", "page size, a power of two (e.g. 2MiB)")
	fs.IntVar(&f.workers, "workers", 0, "encoder workers (0 = all cores)")
	fs.IntVar(&f.chunkSize, "chunk-size", 0, "samples per work unit (0 = default)")
	fs.BoolVar(&f.checksums, "checksums", true, "write CRC-32C and xxhash64 checksums")
	fs.StringVar(&f.onError, "on-error", "", "skip (default) or fail on a bad sample")
	fs.StringVar(&f.maxErrors, "max-errors", "", "fail when more samples than this are rejected (count or N%)")
	fs.StringVar(&f.rejects, "rejects", "", "rejects JSONL (default OUTPUT.rejects.jsonl)")
	fs.StringVar(&f.report, "report", "", "report JSON (default OUTPUT.report.json)")
	fs.StringVar(&f.logFormat, "log-format", "", "text or json log lines")
	fs.IntVar(&f.shard, "shard", -1, "this task's slice (default: SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX)")
	fs.IntVar(&f.shards, "shards", 0, "number of slices (default: SLURM_ARRAY_TASK_COUNT)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "validate and print the plan without writing")
	fs.DurationVar(&f.abortOlderThan, "abort-incomplete-older-than", 0,
		"bucket output: before uploading, abort the incomplete uploads (of killed runs) to the same key started more than this long ago; 0 = all of them")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the run to this file (go tool pprof)")
	return f
}

// apply copies the flags that were given into r.
func (f *runFlags) apply(r *recipe.Recipe) error {
	var err error
	f.fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "output":
			r.Output = f.output
		case "format":
			r.Format = f.format
		case "page-size":
			var n int64
			if n, err = recipe.ParseSize(f.pageSize); err == nil {
				r.PageSize = recipe.Size(n)
			}
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
		}
	})
	return err
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
	fs.StringVar(&f.mode, "mode", "", "image storage: jpeg | png | raw | smart")
	fs.IntVar(&f.maxResolution, "max-resolution", 0, "image longest side in pixels (0 = keep)")
	fs.IntVar(&f.jpegQuality, "jpeg-quality", 0, "JPEG quality 1..100 (default 90)")
	fs.StringVar(&f.filter, "filter", "", "resize filter: lanczos | catmullrom | linear | box | nearest")
	fs.StringVar(&f.channels, "channels", "", "image: 1 | 3 | 4; audio: mono | keep")
	fs.Int64Var(&f.maxPixels, "max-pixels", 0, "refuse images whose decoding costs more pixels than this (decompression bombs; JPEGs count their DCT-scaled size)")
	fs.IntVar(&f.sampleRate, "sample-rate", 0, "audio: resample to this rate in Hz")
	fs.StringVar(&f.sampleType, "sample-type", "", "audio waveform samples: int16 | int32 | float32")
	fs.Float64Var(&f.maxDuration, "max-duration", 0, "audio: longest clip in seconds")
	fs.StringVar(&f.onLong, "on-long", "", "audio longer than max-duration: truncate | skip")
	fs.StringVar(&f.tokenizer, "tokenizer", "", "text: cl100k_base | o200k_base | p50k_base | r50k_base")
	fs.BoolVar(&f.appendEOT, "append-eot", false, "text: append the end-of-text token")
	fs.IntVar(&f.seqLen, "seq-len", 0, "packed text: tokens per row")
	fs.StringVar(&f.remainder, "remainder", "", "packed text: drop | pad the last partial row")
	return f
}

// apply copies the given field flags into every field of r they apply to.
func (f *fieldFlags) apply(r *recipe.Recipe) {
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
}
