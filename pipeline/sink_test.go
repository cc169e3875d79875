package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/pagewriter/multipart"
	"github.com/mldf/convert/pagewriter/pwtest"
)

func uploadTo(ctx context.Context, u *pwtest.Uploader, opt multipart.Options) pagewriter.SinkOpener {
	return pagewriter.Multipart(ctx, "mem://bucket/out.mldf", func() (multipart.Uploader, error) { return u, nil }, opt)
}

// A run to a multipart upload produces the local run's bytes, for any worker count, with
// parts that cut pages and payloads anywhere.
func TestMultipartSink(t *testing.T) {
	samples := mixedSamples(400, 4096, true)
	out := outPath(t)
	mustRun(t, Config{Source: newSource(samples), Fields: testFields(), Output: out, PageSize: 4096, Checksums: true, Workers: 1})
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			u := &pwtest.Uploader{}
			opt := multipart.Options{PartSize: 7001, MinPartSize: 7001, GrowEvery: 5, Buffers: 2, ScratchDir: t.TempDir()}
			rep := mustRun(t, Config{Source: newSource(samples), Fields: testFields(), Output: "mem://bucket/out.mldf",
				PageSize: 4096, Checksums: true, Workers: workers, ChunkSize: 7, Sink: uploadTo(context.Background(), u, opt)})
			if got := u.Object(); !bytes.Equal(got, want) {
				t.Fatalf("object of %d bytes differs from the local file of %d", len(got), len(want))
			}
			if rep.Samples == 0 || u.Count("abort") != 0 || u.Count("complete") != 1 {
				t.Fatalf("report %+v, %d aborts, %d completes", rep, u.Count("abort"), u.Count("complete"))
			}
		})
	}
}

// An interrupted run (SIGINT cancels the context) while the store stalls aborts the upload
// exactly once, never completes it, and leaves no goroutine.
func TestMultipartInterrupted(t *testing.T) {
	defer goleak.VerifyNone(t)
	u := &pwtest.Uploader{Gate: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for deadline := time.Now().Add(10 * time.Second); u.PeakInFlight() < 1 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	opt := multipart.Options{PartSize: 5000, MinPartSize: 5000, Buffers: 2, ScratchDir: t.TempDir()}
	_, err := Run(ctx, Config{Source: newSource(mixedSamples(500, 4096, false)), Fields: testFields(), Output: "mem://bucket/out.mldf",
		PageSize: 4096, Workers: 4, ChunkSize: 4, Sink: uploadTo(ctx, u, opt)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if u.Count("abort") != 1 || u.Count("complete") != 0 || u.Object() != nil {
		t.Fatalf("%d aborts, %d completes", u.Count("abort"), u.Count("complete"))
	}
}
