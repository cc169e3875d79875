package multipart_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/pagewriter/multipart"
	"github.com/mldf/convert/pagewriter/pwtest"
)

var fields = []mldf.FieldDesc{
	{Name: "label", Type: mldf.TypeInt},
	{Name: "data", Type: mldf.TypeBytes},
	{Name: "img", Type: mldf.TypeImageJPEG},
}

// fill appends chunk c: 7 samples with an int and two payloads of varied sizes, some empty,
// some larger than a 4 KiB page.
func fill(c int, b *pagewriter.Batch) error {
	for i := range 7 {
		id := c*7 + i
		row := make([]byte, 48)
		mldf.PutInt(row, int64(id))
		mldf.ImageMeta{Height: uint16(id), Width: 3, Channels: 3, Mode: 1}.Put(row[24:])
		sizes := []int{(id * 37) % 300, (id * 7919) % 12000}
		if id%5 == 0 {
			sizes[0] = 0
		}
		p := [][]byte{nil, nil, nil}
		for k, s := range sizes {
			d := make([]byte, s)
			for j := range d {
				d[j] = byte(id + j + k)
			}
			p[k+1] = d
		}
		if err := b.Append(row, p); err != nil {
			return err
		}
	}
	return nil
}

// write writes chunks chunks with workers goroutines to open.
func write(t testing.TB, ctx context.Context, open pagewriter.SinkOpener, page int64, workers, chunks int) (pagewriter.Result, error) {
	t.Helper()
	c, err := mldf.New(mldf.Options{PageSize: page, Fields: fields, Checksums: true})
	if err != nil {
		t.Fatal(err)
	}
	w, err := pagewriter.New(open, c, pagewriter.Options{ScratchDir: t.TempDir()})
	if err != nil {
		return pagewriter.Result{}, err
	}
	if err := pwtest.Drive(ctx, w, workers, chunks, fill); err != nil {
		w.Abort()
		return pagewriter.Result{}, err
	}
	return w.Finish()
}

