package parquet

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/internal/pqfile/pqtest"
	"github.com/mldf/convert/pipeline"
)

// BenchmarkWideConvert converts a table of thousands of INT64 columns and 200 rows to MLDF,
// one int field per column: the whole path (the source, the pipeline's field lookups, the
// encoders) must cost in proportion to the cells, not to the square of the columns.
func BenchmarkWideConvert(b *testing.B) {
	for _, cols := range []int{1000, 4000} {
		data := pqtest.Wide(cols, 200)
		fields := make([]pipeline.Binding, cols)
		for c := range fields {
			f, err := encoders.NewInt(fmt.Sprintf("c%d", c))
			if err != nil {
				b.Fatal(err)
			}
			fields[c] = pipeline.Binding{Field: f, Column: fmt.Sprintf("c%d", c)}
		}
		b.Run(fmt.Sprintf("columns=%d", cols), func(b *testing.B) {
			out := filepath.Join(b.TempDir(), "wide.mldf")
			for b.Loop() {
				src, err := NewFiles([]string{"t.parquet"}, wideColumns(cols), Options{Workers: 2, Open: memOpener(map[string][]byte{"t.parquet": data})})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := pipeline.Run(context.Background(), pipeline.Config{Source: src, Fields: fields, Output: out, Workers: 2}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cols*200)*float64(b.N)/b.Elapsed().Seconds(), "cells/s")
		})
	}
}
