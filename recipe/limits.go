package recipe

import (
	"math"

	"github.com/mldf/convert/sources"
)

// The documented range of every number a recipe may give (docs/RECIPES.md, "Limits").
// Validate checks each one, with its line, so a run never allocates from an unchecked number.
const (
	MinPageSize      = 4 << 10 // page_size: a power of two in [MinPageSize, MaxPageSize]
	MaxPageSize      = 1 << 30
	MinBetonPageSize = 2 << 20 // page_size of an FFCV .beton

	// The pipeline's limits (package run checks that they are pipeline's own).
	MaxWorkers       = 1024  // workers: 0 (all cores) or 1..MaxWorkers
	MaxChunkSize     = 16384 // chunk_size: 0 (default) or 1..MaxChunkSize
	DefaultChunkSize = 64    // the samples of a work unit when chunk_size is 0
	MaxShards        = 99999 // shards: the part names have 5 digits

	// The limits of source options are declared by the sources that take them
	// (sources.Option.Check).

	// The limits of field options, for the command's flags: the field types declare and
	// check them (encoders.FieldSpec.Check); TestFieldLimits keeps these equal to theirs.
	MaxResolution = 65535   // max_resolution: 0 (keep) or 1..65535, the metadata's limit
	MaxPixels     = 1 << 30 // max_pixels: 0 (default) or 1..MaxPixels
	MaxSampleRate = 768000  // sample_rate: 0 (keep) or 1..MaxSampleRate Hz
	MaxDuration   = 86400   // max_duration: 0 (none) or up to a day, in seconds
	MaxSeqLen     = 1 << 24
	MaxPadID      = math.MaxUint32
)

// FormatSize writes a byte count the way a recipe may: with the largest binary unit that
// divides it (4KiB, 2MiB, 1GiB), else in bytes.
func FormatSize(n int64) string { return sources.FormatSize(n) }
