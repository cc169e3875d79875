package imagefolder

import (
	"context"

	"github.com/mldf/convert/sources"
)

// The capabilities of the source.
var (
	_ sources.Sharder      = (*Source)(nil)
	_ sources.SkipCounter  = (*Source)(nil)
	_ sources.Classer      = (*Source)(nil)
	_ sources.ColumnLister = (*Source)(nil)
)

func init() {
	sources.Register(sources.Spec{
		Name:      "images",
		Inputs:    sources.ByPath,
		Buckets:   true,
		KeyColumn: ColumnPath,
		Options:   []sources.Option{{Key: "flat"}},
		Open: func(ctx context.Context, cfg sources.Config) (sources.Source, error) {
			layout := LayoutClasses
			if cfg.Bool("flat") {
				layout = LayoutFlat
			}
			return NewContext(ctx, cfg.Path, Options{Layout: layout, Store: cfg.Store})
		},
	})
}
