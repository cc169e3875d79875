package recipe

import (
	"fmt"
	"math"

	"github.com/mldf/convert/encoders/audiofield"
	"github.com/mldf/convert/encoders/textfield"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sources/tarsrc"
)

// The documented range of every number a recipe may give (docs/RECIPES.md, "Limits").
// Validate checks each one, with its line, so a run never allocates from an unchecked number.
const (
	MinPageSize      = 4 << 10 // page_size: a power of two in [MinPageSize, MaxPageSize]
	MaxPageSize      = 1 << 30
	MinBetonPageSize = 2 << 20 // page_size of an FFCV .beton

	MaxWorkers   = pipeline.MaxWorkers   // workers: 0 (all cores) or 1..MaxWorkers
	MaxChunkSize = pipeline.MaxChunkSize // chunk_size: 0 (default) or 1..MaxChunkSize
	MaxShards    = 99999                 // shards: the part names have 5 digits

	MinLineBytes = 1 << 10 // source.max_line_bytes: 0 (default 256MiB) or in this range
	MaxLineBytes = 1 << 30

	MinMemberSize        = 1 << 10                   // source.max_member_size: 0 (default) or in this range
	MaxMemberSize        = tarsrc.MaxMemberSizeLimit // the largest MLDF payload
	DefaultMaxMemberSize = tarsrc.DefaultMaxMemberSize

	MaxResolution = 65535                    // max_resolution: 0 (keep) or 1..65535, the metadata's limit
	MaxPixels     = 1 << 30                  // max_pixels: 0 (default) or 1..MaxPixels
	MaxSampleRate = audiofield.MaxSampleRate // sample_rate: 0 (keep) or 1..MaxSampleRate Hz
	MaxDuration   = 86400                    // max_duration: 0 (none) or up to a day, in seconds
	MaxSeqLen     = textfield.MaxSeqLen
	MaxPadID      = math.MaxUint32
)

// FormatSize writes a byte count the way a recipe may: with the largest binary unit that
// divides it (4KiB, 2MiB, 1GiB), else in bytes.
func FormatSize(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.m == 0 {
			return fmt.Sprintf("%d%s", n/u.m, u.s)
		}
	}
	return fmt.Sprint(n)
}
