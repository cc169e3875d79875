package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mldf/convert/sample"
)

// BenchmarkPipeline runs the whole pipeline with cheap fields (an INT label and a 64 B or
// 1 KiB BYTES payload per sample), so it measures the machinery: chunking, ordered claims, writes,
// tables, fsync. It reports samples/s and the time workers waited for their turn to claim.
func BenchmarkPipeline(b *testing.B) {
	const n = 100_000
	for _, size := range []int{64, 1024} {
		payload := make([]byte, size)
		for i := range payload {
			payload[i] = byte(i)
		}
		samples := make([]sample.Sample, n)
		for i := range samples {
			samples[i] = mkSample(i, int64(i), payload)
		}
		for _, workers := range []int{1, 2} {
			chunk := DefaultChunkSize
			b.Run(fmt.Sprintf("payload=%d/workers=%d", size, workers), func(b *testing.B) {
				b.SetBytes(int64(n * len(payload)))
				dir := b.TempDir()
				var rep Report
				var elapsed time.Duration
				for b.Loop() {
					out := filepath.Join(dir, "bench.mldf")
					var err error
					rep, err = Run(context.Background(), Config{Source: newSource(samples), Fields: testFields(), Output: out,
						Workers: workers, ChunkSize: chunk, Checksums: true})
					if err != nil {
						b.Fatal(err)
					}
					elapsed += rep.Elapsed
					os.Remove(out)
				}
				b.ReportMetric(float64(n)*float64(b.N)/elapsed.Seconds(), "samples/s")
				b.ReportMetric(float64(rep.ClaimWait.Microseconds())/1000, "ms-claim-wait")
				b.ReportMetric(100*rep.ClaimWait.Seconds()/(float64(workers)*rep.Elapsed.Seconds()), "%claim-wait")
				b.ReportMetric(float64(rep.InputWait.Microseconds())/1000, "ms-input-wait")
				b.ReportMetric(float64(rep.Waited), "blocked-claims")
				b.ReportMetric(float64(rep.ClaimsHelped), "helped-claims")
			})
		}
	}
}
