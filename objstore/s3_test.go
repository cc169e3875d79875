package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mldf/convert/internal/s3test"
	"go.uber.org/goleak"
	"golang.org/x/sync/errgroup"
)

func TestS3RoundTrip(t *testing.T) {
	c, _ := newS3(t, WithBlockSize(64<<10), WithReadahead(2))
	ctx := context.Background()
	for _, n := range []int{0, 1, 4095, 64<<10 + 1, 5<<20 + 3, 13<<20 + 7} {
		url := "s3://bkt/dir/obj-" + itoa(n)
		want := testData(n, uint64(n))
		if err := c.WriteFile(ctx, url, want); err != nil {
			t.Fatalf("write %d: %v", n, err)
		}
		a, err := c.Stat(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		if a.Size != int64(n) || a.URL != url {
			t.Fatalf("stat %s: %+v", url, a)
		}
		if got := readAll(t, c, url); !bytes.Equal(got, want) {
			t.Fatalf("%s: read %d bytes, differ from the %d written", url, len(got), n)
		}
	}
}

func TestS3ReadAt(t *testing.T) {
	c, _ := newS3(t)
	ctx := context.Background()
	want := testData(3<<20+11, 7)
	url := "s3://bkt/ra.bin"
	if err := c.WriteFile(ctx, url, want); err != nil {
		t.Fatal(err)
	}
	r, err := c.OpenReaderAt(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != int64(len(want)) {
		t.Fatalf("size %d, want %d", r.Size(), len(want))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		off := rng.Int64N(int64(len(want)))
		n := rng.IntN(200 << 10)
		buf := make([]byte, n)
		got, err := r.ReadAt(buf, off)
		end := min(off+int64(n), int64(len(want)))
		if int64(got) != end-off {
			t.Fatalf("ReadAt(%d, %d) = %d bytes, want %d", n, off, got, end-off)
		}
		if off+int64(n) > int64(len(want)) && err != io.EOF || off+int64(n) <= int64(len(want)) && err != nil {
			t.Fatalf("ReadAt(%d, %d): err %v", n, off, err)
		}
		if !bytes.Equal(buf[:got], want[off:end]) {
			t.Fatalf("ReadAt(%d, %d): bytes differ", n, off)
		}
	}
	// The last 8 bytes, as a Parquet reader asks for its footer.
	tail := make([]byte, 8)
	if _, err := r.ReadAt(tail, r.Size()-8); err != nil || !bytes.Equal(tail, want[len(want)-8:]) {
		t.Fatalf("footer read: %v", err)
	}
	if n, err := r.ReadAt(tail, r.Size()); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt at the end = %d, %v; want 0, EOF", n, err)
	}
}

// An object replaced between the open and a read fails with ErrChanged, never with a mix
// of the two versions.
func TestS3Changed(t *testing.T) {
	c, _ := newS3(t, WithBlockSize(64<<10), WithReadahead(0))
	ctx := context.Background()
	url := "s3://bkt/changing.bin"
	if err := c.WriteFile(ctx, url, testData(1<<20, 1)); err != nil {
		t.Fatal(err)
	}
	ra, err := c.OpenReaderAt(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer ra.Close()
	r, err := c.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	buf := make([]byte, 10)
	if _, err := io.ReadFull(r, buf); err != nil { // the first block is in
		t.Fatal(err)
	}
	if err := c.WriteFile(ctx, url, testData(1<<20, 2)); err != nil {
		t.Fatal(err)
	}
	_, err = ra.ReadAt(buf, 1000)
	wantErr(t, err, ErrChanged, url)
	_, err = io.Copy(io.Discard, r)
	wantErr(t, err, ErrChanged, url)
}

func TestS3Errors(t *testing.T) {
	c, srv := newS3(t)
	ctx := context.Background()
	if err := c.WriteFile(ctx, "s3://bkt/present", []byte("x")); err != nil {
		t.Fatal(err)
	}
	_, err := c.Stat(ctx, "s3://bkt/missing")
	wantErr(t, err, ErrNotFound, "s3://bkt/missing")
	if !strings.Contains(err.Error(), "no such object") {
		t.Errorf("missing object: %v", err)
	}
	_, err = c.Open(ctx, "s3://nobucket/key")
	wantErr(t, err, ErrNotFound, "s3://nobucket/key")
	if !strings.Contains(err.Error(), "no such bucket") {
		t.Errorf("missing bucket: %v", err)
	}
	_, err = c.OpenReaderAt(ctx, "s3://bkt/")
	wantErr(t, err, ErrBadURL, "s3://bkt/")
	_, err = c.Expand(ctx, []string{"s3://nobucket/shard-*.tar"})
	wantErr(t, err, ErrNotFound, "s3://nobucket/shard-*.tar")
	err = c.WriteFile(ctx, "s3://nobucket/out.mldf", []byte("data"))
	wantErr(t, err, ErrNotFound, "s3://nobucket/out.mldf")
	err = c.CheckWrite(ctx, "s3://nobucket/out.mldf")
	wantErr(t, err, ErrNotFound, "s3://nobucket/out.mldf")
	if err := c.CheckWrite(ctx, "s3://bkt/out.mldf"); err != nil {
		t.Fatal(err)
	}
	if inc, err := c.ListIncomplete(ctx, "s3://bkt/"); err != nil || len(inc) != 0 {
		t.Fatalf("CheckWrite left uploads: %v %v", inc, err)
	}

	// No credentials anywhere in the chain (environment, files, instance role).
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	none := New(testOpts()...)
	_, err = none.Stat(ctx, "s3://bkt/present")
	wantErr(t, err, ErrDenied, "s3://bkt/present")
	t.Logf("no credentials: %v", err)
	none.Close()

	// Wrong secret: every operation is one clear "access denied" naming the URL, at once.
	s3test.Env(t, srv.Endpoint, "wrong-secret")
	bad := New(testOpts()...)
	defer bad.Close()
	_, err = bad.Stat(ctx, "s3://bkt/present")
	wantErr(t, err, ErrDenied, "s3://bkt/present")
	_, err = bad.Open(ctx, "s3://bkt/present")
	wantErr(t, err, ErrDenied, "s3://bkt/present")
	_, err = bad.Expand(ctx, []string{"s3://bkt/p*"})
	wantErr(t, err, ErrDenied, "s3://bkt/p*")
	err = bad.WriteFile(ctx, "s3://bkt/new", []byte("x"))
	wantErr(t, err, ErrDenied, "s3://bkt/new")
	err = bad.CheckWrite(ctx, "s3://bkt/new")
	wantErr(t, err, ErrDenied, "s3://bkt/new")
	_, err = bad.NewUpload(ctx, "s3://bkt/new")
	wantErr(t, err, ErrDenied, "s3://bkt/new")
	t.Logf("denied: %v", err)
}

func TestS3ListExpand(t *testing.T) {
	c, _ := newS3(t)
	ctx := context.Background()
	var names []string
	for i := range 40 {
		names = append(names, fmt.Sprintf("s3://bkt/shards/train-%06d.tar", i))
	}
	names = append(names, "s3://bkt/shards/val-000000.tar", "s3://bkt/shards/sub/train-000100.tar", "s3://bkt/other.txt")
	for i, n := range names {
		if err := c.WriteFile(ctx, n, testData(i, uint64(i))); err != nil {
			t.Fatal(err)
		}
	}
	var listed []string
	for a, err := range c.List(ctx, "s3://bkt/shards/") {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, a.URL)
	}
	if len(listed) != 42 || !sort.StringsAreSorted(listed) || listed[0] != "s3://bkt/shards/sub/train-000100.tar" {
		t.Fatalf("listed %d: %v", len(listed), listed)
	}
	urls := func(as []Attrs) []string {
		var out []string
		for _, a := range as {
			out = append(out, strings.TrimPrefix(a.URL, "s3://bkt/shards/"))
		}
		return out
	}
	for _, tc := range []struct {
		patterns []string
		want     []string
	}{
		{[]string{"s3://bkt/shards/train-{000000..000002}.tar"}, []string{"train-000000.tar", "train-000001.tar", "train-000002.tar"}},
		{[]string{"s3://bkt/shards/train-0000[23]?.tar"}, names2("train-0000%02d.tar", 20, 40)},
		{[]string{"s3://bkt/shards/*-000000.tar"}, []string{"train-000000.tar", "val-000000.tar"}},
		{[]string{"s3://bkt/shards/*/train-*.tar"}, []string{"sub/train-000100.tar"}},
		{[]string{"s3://bkt/shards/{val,train}-000000.tar"}, []string{"val-000000.tar", "train-000000.tar"}},
		{[]string{"s3://bkt/shards/train-{000000..000039}.tar"}, names2("train-%06d.tar", 0, 40)}, // > statBatch: one listing
	} {
		got, err := c.Expand(ctx, tc.patterns)
		if err != nil {
			t.Fatalf("%v: %v", tc.patterns, err)
		}
		if g := urls(got); !slices.Equal(g, tc.want) {
			t.Errorf("%v:\n got %v\nwant %v", tc.patterns, g, tc.want)
		}
		for _, a := range got {
			if a.Size < 0 || a.URL == "" {
				t.Errorf("%v: attrs %+v", tc.patterns, a)
			}
		}
	}
	for _, tc := range []struct {
		pattern string
		kind    error
		names   string
	}{
		{"s3://bkt/shards/train-{000038..000041}.tar", ErrNotFound, "s3://bkt/shards/train-000040.tar"},
		{"s3://bkt/shards/train-{000000..000045}.tar", ErrNotFound, "s3://bkt/shards/train-000040.tar"},
		{"s3://bkt/shards/nothing-*.tar", ErrPattern, "s3://bkt/shards/nothing-*.tar"},
		{"s3://bkt/shards/[", ErrPattern, "s3://bkt/shards/["},
	} {
		_, err := c.Expand(ctx, []string{tc.pattern})
		wantErr(t, err, tc.kind, tc.names)
	}
	_, err := c.Expand(ctx, []string{"s3://bkt/shards/train-000001.tar", "s3://bkt/shards/train-00000[01].tar"})
	wantErr(t, err, ErrPattern, "s3://bkt/shards/train-000001.tar")
}

func names2(format string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf(format, i))
	}
	return out
}

