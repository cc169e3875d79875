// Package scdlarchive registers the scdl source type: SCDL archives read back as
// single-cell matrices (to merge archives, or to convert one to MLDF, a sample per cell).
// It is the one source that imports the scdl container, whose reader it uses.
package scdlarchive

import (
	"context"

	"github.com/mldf/convert/format/scdl"
	"github.com/mldf/convert/internal/cells"
	"github.com/mldf/convert/sources"
	"github.com/mldf/convert/sources/scdlsrc"
)

// An archive is read as a matrix whose values per row range are known before reading.
var _ cells.ValueCounter = (*scdl.ArchiveInput)(nil)

func init() {
	sources.Register(sources.Spec{
		Name:   "scdl",
		Inputs: sources.ByPathOrInputs,
		Cells:  true,
		Open: func(ctx context.Context, cfg sources.Config) (sources.Source, error) {
			return scdlsrc.Open(ctx, cfg, false, func(p string) (cells.Input, error) {
				rd, err := scdl.Open(p)
				if err != nil {
					return nil, err
				}
				return scdl.NewArchiveInput(rd), nil
			})
		},
	})
}
