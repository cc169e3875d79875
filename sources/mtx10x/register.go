package mtx10x

import (
	"context"

	"github.com/mldf/convert/internal/cells"
	"github.com/mldf/convert/sources"
	"github.com/mldf/convert/sources/scdlsrc"
)

// The matrix a 10x directory is read as.
var _ cells.Input = (*Dir)(nil)

func init() {
	sources.Register(sources.Spec{
		Name:   "mtx10x",
		Inputs: sources.ByPathOrInputs,
		Cells:  true,
		Open: func(ctx context.Context, cfg sources.Config) (sources.Source, error) {
			return scdlsrc.Open(ctx, cfg, false, func(p string) (cells.Input, error) {
				return Open(p, Options{})
			})
		},
	})
}