func local(t *testing.T, page int64, chunks int) []byte {
	path := filepath.Join(t.TempDir(), "ref.mldf")
	if _, err := write(t, context.Background(), pagewriter.LocalFile(path, pagewriter.FileOptions{}), page, 1, chunks); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// upload returns a sink opener over u that also hands back the sink.
func upload(u *pwtest.Uploader, opt multipart.Options, sink **multipart.Sink) pagewriter.SinkOpener {
	return uploadCtx(context.Background(), u, opt, sink)
}

func uploadCtx(ctx context.Context, u *pwtest.Uploader, opt multipart.Options, sink **multipart.Sink) pagewriter.SinkOpener {
	open := pagewriter.Multipart(ctx, "mem://bucket/x.mldf", func() (multipart.Uploader, error) { return u, nil }, opt)
	return func(l pagewriter.SinkLayout) (pagewriter.Sink, error) {
		s, err := open(l)
		if err == nil && sink != nil {
			*sink = s.(*multipart.Sink)
		}
		return s, err
	}
}

// checkOrder checks that part 1's upload started after every other part's upload ended,
// that Complete came last, once, and Abort never.
func checkOrder(t *testing.T, u *pwtest.Uploader) {
	t.Helper()
	ev := u.Events()
	start1, lastEnd := -1, -1
	for i, e := range ev {
		switch {
		case e.Kind == "start" && e.Part == 1:
			start1 = i
		case e.Kind == "end" && e.Part != 1:
			lastEnd = i
		}
	}
	if start1 < 0 || start1 < lastEnd {
		t.Fatalf("part 1 started at event %d, before another part ended (event %d)", start1, lastEnd)
	}
	if u.Count("complete") != 1 || ev[len(ev)-1].Kind != "complete" || u.Count("abort") != 0 {
		t.Fatalf("%d completes (last event %+v), %d aborts", u.Count("complete"), ev[len(ev)-1], u.Count("abort"))
	}
}

// The object is the local file's bytes for 1, 2 and 8 workers, with parts that cut pages and
// payloads at awkward places, growing part sizes, pages larger than parts (parts before the data region, written only by
// the finalizer), the fewest buffers allowed (2),
// and an object smaller than a part; every part but the last is at least the minimum.
func TestSameBytes(t *testing.T) {
	const chunks = 60
	for _, tc := range []struct {
		name string
		page int64
		opt  multipart.Options
	}{
		{"5000-grow-2buf", 4096, multipart.Options{PartSize: 5000, MinPartSize: 5000, GrowEvery: 3, Buffers: 2}},
		{"12289-2buf", 4096, multipart.Options{PartSize: 3*4096 + 1, MinPartSize: 1000, Buffers: 2}},
		{"page-over-part", 1 << 16, multipart.Options{PartSize: 5000, MinPartSize: 5000, GrowEvery: 7, Buffers: 2}},
		{"page-is-parts", 1 << 16, multipart.Options{PartSize: 4096, MinPartSize: 4096, Buffers: 2}},
		{"whole-pages", 4096, multipart.Options{PartSize: 8 * 4096, MinPartSize: 4096}},
		{"one-part", 4096, multipart.Options{}},
	} {
		want := local(t, tc.page, chunks)
		for _, workers := range []int{1, 2, 8} {
			t.Run(fmt.Sprintf("%s/workers=%d", tc.name, workers), func(t *testing.T) {
				u := &pwtest.Uploader{}
				var s *multipart.Sink
				res, err := write(t, context.Background(), upload(u, tc.opt, &s), tc.page, workers, chunks)
				if err != nil {
					t.Fatal(err)
				}
				if got := u.Object(); !bytes.Equal(got, want) {
					t.Fatalf("object of %d bytes differs from the local file (%d bytes)", len(got), len(want))
				}
				if res.Path != "mem://bucket/x.mldf" || res.Size != int64(len(want)) {
					t.Fatalf("result %+v", res)
				}
				checkOrder(t, u)
				sizes := u.PartSizes()
				min := tc.opt.MinPartSize
				if min == 0 {
					min = multipart.DefaultMinPartSize
				}
				for k := 1; k < len(sizes)-1; k++ {
					if int64(sizes[k]) < min {
						t.Fatalf("part %d of %d is %d bytes, below the minimum %d", k, len(sizes)-1, sizes[k], min)
					}
				}
				if b := s.Bound(res.Size); s.Stats().PeakBuffer > b {
					t.Fatalf("peak buffers %d, bound %d", s.Stats().PeakBuffer, b)
				}
			})
		}
	}
}

// An upload that fails, or a Complete that fails, aborts the upload exactly once and never
// completes it (or completes it only in the failing call); nothing is left.
func TestFailure(t *testing.T) {
	boom := errors.New("503 slow down (injected)")
	opt := multipart.Options{PartSize: 5000, MinPartSize: 5000, Buffers: 2}
	ref := local(t, 4096, 60)
	h, err := mldf.DecodeHeader(ref[mldf.HeaderOffset:])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		part         int
		failComplete bool
	}{
		{"data part", 3, false},
		{"table part", int(h.MetadataPtr)/5000 + 2, false},
		{"last part", (len(ref)-1)/5000 + 1, false},
		{"part 1", 1, false},
		{"complete", 0, true},
	} {
		for _, workers := range []int{1, 8} {
			t.Run(fmt.Sprintf("%s/workers=%d", tc.name, workers), func(t *testing.T) {
				u := &pwtest.Uploader{FailPart: tc.part, FailComplete: tc.failComplete, FailErr: boom}
				_, err := write(t, context.Background(), upload(u, opt, nil), 4096, workers, 60)
				if !errors.Is(err, boom) {
					t.Fatalf("got %v, want the injected error", err)
				}
				completes := 0
				if tc.failComplete {
					completes = 1
				}
				if u.Count("abort") != 1 || u.Count("complete") != completes || u.Object() != nil {
					t.Fatalf("%d aborts, %d completes, object %v", u.Count("abort"), u.Count("complete"), u.Object() != nil)
				}
			})
		}
	}
}

