package objstore

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mldf/convert/internal/s3test"
)

// testData returns n deterministic pseudo-random bytes.
func testData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 42))
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for k := range 8 {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

// testOpts are fast retries for tests (the policy is the same, the waits shorter).
func testOpts(extra ...Option) []Option {
	return append([]Option{WithRetry(6, time.Millisecond, 20*time.Millisecond), WithStallTimeout(2 * time.Second)}, extra...)
}

// newS3Bench is newS3 for benchmarks.
func newS3Bench(b *testing.B) *s3test.Server {
	b.Helper()
	if !s3Built {
		b.Skip("this build has no s3:// support (-tags nos3); TestBackendsLeftOut covers its error")
	}
	srv := s3test.Start(b)
	srv.MakeBucket(b, "bkt")
	s3test.Env(b, srv.Endpoint, s3test.SecretKey)
	return srv
}

// newS3 starts versitygw with a bucket "bkt" and returns a client pointed at it.
func newS3(t *testing.T, opts ...Option) (*Client, *s3test.Server) {
	t.Helper()
	if !s3Built {
		t.Skip("this build has no s3:// support (-tags nos3); TestBackendsLeftOut covers its error")
	}
	srv := s3test.Start(t)
	srv.MakeBucket(t, "bkt")
	s3test.Env(t, srv.Endpoint, s3test.SecretKey)
	c := New(testOpts(opts...)...)
	t.Cleanup(func() { c.Close() })
	return c, srv
}

// wantErr checks that err is one *Error of the kind that names url.
func wantErr(t *testing.T, err error, kind error, url string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v for %s", kind, url)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("error %q is not %v", err, kind)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %q is not an *Error", err)
	}
	if !strings.Contains(err.Error(), url) {
		t.Fatalf("error %q does not name %s", err, url)
	}
	if strings.Count(err.Error(), "\n") > 0 {
		t.Fatalf("error is not one line: %q", err)
	}
}

func readAll(t *testing.T, c *Client, url string) []byte {
	t.Helper()
	r, err := c.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func itoa(n int) string { return strconv.Itoa(n) }
