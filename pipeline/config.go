package pipeline

import (
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/sources"
)

// DefaultChunkSize is the number of samples per chunk when Config.ChunkSize is 0, for samples
// of at least 4 KiB of input; a chunk of smaller samples grows until it holds minChunkBytes of
// input or maxAutoChunk samples, so that tiny samples (a JSONL line, a thumbnail) do not pay
// a chunk's claim and hand-over for every 64 of them.
const DefaultChunkSize = 64

// Bounds of the default (adaptive) chunk.
const (
	minChunkBytes = 256 << 10
	maxAutoChunk  = 1024
)

// Bounds of Config.Workers and Config.ChunkSize: each worker holds up to maxPending+1 chunks
// and the queue one per worker, so samples in flight are at most about
// 6 × MaxWorkers × MaxChunkSize slots (about 100 bytes each, plus the samples' data).
const (
	MaxWorkers   = 1024
	MaxChunkSize = 16384
)

// A worker keeps up to maxPending encoded chunks (and at most maxPendingBytes of their
// payloads) while their turn to claim has not come, and goes on encoding; beyond that it
// blocks (back-pressure). With chunks cut at maxChunkBytes of input, memory stays bounded by
// about workers × (maxPending+1) chunks plus the queue.
const (
	maxPending      = 4
	maxPendingBytes = 64 << 20
	maxChunkBytes   = 16 << 20
)

// LeadRejects is how many samples a run rejects for one reason (and field), from its first
// sample on with none written, before it stops with ErrAllRejected: a recipe that does not
// fit its data (a column the source does not have) fails in seconds, not after 10^8
// rejects.
const LeadRejects = 1000

// progressEvery is the interval between Progress calls.
const progressEvery = 500 * time.Millisecond

// Binding maps a source column to an output field.
type Binding struct {
	Field  encoders.Field
	Column string
	// Optional makes a missing column an empty payload (or a zero value) instead of a
	// rejected sample.
	Optional bool
}

// ErrorPolicy says what a bad sample does to the run.
type ErrorPolicy int

// Error policies.
const (
	Skip ErrorPolicy = iota // leave the sample out, record it, go on (the default)
	Fail                    // fail the run at the first bad sample
)

// String returns "skip" or "fail".
func (p ErrorPolicy) String() string {
	if p == Fail {
		return "fail"
	}
	return "skip"
}

// ParseErrorPolicy parses "skip" or "fail" ("" is skip).
func ParseErrorPolicy(s string) (ErrorPolicy, error) {
	switch s {
	case "", "skip":
		return Skip, nil
	case "fail":
		return Fail, nil
	}
	return Skip, fmt.Errorf("%w: on_error %q (want skip or fail)", ErrConfig, s)
}

