package scdl

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkWrite measures the archive writer alone (an in-memory input of 20,000 cells x
// 2,000 genes at 5%): cells/s and MB/s of archive written. bench/scdl.sh measures whole
// conversions from h5ad.
func BenchmarkWrite(b *testing.B) {
	in := randomInput("bench", 1, 20000, 2000, 0.05)
	for _, workers := range []int{1, 2} {
		b.Run(map[int]string{1: "workers=1", 2: "workers=2"}[workers], func(b *testing.B) {
			var out int64
			for i := range b.N {
				rep, err := Write(context.Background(), filepath.Join(b.TempDir(), "x", string(rune('a'+i%26))), []Input{in}, Options{Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				out = rep.BytesOut
			}
			b.SetBytes(out)
			b.ReportMetric(float64(20000*b.N)/b.Elapsed().Seconds(), "cells/s")
		})
	}
}
