package merge

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/format/mldf"
)

// writeBigParts writes n parts of about perPart bytes each: payloads of 20..200 KB cut from
// one random buffer (incompressible, cheap to make), 2 MiB pages.
func writeBigParts(b *testing.B, out string, n int, perPart int64) (parts []string, total int64) {
	rng := rand.New(rand.NewPCG(3, 4))
	src := make([]byte, 4<<20)
	for i := range src {
		src[i] = byte(rng.Uint32())
	}
	for i := range n {
		p := PartPath(out, i, n)
		w, err := mldf.Create(p, mldf.Options{Fields: testFields, Checksums: true})
		if err != nil {
			b.Fatal(err)
		}
		var written int64
		for k := 0; written < perPart; k++ {
			bt := w.NewBatch()
			for range 16 {
				size := 20<<10 + rng.IntN(180<<10)
				off := rng.IntN(len(src) - size)
				row := make([]byte, w.RowSize())
				mldf.PutInt(row, int64(k))
				if err := bt.Append(row, [][]byte{nil, src[off : off+size]}); err != nil {
					b.Fatal(err)
				}
				written += int64(size)
			}
			if err := w.Commit(context.Background(), w.Issue(), bt); err != nil {
				b.Fatal(err)
			}
		}
		res, err := w.Finish()
		if err != nil {
			b.Fatal(err)
		}
		rec, _ := json.Marshal(Record{Part: p, Shard: i, Shards: n, RecipeSHA256: "bench", Samples: res.Samples,
			Checksum: fmt.Sprintf("%016x", res.Checksum)})
		if err := os.WriteFile(p+".done", rec, 0o644); err != nil {
			b.Fatal(err)
		}
		parts = append(parts, p)
		total += res.Size
	}
	return parts, total
}

// BenchmarkMerge merges 4 parts of about 80 MB (MERGE_BENCH_MB total, default 320): checked
// (the default: read, CRC-32C, write), and unchecked with copy_file_range and with reads and
// writes. Run with
//
//	go test ./merge -run '^$' -bench Merge -benchtime 3x
//
// The output is written and fsynced into the test's temporary folder (TMPDIR).
func BenchmarkMerge(b *testing.B) {
	mb := int64(320)
	if s := os.Getenv("MERGE_BENCH_MB"); s != "" {
		fmt.Sscan(s, &mb)
	}
	dir := b.TempDir()
	out := filepath.Join(dir, "bench.mldf")
	parts, total := writeBigParts(b, out, 4, mb<<20/4)
	for _, m := range []struct {
		name    string
		c       CopyMethod
		trusted bool
	}{{"checked", CopyAuto, false}, {"copy_file_range_unchecked", CopyAuto, true}, {"read_write_unchecked", CopyReadWrite, true}} {
		b.Run(m.name, func(b *testing.B) {
			b.SetBytes(total)
			var copyNs, syncNs, ranged, data int64
			for b.Loop() {
				rep, err := MergeWith(context.Background(), out, parts, Options{Copy: m.c, TrustParts: m.trusted})
				if err != nil {
					b.Fatal(err)
				}
				copyNs += rep.CopyTime.Nanoseconds()
				syncNs += rep.SyncTime.Nanoseconds()
				ranged += rep.RangeCopied
				data += rep.DataBytes
			}
			// copy-GB/s: the data copy alone (into the page cache); the rest is mostly fsync.
			b.ReportMetric(float64(data)/float64(max(copyNs, 1)), "copy-GB/s")
			b.ReportMetric(float64(syncNs)/1e6/float64(b.N), "sync-ms/op")
			b.ReportMetric(float64(ranged)/float64(max(data, 1)), "cfr-fraction")
		})
	}
}