// Parts uploaded out of order and concurrently assemble in part order; nothing is visible
// before Complete.
func TestS3Multipart(t *testing.T) {
	c, _ := newS3(t)
	ctx := context.Background()
	const part = MinPartSize
	want := testData(4*part+12345, 9)
	url := "s3://bkt/out/train.mldf"
	u, err := c.NewUpload(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	order := []int{5, 2, 4, 1, 3}
	var g errgroup.Group
	for _, n := range order {
		g.Go(func() error {
			return u.UploadPart(ctx, n, want[(n-1)*part:min(n*part, len(want))])
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stat(ctx, url); !errors.Is(err, ErrNotFound) {
		t.Fatalf("object visible before Complete: %v", err)
	}
	inc, err := c.ListIncomplete(ctx, "s3://bkt/out/")
	if err != nil || len(inc) != 1 || inc[0].URL != url || inc[0].ID != u.ID() {
		t.Fatalf("ListIncomplete = %+v, %v", inc, err)
	}
	if err := u.Complete(ctx); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, c, url); !bytes.Equal(got, want) {
		t.Fatal("completed object differs from the parts")
	}
	if err := u.Abort(ctx); err != nil { // after Complete: nothing to do
		t.Fatal(err)
	}
	if err := u.UploadPart(ctx, 6, want[:10]); !errors.Is(err, ErrClosed) {
		t.Fatalf("UploadPart after Complete: %v", err)
	}
	if inc, _ := c.ListIncomplete(ctx, "s3://bkt/out/"); len(inc) != 0 {
		t.Fatalf("left incomplete: %+v", inc)
	}
}

func TestS3MultipartRules(t *testing.T) {
	c, _ := newS3(t)
	ctx := context.Background()
	url := "s3://bkt/rules.bin"
	u, err := c.NewUpload(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Abort(ctx)
	wantErr(t, u.UploadPart(ctx, 0, []byte("x")), ErrPart, url)
	wantErr(t, u.UploadPart(ctx, MaxParts+1, []byte("x")), ErrPart, url)
	wantErr(t, u.UploadPart(ctx, 1, nil), ErrPart, url)
	if err := u.UploadPart(ctx, 1, testData(100, 1)); err != nil { // small: only allowed last
		t.Fatal(err)
	}
	if err := u.UploadPart(ctx, 3, testData(100, 3)); err != nil {
		t.Fatal(err)
	}
	wantErr(t, u.Complete(ctx), ErrPart, url) // part 2 missing
	if err := u.UploadPart(ctx, 2, testData(100, 2)); err != nil {
		t.Fatal(err)
	}
	err = u.Complete(ctx) // part 1 too small
	wantErr(t, err, ErrPart, url)
	if !strings.Contains(err.Error(), "part 1") {
		t.Fatalf("error does not name the part: %v", err)
	}
	wantErr(t, u.CopyPart(ctx, 1, "s3://bkt/nothing", 0, 10), ErrNotFound, "s3://bkt/nothing")
}

// Abort leaves no object and no incomplete upload; an upload abandoned by a killed run is
// found and aborted by the next.
func TestS3AbortAndIncomplete(t *testing.T) {
	c, _ := newS3(t)
	ctx := context.Background()
	url := "s3://bkt/out/a.mldf"
	u, err := c.NewUpload(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.UploadPart(ctx, 1, testData(MinPartSize, 1)); err != nil {
		t.Fatal(err)
	}
	if err := u.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stat(ctx, url); !errors.Is(err, ErrNotFound) {
		t.Fatalf("aborted upload left an object: %v", err)
	}
	wantErr(t, u.Complete(ctx), ErrClosed, url)

	// "Killed" runs: uploads started and never finished, to two keys.
	for _, k := range []string{url, url, "s3://bkt/out/b.mldf"} {
		u, err := c.NewUpload(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if err := u.UploadPart(ctx, 1, testData(1000, 1)); err != nil {
			t.Fatal(err)
		}
	}
	inc, err := c.ListIncomplete(ctx, "s3://bkt/out/")
	if err != nil || len(inc) != 3 {
		t.Fatalf("ListIncomplete = %+v, %v", inc, err)
	}
	if n, err := c.AbortIncomplete(ctx, url, time.Hour); err != nil || n != 0 {
		t.Fatalf("AbortIncomplete(older than an hour) = %d, %v", n, err)
	}
	if n, err := c.AbortIncomplete(ctx, url, 0); err != nil || n != 2 {
		t.Fatalf("AbortIncomplete = %d, %v", n, err)
	}
	inc, err = c.ListIncomplete(ctx, "s3://bkt/out/")
	if err != nil || len(inc) != 1 || inc[0].URL != "s3://bkt/out/b.mldf" {
		t.Fatalf("after AbortIncomplete: %+v, %v", inc, err)
	}
}

// CopyPart copies byte ranges of other objects server-side (UploadPartCopy).
func TestS3CopyPart(t *testing.T) {
	c, _ := newS3(t)
	ctx := context.Background()
	a := testData(7<<20+5, 1)
	b := testData(6<<20+3, 2)
	if err := c.WriteFile(ctx, "s3://bkt/parts/a.part", a); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteFile(ctx, "s3://bkt/parts/b.part", b); err != nil {
		t.Fatal(err)
	}
	u, err := c.NewUpload(ctx, "s3://bkt/merged.mldf")
	if err != nil {
		t.Fatal(err)
	}
	head := testData(MinPartSize, 3)
	// Out of order: the header part last, as the page writer does.
	if err := u.CopyPart(ctx, 3, "s3://bkt/parts/b.part", 1000, int64(len(b))-1000); err != nil {
		t.Fatal(err)
	}
	if err := u.CopyPart(ctx, 2, "s3://bkt/parts/a.part", 17, int64(len(a))-17); err != nil {
		t.Fatal(err)
	}
	if err := u.UploadPart(ctx, 1, head); err != nil {
		t.Fatal(err)
	}
	wantErr(t, u.CopyPart(ctx, 4, "s3://bkt/parts/a.part", 10, int64(len(a))), ErrPart, "s3://bkt/merged.mldf")
	if err := u.Complete(ctx); err != nil {
		t.Fatal(err)
	}
	want := slices.Concat(head, a[17:], b[1000:])
	if got := readAll(t, c, "s3://bkt/merged.mldf"); !bytes.Equal(got, want) {
		t.Fatalf("merged object (%d bytes) differs from the ranges (%d)", len(got), len(want))
	}
}

// The prefetcher hands readers over in order, with the right bytes, and Close stops
// everything it started.
func TestS3Prefetch(t *testing.T) {
	c, _ := newS3(t, WithBlockSize(32<<10), WithReadahead(2))
	ctx := context.Background()
	var urls []string
	var want [][]byte
	for i := range 12 {
		u := fmt.Sprintf("s3://bkt/in/%02d", i)
		d := testData(i*37<<10+i, uint64(i))
		if err := c.WriteFile(ctx, u, d); err != nil {
			t.Fatal(err)
		}
		urls, want = append(urls, u), append(want, d)
	}
	urls = append(urls[:5], append([]string{"s3://bkt/in/missing"}, urls[5:]...)...)
	want = append(want[:5], append([][]byte{nil}, want[5:]...)...)
	p := c.Prefetch(ctx, urls, 3)
	for i := range urls {
		r, err := p.Next()
		if i == 5 {
			wantErr(t, err, ErrNotFound, "s3://bkt/in/missing")
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, want[i]) {
			t.Fatalf("%s: %d bytes, %v", urls[i], len(got), err)
		}
	}
	if _, err := p.Next(); err != io.EOF {
		t.Fatalf("after the last: %v", err)
	}
	p.Close()

	// Closed early, with readers open ahead.
	p = c.Prefetch(ctx, urls, 4)
	r, err := p.Next()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	p.Close()
	c.Close()
	goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"), goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// A streaming reader holds at most readahead+1 blocks, whatever the object's size.
func TestS3ReaderMemoryBound(t *testing.T) {
	const block, ahead = 64 << 10, 2
	c, _ := newS3(t, WithBlockSize(block), WithReadahead(ahead))
	ctx := context.Background()
	want := testData(3<<20+5, 3)
	if err := c.WriteFile(ctx, "s3://bkt/big", want); err != nil {
		t.Fatal(err)
	}
	r, err := c.Open(ctx, "s3://bkt/big")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []byte
	buf := make([]byte, 10_000)
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		held := len(r.pending) + len(r.free)
		for _, b := range r.free {
			if cap(b) > block {
				t.Fatalf("buffer of %d bytes", cap(b))
			}
		}
		if held > ahead+1 {
			t.Fatalf("%d blocks held, bound %d", held, ahead+1)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatal("bytes differ")
	}
}
