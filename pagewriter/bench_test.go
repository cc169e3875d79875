package pagewriter_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/pagewriter"
)

// benchTotal is the payload volume of one benchmark iteration.
const benchTotal = 128 << 20

// benchPayloads returns image-like payloads (50..200 KB) adding up to about benchTotal; the
// slices share a few backing buffers.
func benchPayloads() [][]byte {
	pool := make([][]byte, 16)
	for i := range pool {
		pool[i] = make([]byte, 200<<10)
		for j := range pool[i] {
			pool[i][j] = byte(i*31 + j*7)
		}
	}
	var out [][]byte
	x, total := uint32(7), 0
	for total < benchTotal {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		n := 50<<10 + int(x%(150<<10))
		out = append(out, pool[len(out)%len(pool)][:n])
		total += n
	}
	return out
}

func payloadBytes(p [][]byte) (n int64) {
	for _, b := range p {
		n += int64(len(b))
	}
	return n
}

// BenchmarkPageWriter writes image-like payloads through the page writer (claim, coalesced
// WriteAt, tables, checksums, fsync, rename), in chunks of 64 samples from 1 or 2 workers,
// without and with the write-behind (the default), and with preallocation.
func BenchmarkPageWriter(b *testing.B) {
	pays := benchPayloads()
	fields := []mldf.FieldDesc{{Name: "label", Type: mldf.TypeInt}, {Name: "image", Type: mldf.TypeImageJPEG}}
	for _, workers := range []int{1, 2} {
		for _, opt := range []pagewriter.FileOptions{{NoWriteBehind: true}, {}, {Preallocate: true}} {
			b.Run(fmt.Sprintf("workers=%d/prealloc=%v/writebehind=%v", workers, opt.Preallocate, !opt.NoWriteBehind), func(b *testing.B) {
				b.SetBytes(payloadBytes(pays))
				dir := b.TempDir()
				var wait pagewriter.WaitStats
				var finish time.Duration
				for b.Loop() {
					path := filepath.Join(dir, "bench.mldf")
					c, err := mldf.New(mldf.Options{Fields: fields, Checksums: true})
					if err != nil {
						b.Fatal(err)
					}
					w, err := pagewriter.New(pagewriter.LocalFile(path, opt), c, pagewriter.Options{})
					if err != nil {
						b.Fatal(err)
					}
					const chunk = 64
					q := make(chan *pagewriter.Ticket, workers)
					g, ctx := errgroup.WithContext(context.Background())
					g.Go(func() error {
						defer close(q)
						for range (len(pays) + chunk - 1) / chunk {
							q <- w.Issue()
						}
						return nil
					})
					for range workers {
						g.Go(func() error {
							row := make([]byte, w.RowSize())
							pp := make([][]byte, 2)
							bt := w.NewBatch()
							for t := range q {
								bt.Reset()
								for i := t.Seq * chunk; i < min(int64(len(pays)), (t.Seq+1)*chunk); i++ {
									mldf.PutInt(row, i)
									pp[1] = pays[i]
									if err := bt.Append(row, pp); err != nil {
										return err
									}
								}
								if err := w.Commit(ctx, t, bt); err != nil {
									return err
								}
							}
							return nil
						})
					}
					if err := g.Wait(); err != nil {
						b.Fatal(err)
					}
					wait = w.Stats().Wait
					t0 := time.Now()
					if _, err := w.Finish(); err != nil {
						b.Fatal(err)
					}
					finish += time.Since(t0)
					os.Remove(path)
				}
				b.ReportMetric(float64(wait.WaitTime.Microseconds())/float64(wait.Own+wait.Helped), "µs-wait/chunk")
				b.ReportMetric(float64(finish.Milliseconds())/float64(b.N), "ms-finish/op")
			})
		}
	}
}

// BenchmarkSequentialWrite writes the same payload bytes with plain sequential 4 MiB writes,
// then fsync, close and rename: the floor the page writer is measured against. ms-sync/op is
// the time of the fsync (the page writer's ms-finish/op also writes its tables, renames and
// syncs the directory).
func BenchmarkSequentialWrite(b *testing.B) {
	pays := benchPayloads()
	b.SetBytes(payloadBytes(pays))
	dir := b.TempDir()
	buf := make([]byte, 0, 4<<20)
	var sync time.Duration
	defer func() { b.ReportMetric(float64(sync.Milliseconds())/float64(b.N), "ms-sync/op") }()
	for b.Loop() {
		tmp := filepath.Join(dir, "seq.tmp")
		f, err := os.Create(tmp)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range pays {
			if len(buf)+len(p) > cap(buf) {
				if _, err := f.Write(buf); err != nil {
					b.Fatal(err)
				}
				buf = buf[:0]
			}
			buf = append(buf, p...)
		}
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		buf = buf[:0]
		t0 := time.Now()
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		sync += time.Since(t0)
		f.Close()
		if err := os.Rename(tmp, filepath.Join(dir, "seq.out")); err != nil {
			b.Fatal(err)
		}
		os.Remove(filepath.Join(dir, "seq.out"))
	}
}
