package mdssrc

import (
	"context"

	"github.com/mldf/convert/sources"
)

// The capabilities of the source.
var _ sources.Sharder = (*Source)(nil)

func init() {
	sources.Register(sources.Spec{
		Name:    "mds",
		Inputs:  sources.ByPath,
		Buckets: true,
		Open: func(ctx context.Context, cfg sources.Config) (sources.Source, error) {
			return New(ctx, cfg.Path, cfg.Store)
		},
	})
}