// Cancelling the run's context while writers wait for buffers (the store stalls) wakes them;
// the run aborts the upload exactly once and never completes it.
func TestCancel(t *testing.T) {
	u := &pwtest.Uploader{Gate: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	var s *multipart.Sink
	done := make(chan error, 1)
	go func() {
		_, err := write(t, ctx, uploadCtx(ctx, u, multipart.Options{PartSize: 5000, MinPartSize: 5000, Buffers: 2}, &s), 4096, 4, 60)
		done <- err
	}()
	// Wait until uploads are stuck in the store (so writers wait for buffers), then interrupt.
	for deadline := time.Now().Add(10 * time.Second); u.PeakInFlight() < 2 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if u.Count("abort") != 1 || u.Count("complete") != 0 {
		t.Fatalf("%d aborts, %d completes", u.Count("abort"), u.Count("complete"))
	}
}

// With every upload held by the store for a while (a millisecond each), the number of parts
// in flight stays within the buffer bound (without back-pressure the writers would run
// ahead and every finished part would be in flight), and the buffer memory within
// (N + 2) × part size.
func TestMemoryBound(t *testing.T) {
	const n = 2
	u := &pwtest.Uploader{Gate: make(chan struct{})}
	var s *multipart.Sink
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if inFlight(u) == 0 {
				continue
			}
			select {
			case u.Gate <- struct{}{}:
			case <-stop:
				return
			}
		}
	}()
	defer close(stop)
	opt := multipart.Options{PartSize: 5000, MinPartSize: 5000, Buffers: n}
	c, err := mldf.New(mldf.Options{PageSize: 4096, Fields: fields, Checksums: true})
	if err != nil {
		t.Fatal(err)
	}
	w, err := pagewriter.New(upload(u, opt, &s), c, pagewriter.Options{ScratchDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := pwtest.Drive(context.Background(), w, 8, 40, fill); err != nil {
		t.Fatal(err)
	}
	res, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	parts := len(u.PartSizes()) - 1
	if p := u.PeakInFlight(); p > n+1 || parts < 10*n {
		t.Fatalf("%d uploads in flight at once (bound %d) of %d parts", p, n+1, parts)
	}
	if peak, bound := s.Stats().PeakBuffer, s.Bound(res.Size); peak > bound {
		t.Fatalf("peak buffers %d, bound %d", peak, bound)
	}
	t.Logf("%d parts, at most %d in flight, peak buffers %d bytes", parts, u.PeakInFlight(), s.Stats().PeakBuffer)
}

func inFlight(u *pwtest.Uploader) int {
	n := 0
	for _, e := range u.Events() {
		switch e.Kind {
		case "start":
			n++
		case "end":
			n--
		}
	}
	return n
}

// The sink refuses bytes delivered twice, a commit with bytes missing, and an object larger
// than its parts allow; each aborts the upload once.
func TestSinkChecks(t *testing.T) {
	opt := multipart.Options{PartSize: 100, MinPartSize: 100, MaxParts: 3}
	ctx := context.Background()
	u := &pwtest.Uploader{}
	s, err := multipart.New(ctx, u, "x", 0, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteAt(make([]byte, 150), 100); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteAt(make([]byte, 10), 190); !errors.Is(err, multipart.ErrOverlap) {
		t.Fatalf("double write: %v", err)
	}
	s.Abort()
	s.Abort()
	if u.Count("abort") != 1 {
		t.Fatalf("%d aborts", u.Count("abort"))
	}

	u = &pwtest.Uploader{}
	s, _ = multipart.New(ctx, u, "x", 0, opt)
	s.Zero(0, 100)
	s.WriteAt([]byte("x"), 250)
	if err := s.Commit(251); !errors.Is(err, multipart.ErrMissing) || u.Count("abort") != 1 || u.Count("complete") != 0 {
		t.Fatalf("commit with a hole: %v, %d aborts, %d completes", err, u.Count("abort"), u.Count("complete"))
	}

	u = &pwtest.Uploader{}
	s, _ = multipart.New(ctx, u, "x", 0, opt)
	if _, err := s.WriteAt([]byte("x"), 300); !errors.Is(err, multipart.ErrTooLarge) {
		t.Fatalf("past the last part: %v", err)
	}
	s.Abort()

	if _, err := multipart.New(ctx, u, "x", 0, multipart.Options{PartSize: 1 << 20}); !errors.Is(err, multipart.ErrOptions) {
		t.Fatalf("part below the minimum: %v", err)
	}
	if _, err := multipart.New(ctx, u, "x", 0, multipart.Options{Buffers: 1}); !errors.Is(err, multipart.ErrOptions) {
		t.Fatalf("one buffer: %v", err)
	}
}

// Part buffers are reused without clearing: bytes declared with Zero in a reused buffer are
// zeros, and a gather write (WriteVec) gives the bytes of the same write joined.
func TestReusedBuffersAndGather(t *testing.T) {
	const part = 100
	opt := multipart.Options{PartSize: part, MinPartSize: part, Buffers: 2}
	u := &pwtest.Uploader{}
	s, err := multipart.New(context.Background(), u, "x", 0, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 20*part+37)
	for i := range want {
		want[i] = byte(i%250 + 1)
	}
	// Part 1 last; parts 2.. in order, each a gather write of uneven pieces, and every
	// other one's middle declared zero (after the buffers held non-zero bytes).
	for off := int64(part); off < int64(len(want)); off += part {
		end := min(off+part, int64(len(want)))
		if (off/part)%2 == 0 && end-off > 40 {
			clear(want[off+10 : off+40])
			if _, err := s.WriteVec([][]byte{want[off : off+3], want[off+3 : off+10]}, off); err != nil {
				t.Fatal(err)
			}
			if err := s.Zero(off+10, 30); err != nil {
				t.Fatal(err)
			}
			if _, err := s.WriteVec([][]byte{want[off+40 : end]}, off+40); err != nil {
				t.Fatal(err)
			}
			continue
		}
		mid := min(off+50, end)
		if _, err := s.WriteVec([][]byte{want[off : off+1], {}, want[off+1 : mid], want[mid:end]}, off); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.WriteAt(want[:part], 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(int64(len(want))); err != nil {
		t.Fatal(err)
	}
	if got := u.Object(); !bytes.Equal(got, want) {
		t.Fatalf("the object differs from what was written")
	}
}
