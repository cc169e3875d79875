package h5ad

import (
	"context"
	"fmt"

	"github.com/mldf/convert/internal/cells"
	"github.com/mldf/convert/sources"
	"github.com/mldf/convert/sources/scdlsrc"
)

// The matrix an h5ad file is read as, with its categorical obs columns.
var _ cells.Categorical = (*File)(nil)

func init() {
	sources.Register(sources.Spec{
		Name:      "h5ad",
		Article:   "an", // an aitch-five-ad
		Inputs:    sources.ByInputs,
		InputNoun: ".h5ad file",
		Cells:     true,
		Options: []sources.Option{{Key: "matrix", Check: func(label string, v any) string {
			if s, _ := v.(string); s != "X" && s != "raw" {
				return fmt.Sprintf("%s: %q is not one of X, raw", label, s)
			}
			return ""
		}}},
		Available: func() error {
			if !Available() {
				return ErrUnavailable
			}
			return nil
		},
		Open: func(ctx context.Context, cfg sources.Config) (sources.Source, error) {
			return scdlsrc.Open(ctx, cfg, true, func(p string) (cells.Input, error) {
				return Open(p, Options{Matrix: cfg.String("matrix")})
			})
		},
	})
}
