//go:build !nos3

package objstore

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"
)

// The benchmarks read and write a 64 MiB object on the local filesystem and on a local
// versitygw (whose own backend is the same filesystem), so the difference is the cost of
// the S3 path (HTTP, signing, checksums, the gateway), not a network's.
//
//	go test -run XXX -bench . -benchtime 5x ./objstore/

const benchSize = 64 << 20

// benchTargets returns the local and S3 URLs of a benchmark object holding benchSize bytes.
func benchTargets(b *testing.B, opts ...Option) (*Client, map[string]string) {
	b.Helper()
	srv := newS3Bench(b)
	c := New(opts...)
	b.Cleanup(func() { c.Close() })
	data := testData(benchSize, 1)
	urls := map[string]string{"local": filepath.Join(b.TempDir(), "obj"), "s3": "s3://bkt/obj"}
	for _, u := range urls {
		if err := c.WriteFile(context.Background(), u, data); err != nil {
			b.Fatal(err)
		}
	}
	_ = srv
	return c, urls
}

func BenchmarkReadStream(b *testing.B) {
	c, urls := benchTargets(b)
	for _, name := range []string{"local", "s3"} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(benchSize)
			for b.Loop() {
				r, err := c.Open(context.Background(), urls[name])
				if err != nil {
					b.Fatal(err)
				}
				if n, err := io.Copy(io.Discard, r); err != nil || n != benchSize {
					b.Fatal(n, err)
				}
				r.Close()
			}
		})
	}
	// The SDK alone, one GET of the whole object: what the S3 path costs without objstore.
	b.Run("s3-sdk-one-get", func(b *testing.B) {
		_, s, err := c.parseObject(context.Background(), "bench", urls["s3"])
		if err != nil {
			b.Fatal(err)
		}
		cl := s.(*cloudStore).native.(*s3Native).cl
		b.SetBytes(benchSize)
		for b.Loop() {
			out, err := cl.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("bkt"), Key: aws.String("obj")})
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, out.Body)
			out.Body.Close()
		}
	})
}

// BenchmarkReadAt reads the object in 1 MiB ranged reads, 4 at a time (as a Parquet or
// indexed-tar reader would).
func BenchmarkReadAt(b *testing.B) {
	c, urls := benchTargets(b)
	for _, name := range []string{"local", "s3"} {
		b.Run(name, func(b *testing.B) {
			r, err := c.OpenReaderAt(context.Background(), urls[name])
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			const chunk = 1 << 20
			b.SetBytes(benchSize)
			for b.Loop() {
				var g errgroup.Group
				g.SetLimit(4)
				for off := int64(0); off < benchSize; off += chunk {
					g.Go(func() error {
						buf := make([]byte, chunk)
						_, err := r.ReadAt(buf, off)
						return err
					})
				}
				if err := g.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUpload uploads the object as 8 MiB parts, 4 at a time, and completes it.
func BenchmarkUpload(b *testing.B) {
	c, urls := benchTargets(b)
	data := testData(benchSize, 2)
	const part = 8 << 20
	for _, name := range []string{"local", "s3"} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(benchSize)
			for i := 0; b.Loop(); i++ {
				u, err := c.NewUpload(context.Background(), fmt.Sprintf("%s-up-%d", urls[name], i))
				if err != nil {
					b.Fatal(err)
				}
				var g errgroup.Group
				g.SetLimit(4)
				for n := 1; n <= benchSize/part; n++ {
					g.Go(func() error { return u.UploadPart(context.Background(), n, data[(n-1)*part:n*part]) })
				}
				if err := g.Wait(); err != nil {
					b.Fatal(err)
				}
				if err := u.Complete(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
