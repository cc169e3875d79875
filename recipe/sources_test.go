package recipe

import (
	"slices"
	"testing"

	"github.com/mldf/convert/encoders/audiofield"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/encoders/textfield"
	"github.com/mldf/convert/internal/wav"

	// The source types a program offers are those whose packages it imports (as
	// cmd/convert does): the tests use every type of this module.
	_ "github.com/mldf/convert/sources/audio"
	_ "github.com/mldf/convert/sources/h5ad"
	_ "github.com/mldf/convert/sources/imagefolder"
	_ "github.com/mldf/convert/sources/jsonl"
	_ "github.com/mldf/convert/sources/mdssrc"
	_ "github.com/mldf/convert/sources/mtx10x"
	_ "github.com/mldf/convert/sources/parquet"
	_ "github.com/mldf/convert/sources/scdlarchive"
	_ "github.com/mldf/convert/sources/tarsrc"
)

// TestFieldLimits: the limits and choices the recipe exports for the command's flags are
// those the field types check.
func TestFieldLimits(t *testing.T) {
	for _, c := range []struct {
		name        string
		recipe, typ int64
	}{
		{"MaxResolution", MaxResolution, imagefield.MaxResolutionLimit},
		{"MaxPixels", MaxPixels, imagefield.MaxPixelsLimit},
		{"MaxSampleRate", MaxSampleRate, audiofield.MaxSampleRate},
		{"MaxSampleRate (wav)", MaxSampleRate, wav.MaxSampleRate},
		{"MaxDuration", MaxDuration, audiofield.MaxDurationLimit},
		{"MaxSeqLen", MaxSeqLen, textfield.MaxSeqLen},
		{"MaxPadID", MaxPadID, textfield.MaxPadID},
	} {
		if c.recipe != c.typ {
			t.Errorf("recipe.%s = %d, the field type's = %d", c.name, c.recipe, c.typ)
		}
	}
	for _, c := range []struct {
		name        string
		recipe, typ []string
	}{
		{"ImageModes", ImageModes, imagefield.Modes},
		{"ImageFilters", ImageFilters, imagefield.Filters},
		{"Tokenizers", Tokenizers, textfield.TokenizerChoices},
		{"SampleTypes", SampleTypes, audiofield.SampleTypes},
	} {
		if !slices.Equal(c.recipe, c.typ) {
			t.Errorf("recipe.%s = %v, the field type's = %v", c.name, c.recipe, c.typ)
		}
	}
}
