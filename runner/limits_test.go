package runner

import (
	"testing"

	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/recipe"
)

// The recipe checks the pipeline's limits without importing it: they must be the same.
func TestRecipeLimitsArePipelines(t *testing.T) {
	for _, c := range []struct {
		name          string
		recipe, other int
	}{
		{"MaxWorkers", recipe.MaxWorkers, pipeline.MaxWorkers},
		{"MaxChunkSize", recipe.MaxChunkSize, pipeline.MaxChunkSize},
		{"DefaultChunkSize", recipe.DefaultChunkSize, pipeline.DefaultChunkSize},
	} {
		if c.recipe != c.other {
			t.Errorf("recipe.%s = %d, pipeline.%s = %d", c.name, c.recipe, c.name, c.other)
		}
	}
}