// Config describes one conversion.
type Config struct {
	Source sources.Source
	Fields []Binding
	Output string
	// PageSize of the output; 0 means manifest.DefaultPageSize.
	PageSize int
	// Workers encoding in parallel; 0 means runtime.NumCPU().
	Workers int
	// ChunkSize is the number of consecutive samples a worker encodes and claims at once;
	// 0 means adaptive: DefaultChunkSize samples, or up to 1024 while they account for less
	// than 256 KiB of input. A chunk also ends once its samples account for 16 MiB of input.
	// With a sources.BatchSource (JSONL), adaptive chunks are its batches, decoded by the
	// workers into memory they reuse. The output does not depend on it.
	ChunkSize int
	// Checksums stores CRC-32C per payload and the header checksum (the command's default).
	Checksums bool
	// OnError is the policy for bad samples.
	OnError ErrorPolicy
	// AllowEmpty lets a run that writes no sample succeed with an empty output; otherwise
	// such a run fails with ErrEmpty and writes nothing (the recipe's allow_empty).
	AllowEmpty bool
	// MaxErrors fails the run when more samples than this are rejected; 0 means no limit.
	MaxErrors int64
	// MaxErrorFraction fails the run when the rejected fraction exceeds it; 0 means no limit.
	// It is checked as soon as it is certain (when the source knows its length) and at the end.
	MaxErrorFraction float64
	// RejectsPath, when set, receives one JSON line per rejected or filtered sample:
	// {"origin","key","field","reason","error"}, in sample order. It is written like the
	// output (a temporary file renamed at the end, so kill -9 leaves nothing at the path) and
	// published when the run ends, failed or not, if it holds a line; a run that rejected
	// nothing leaves no rejects file (and removes one an earlier run left at the path).
	// It is written through Store: a local path, a file:// URL or a bucket URL (s3://,
	// gs://, az://, one object that appears only when complete) alike.
	RejectsPath string
	// Store writes RejectsPath; nil means a client of Run's own (objstore.New).
	Store *objstore.Client
	// Progress, when set, is called about every 500ms from one goroutine, and once at the end.
	Progress func(Progress)
	// Logger receives warnings about rejected samples; nil discards them.
	Logger *slog.Logger
	// Container creates the output's container; nil means MLDF (mldf.NewContainer).
	// beton.NewContainer writes FFCV's .beton.
	Container mldf.ContainerFunc
	// Sink opens where the output's bytes go; nil means the local file at Output
	// (pagewriter.LocalFile). pagewriter.Multipart uploads them to object storage; Output
	// then only names the output in messages and the report.
	Sink pagewriter.SinkOpener
	// NoDirect writes the local output (Sink nil) through the page cache even where its
	// file system takes direct writes (pagewriter.FileOptions.NoDirect; by default the
	// output is written around the page cache there, with O_DIRECT). The output is then in
	// the page cache when the run ends, for a reader that starts right away, and a file
	// system whose direct writes are slow is not used that way. A Sink ignores it (the
	// recipe's direct_io: false).
	NoDirect bool
	// Dedup, when set, drops (or only reports) the samples whose payloads in its fields are
	// byte-identical to an earlier sample's; see Dedup. nil leaves every sample in.
	Dedup *Dedup
	// Resume, when set, makes the run resumable: checkpoints, and a start from the last
	// one of a killed run with the same fingerprint (see Resume, docs/RESUME.md).
	Resume *Resume

	// wrap injects faults into the writer's files (tests).
	wrap pagewriter.WrapFunc
	// localFile opens the local output's sink; nil means pagewriter.LocalFile (tests see
	// the options and the sink through it).
	localFile func(path string, opt pagewriter.FileOptions) pagewriter.SinkOpener
}

func validate(cfg *Config) error {
	switch {
	case cfg.Source == nil:
		return fmt.Errorf("%w: no source", ErrConfig)
	case len(cfg.Fields) == 0:
		return fmt.Errorf("%w: no fields", ErrConfig)
	case cfg.Output == "":
		return fmt.Errorf("%w: no output path", ErrConfig)
	case cfg.Workers < 0, cfg.ChunkSize < 0, cfg.PageSize < 0:
		return fmt.Errorf("%w: negative workers, chunk size or page size", ErrConfig)
	case cfg.Workers > MaxWorkers, cfg.ChunkSize > MaxChunkSize:
		return fmt.Errorf("%w: %d workers and chunks of %d samples: at most %d and %d", ErrConfig,
			cfg.Workers, cfg.ChunkSize, MaxWorkers, MaxChunkSize)
	case cfg.MaxErrors < 0, cfg.MaxErrorFraction < 0, cfg.MaxErrorFraction > 1:
		return fmt.Errorf("%w: max errors must be >= 0 and the fraction in [0, 1]", ErrConfig)
	}
	for i, b := range cfg.Fields {
		if b.Field == nil {
			return fmt.Errorf("%w: field %d has no encoder", ErrConfig, i)
		}
		if b.Column == "" {
			return fmt.Errorf("%w: field %q has no column", ErrConfig, b.Field.Name())
		}
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.NumCPU()
	}
	return nil
}
