package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/mldf/convert/internal/dedup"
	"github.com/mldf/convert/sample"
)

// dupBenchSource yields n small samples (a 32-byte BYTES payload and an INT), one in ten a
// copy of an earlier unique one's payload, generated as they are emitted (nothing held).
type dupBenchSource struct{ n int64 }

func (s dupBenchSource) Len() int64 { return s.n }

func (s dupBenchSource) Run(ctx context.Context, emit func(sample.Sample) error) error {
	for i := range s.n {
		k := i
		if i%10 == 9 {
			k = (i * 7919 % 1000003) * i / 1000003 / 10 * 10 // an earlier sample (spread over the past) that is not itself a copy
		}
		data := fmt.Appendf(make([]byte, 0, 32), "%032d", k)
		err := emit(sample.Sample{Index: i, Key: strconv.FormatInt(i, 10), Origin: "bench", InputBytes: 32,
			Values: []sample.Column{{Name: "label", Value: sample.Value{Kind: sample.KindInt, Int: i}},
				{Name: "data", Value: sample.Value{Kind: sample.KindBytes, Bytes: data}}}})
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// BenchmarkDedup converts DEDUP_BENCH_N samples (default 200000; bench/dedup.sh runs 10^7
// through the command) with 10% duplicates, without dedup and with dedup on the payload
// field, and reports samples/s and the dedup table's peak mapped bytes (its cap holds
// whatever the count). Run it with -benchtime=1x.
func BenchmarkDedup(b *testing.B) {
	n := int64(200000)
	if v, err := strconv.ParseInt(os.Getenv("DEDUP_BENCH_N"), 10, 64); err == nil && v > 0 {
		n = v
	}
	for _, mode := range []string{"off", "drop"} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			for b.Loop() {
				cfg := Config{Source: dupBenchSource{n}, Fields: testFields(), Output: filepath.Join(dir, "out.mldf"), Workers: 2, Checksums: true}
				var tab *dedup.Table
				if mode != "off" {
					var err error
					if tab, err = dedup.New(dedup.Config{Dir: dir, Expected: n}); err != nil {
						b.Fatal(err)
					}
					cfg.Dedup = &Dedup{Fields: []string{"data"}, Table: tab}
				}
				rep, err := Run(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				if want := n / 10; mode != "off" && rep.Duplicates != want {
					b.Fatalf("%d duplicates, want %d", rep.Duplicates, want)
				}
				b.ReportMetric(float64(n)/rep.Elapsed.Seconds(), "samples/s")
				if tab != nil {
					b.ReportMetric(float64(tab.Stats().PeakMemory), "table-peak-memory-B")
					tab.Close()
				}
			}
		})
	}
}
