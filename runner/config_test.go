package runner

import (
	"testing"

	"github.com/mldf/convert/recipe"
)

// The recipe's direct_io: false is the pipeline's NoDirect; unset or true leaves direct
// writes on.
func TestConfigDirectIO(t *testing.T) {
	no, yes := false, true
	for _, c := range []struct {
		directIO *bool
		noDirect bool
	}{{nil, false}, {&yes, false}, {&no, true}} {
		r := &recipe.Recipe{Output: "o.mldf", DirectIO: c.directIO}
		r.Defaults()
		cfg, err := Config(&recipe.Plan{Recipe: r}, r.Output)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.NoDirect != c.noDirect {
			t.Errorf("direct_io %v: NoDirect %v, want %v", c.directIO, cfg.NoDirect, c.noDirect)
		}
	}
}
