//go:build !nos3

package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mldf/convert/internal/faultproxy"
	"github.com/mldf/convert/internal/s3test"
	"golang.org/x/sync/errgroup"
)

// faultEnv starts versitygw with bucket "bkt", a fault proxy in front of it, and a client
// that goes through the proxy (stall timeout 300 ms, so stalls are detected quickly).
func faultEnv(t *testing.T, opts ...Option) (*Client, *faultproxy.Proxy) {
	t.Helper()
	srv := s3test.Start(t)
	srv.MakeBucket(t, "bkt")
	p, err := faultproxy.New(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	s3test.Env(t, p.URL, s3test.SecretKey)
	c := New(append([]Option{WithRetry(8, time.Millisecond, 20*time.Millisecond), WithStallTimeout(300 * time.Millisecond)}, opts...)...)
	t.Cleanup(func() { c.Close() })
	return c, p
}

// Reads through cut connections, error answers and stalls resume and return the bytes
// that were written.
func TestFaultRead(t *testing.T) {
	c, p := faultEnv(t, WithBlockSize(256<<10), WithReadahead(2))
	ctx := context.Background()
	want := testData(3<<20+777, 5)
	url := "s3://bkt/data.bin"
	if err := c.WriteFile(ctx, url, want); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []faultproxy.Rule{
		{Name: "cut body", Match: faultproxy.IsGet, Fault: faultproxy.CutResponse, After: 100_000, Times: 4},
		{Name: "cut at once", Match: faultproxy.IsGet, Fault: faultproxy.CutResponse, After: 0, Times: 3},
		{Name: "slowdown", Match: faultproxy.IsGet, Fault: faultproxy.Status, Status: 503, Code: "SlowDown", Times: 3},
		{Name: "503 head", Match: faultproxy.IsHead, Fault: faultproxy.Status, Status: 503, Code: "ServiceUnavailable", Times: 2},
		{Name: "500", Match: faultproxy.IsGet, Fault: faultproxy.Status, Status: 500, Code: "InternalError", Times: 2},
		{Name: "429", Match: faultproxy.IsGet, Fault: faultproxy.Status, Status: 429, Code: "TooManyRequests", Times: 2},
		{Name: "stall mid-body", Match: faultproxy.IsGet, Fault: faultproxy.Stall, After: 50_000, Times: 2},
		{Name: "stall before answer", Match: faultproxy.IsGet, Fault: faultproxy.Stall, After: -1, Times: 1},
	} {
		t.Run(tc.Name, func(t *testing.T) {
			p.Reset()
			p.Add(tc)
			if got := readAll(t, c, url); !bytes.Equal(got, want) {
				t.Fatalf("streamed %d bytes, differ from the %d written", len(got), len(want))
			}
			if p.Hits(tc.Name) != tc.Times {
				t.Fatalf("fault hit %d times, want %d", p.Hits(tc.Name), tc.Times)
			}
			p.Reset()
			p.Add(tc)
			ra, err := c.OpenReaderAt(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer ra.Close()
			buf := make([]byte, 1<<20)
			if _, err := ra.ReadAt(buf, 12345); err != nil || !bytes.Equal(buf, want[12345:12345+len(buf)]) {
				t.Fatalf("ReadAt: %v", err)
			}
		})
	}
}

// A body that breaks mid-stream resumes where it broke: the retry asks for the rest only.
func TestFaultResumeRange(t *testing.T) {
	c, p := faultEnv(t, WithBlockSize(1<<20), WithReadahead(0))
	ctx := context.Background()
	want := testData(1<<20, 6)
	url := "s3://bkt/one-block.bin"
	if err := c.WriteFile(ctx, url, want); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ranges []string
	p.Add(faultproxy.Rule{Name: "record", Match: func(r *http.Request) bool {
		if faultproxy.IsGet(r) {
			mu.Lock()
			ranges = append(ranges, r.Header.Get("Range"))
			mu.Unlock()
		}
		return false
	}})
	p.Add(faultproxy.Rule{Name: "cut", Match: faultproxy.IsGet, Fault: faultproxy.CutResponse, After: 300_000, Times: 1})
	if got := readAll(t, c, url); !bytes.Equal(got, want) {
		t.Fatal("bytes differ")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ranges) != 2 || ranges[0] != "bytes=0-1048575" || ranges[1] != "bytes=300000-1048575" {
		t.Fatalf("ranges asked: %q", ranges)
	}
}

// An object replaced between two attempts of a read is reported, not spliced.
func TestFaultChangedBetweenAttempts(t *testing.T) {
	// The replacing write runs while the cut request waits: a long stall timeout, so that a
	// slow machine does not retry that request before the object was replaced.
	c, p := faultEnv(t, WithBlockSize(1<<20), WithReadahead(0), WithStallTimeout(time.Minute))
	ctx := context.Background()
	url := "s3://bkt/replaced.bin"
	if err := c.WriteFile(ctx, url, testData(1<<20, 1)); err != nil {
		t.Fatal(err)
	}
	other := New(testOpts()...) // writes through the proxy too, but no rule matches a PUT
	defer other.Close()
	p.Add(faultproxy.Rule{Name: "cut and replace", Match: faultproxy.IsGet, Fault: faultproxy.CutResponse, After: 1000, Times: 1,
		OnHit: func() {
			if err := other.WriteFile(ctx, url, testData(1<<20, 2)); err != nil {
				t.Error(err)
			}
		}})
	r, err := c.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = io.Copy(io.Discard, r)
	wantErr(t, err, ErrChanged, url)
}

// A store that keeps failing gives up after the attempts, with one error naming the URL.
func TestFaultGiveUp(t *testing.T) {
	c, p := faultEnv(t)
	ctx := context.Background()
	url := "s3://bkt/x.bin"
	if err := c.WriteFile(ctx, url, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	p.Add(faultproxy.Rule{Name: "always", Match: faultproxy.IsHead, Fault: faultproxy.Status, Status: 503, Code: "SlowDown"})
	_, err := c.Stat(ctx, url)
	wantErr(t, err, ErrUnavailable, url)
	if p.Hits("always") != 8 {
		t.Fatalf("%d attempts, want 8", p.Hits("always"))
	}
	// Cancelling stops the retries at once.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Stat(cctx, url); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// Uploads retry through cut request bodies, 503 SlowDown and stalls, and the object holds
// exactly the bytes of the parts.
func TestFaultUpload(t *testing.T) {
	c, p := faultEnv(t)
	ctx := context.Background()
	const part = MinPartSize
	want := testData(3*part+999, 8)
	url := "s3://bkt/up.bin"
	rules := []faultproxy.Rule{
		{Name: "cut part", Match: faultproxy.IsUploadPart, Fault: faultproxy.CutRequest, After: 1 << 20, Times: 2},
		{Name: "slowdown part", Match: faultproxy.IsUploadPart, Fault: faultproxy.Status, Status: 503, Code: "SlowDown", Times: 2},
		{Name: "stall part", Match: faultproxy.IsUploadPart, Fault: faultproxy.Stall, After: -1, Times: 1},
		{Name: "cut complete", Match: faultproxy.IsComplete, Fault: faultproxy.CutRequest, After: 10, Times: 1},
		{Name: "500 complete", Match: faultproxy.IsComplete, Fault: faultproxy.Status, Status: 500, Code: "InternalError", Times: 1},
		{Name: "cut copy", Match: faultproxy.IsCopyPart, Fault: faultproxy.Status, Status: 503, Code: "SlowDown", Times: 1},
		{Name: "cut put", Match: faultproxy.IsPut, Fault: faultproxy.CutRequest, After: 100, Times: 2},
	}
	for _, r := range rules {
		p.Add(r)
	}
	if err := c.WriteFile(ctx, "s3://bkt/small.txt", []byte("a report of some length")); err != nil {
		t.Fatal(err)
	}
	u, err := c.NewUpload(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var g errgroup.Group
	for _, n := range []int{3, 1, 2} {
		g.Go(func() error { return u.UploadPart(ctx, n, want[(n-1)*part:n*part]) })
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile(ctx, "s3://bkt/tail.bin", want[3*part:]); err != nil {
		t.Fatal(err)
	}
	if err := u.CopyPart(ctx, 4, "s3://bkt/tail.bin", 0, int64(len(want)-3*part)); err != nil {
		t.Fatal(err)
	}
	if err := u.Complete(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		if p.Hits(r.Name) != r.Times {
			t.Errorf("rule %q hit %d times, want %d", r.Name, p.Hits(r.Name), r.Times)
		}
	}
	p.Reset()
	if got := readAll(t, c, url); !bytes.Equal(got, want) {
		t.Fatal("uploaded object differs")
	}
	if got := readAll(t, c, "s3://bkt/small.txt"); string(got) != "a report of some length" {
		t.Fatalf("small object: %q", got)
	}
}

// A Complete whose answer is lost (the server did it, the connection broke before the
// reply) is retried, finds the upload gone and the object in place, and succeeds.
func TestFaultCompleteAnswerLost(t *testing.T) {
	c, p := faultEnv(t)
	ctx := context.Background()
	want := testData(MinPartSize+10, 3)
	url := "s3://bkt/lost.bin"
	u, err := c.NewUpload(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.UploadPart(ctx, 1, want[:MinPartSize]); err != nil {
		t.Fatal(err)
	}
	if err := u.UploadPart(ctx, 2, want[MinPartSize:]); err != nil {
		t.Fatal(err)
	}
	p.Add(faultproxy.Rule{Name: "lost answer", Match: faultproxy.IsComplete, Fault: faultproxy.CutResponse, After: 0, Times: 1})
	if err := u.Complete(ctx); err != nil {
		t.Fatal(err)
	}
	if p.Hits("lost answer") != 1 {
		t.Fatal("fault did not fire")
	}
	if got := readAll(t, c, url); !bytes.Equal(got, want) {
		t.Fatal("object differs")
	}
}

// Close stops fetches that are stuck on a silent server (the stall timeout here is far
// away: only the cancellation can end them), and Prefetcher.Close does the same for the
// inputs it opened ahead.
func TestFaultCloseStopsStalledFetches(t *testing.T) {
	c, p := faultEnv(t, WithStallTimeout(10*time.Minute), WithBlockSize(64<<10), WithReadahead(2))
	ctx := context.Background()
	for _, u := range []string{"s3://bkt/a", "s3://bkt/b", "s3://bkt/c"} {
		if err := c.WriteFile(ctx, u, testData(1<<20, 1)); err != nil {
			t.Fatal(err)
		}
	}
	p.Add(faultproxy.Rule{Name: "silent", Match: faultproxy.IsGet, Fault: faultproxy.Stall, After: -1})
	// waitHits waits until the silent server holds more than n requests.
	waitHits := func(n int) {
		for p.Hits("silent") <= n {
			time.Sleep(5 * time.Millisecond)
		}
	}
	r, err := c.Open(ctx, "s3://bkt/a")
	if err != nil {
		t.Fatal(err)
	}
	waitHits(0)
	r.Close()
	if _, err := r.Read(make([]byte, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
	n := p.Hits("silent")
	pf := c.Prefetch(ctx, []string{"s3://bkt/a", "s3://bkt/b", "s3://bkt/c"}, 2)
	waitHits(n + 2)
	pf.Close()
	// A cancelled context ends a read waiting on a silent server.
	cctx, cancel := context.WithCancel(ctx)
	r, err = c.Open(cctx, "s3://bkt/b")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n = p.Hits("silent")
	go func() {
		waitHits(n)
		cancel()
	}()
	if _, err := io.Copy(io.Discard, r); !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel: %v", err)
	}
}

// A listing whose entries lack <LastModified> (a broken server or proxy) makes gocloud's
// s3blob panic; every operation that lists gives an ErrBadReply naming its URL instead. A
// listing without <Size> is refused too: a missing size is never a size of 0.
func TestFaultListingWithoutFields(t *testing.T) {
	c, p := faultEnv(t)
	ctx := context.Background()
	var names []string
	for i := range 40 {
		u := fmt.Sprintf("s3://bkt/l/s-%03d.tar", i)
		names = append(names, u)
		if err := c.WriteFile(ctx, u, testData(100+i, 1)); err != nil {
			t.Fatal(err)
		}
	}
	for _, elem := range []string{"LastModified", "Size"} {
		t.Run(elem, func(t *testing.T) {
			p.Reset()
			p.Add(faultproxy.Rule{Name: "strip", Match: faultproxy.IsList, Fault: faultproxy.StripElement, Element: elem})
			_, err := c.Expand(ctx, []string{"s3://bkt/l/s-*.tar"})
			wantErr(t, err, ErrBadReply, "s3://bkt/l/s-*.tar")
			_, err = c.Expand(ctx, names) // many literal names: checked against one listing
			wantErr(t, err, ErrBadReply, "s3://bkt/l/s-")
			for _, err := range c.List(ctx, "s3://bkt/l/") {
				wantErr(t, err, ErrBadReply, "s3://bkt/l/")
			}
			if p.Hits("strip") == 0 {
				t.Fatal("the fault did not fire")
			}
		})
	}
	p.Reset()
	if got, err := c.Expand(ctx, []string{"s3://bkt/l/s-*.tar"}); err != nil || len(got) != 40 {
		t.Fatalf("without the fault: %d, %v", len(got), err)
	}
}

// guard turns a library's panic into ErrBadReply and passes errors through.
func TestGuard(t *testing.T) {
	err := guard(func() error {
		var p *int
		return fmt.Errorf("%d", *p)
	})
	if !errors.Is(err, ErrBadReply) {
		t.Fatalf("guard: %v", err)
	}
	if err := guard(func() error { return io.EOF }); err != io.EOF {
		t.Fatalf("guard passed %v", err)
	}
}

// HEAD replies without Content-Length (sent chunked by some proxies): the size is asked of
// a ranged GET, so an object is never read as empty. The whole conformance suite runs so.
func TestConformanceS3NoContentLength(t *testing.T) {
	c, p := faultEnv(t)
	p.Add(faultproxy.Rule{Name: "no length", Match: faultproxy.IsHead, Fault: faultproxy.StripHeader, Header: "Content-Length"})
	ctx := context.Background()
	var lines bytes.Buffer
	for i := range 2000 {
		fmt.Fprintf(&lines, "{\"text\": \"line %d\"}\n", i)
	}
	url := "s3://bkt/data.jsonl"
	if err := c.WriteFile(ctx, url, lines.Bytes()); err != nil {
		t.Fatal(err)
	}
	a, err := c.Stat(ctx, url)
	if err != nil || a.Size != int64(lines.Len()) {
		t.Fatalf("stat: %+v, %v; want %d bytes", a, err, lines.Len())
	}
	if got := readAll(t, c, url); !bytes.Equal(got, lines.Bytes()) {
		t.Fatalf("read %d bytes, want %d", len(got), lines.Len())
	}
	if p.Hits("no length") == 0 {
		t.Fatal("the fault did not fire")
	}
	conformance(t, c, "s3://bkt/")
}

// A HEAD without Content-Length and a ranged GET whose reply does not say the total either:
// an error naming the URL, not an empty object.
func TestFaultNoSizeAnywhere(t *testing.T) {
	c, p := faultEnv(t)
	ctx := context.Background()
	url := "s3://bkt/x.jsonl"
	if err := c.WriteFile(ctx, url, []byte("{}\n{}\n")); err != nil {
		t.Fatal(err)
	}
	p.Add(faultproxy.Rule{Name: "head", Match: faultproxy.IsHead, Fault: faultproxy.StripHeader, Header: "Content-Length"})
	p.Add(faultproxy.Rule{Name: "get", Match: faultproxy.IsGet, Fault: faultproxy.StripHeader, Header: "Content-Range"})
	_, err := c.Stat(ctx, url)
	wantErr(t, err, ErrBadReply, url)
	_, err = c.Open(ctx, url)
	wantErr(t, err, ErrBadReply, url)
}
