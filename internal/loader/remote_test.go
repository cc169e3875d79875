package loader

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/internal/s3test"
)

// TestBucket reads the same batches from a local file and from the same bytes in an S3
// bucket (versitygw), with a cache smaller than the file.
func TestBucket(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an S3 server")
	}
	path := imageFile(t, 60, 96, 72, -1)
	srv := s3test.Start(t)
	srv.MakeBucket(t, "bkt")
	s3test.Env(t, srv.Endpoint, s3test.SecretKey)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(srv.Dir, "bkt", "train.mldf"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	local := openT(t, path, Options{Threads: 2})
	remote := openT(t, "s3://bkt/train.mldf", Options{Threads: 4, CacheBytes: 2 << 20, VerifyChecksums: true})
	if remote.src.cache == nil {
		t.Fatal("no block cache")
	}
	if d := remote.Describe(); d.NumSamples != 60 || d.Path != "s3://bkt/train.mldf" {
		t.Fatalf("%+v", d)
	}
	pl, pr := planT(t, local, rrcPlan), planT(t, remote, rrcPlan)
	o, _ := local.Order(OrderSpec{Mode: OrderQuasiRandom, Seed: 1})
	idx := make([]int64, 60)
	o.Fill(0, idx)
	for lo := 0; lo < 60; lo += 16 {
		batch := idx[lo:min(lo+16, 60)]
		a, err := runT(t, pl, batch, 1)
		if err != nil {
			t.Fatal(err)
		}
		b, err := runT(t, pr, batch, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a[0].Data, b[0].Data) || !bytes.Equal(a[1].Data, b[1].Data) {
			t.Fatalf("batch at %d differs between local and bucket", lo)
		}
	}
	if _, misses := remote.src.cache.stats(); misses == 0 {
		t.Error("nothing read through the block cache")
	}
	if _, err := Open(context.Background(), "s3://bkt/missing.mldf", Options{}); err == nil || !strings.Contains(err.Error(), "missing.mldf") {
		t.Errorf("missing object: %v", err)
	}
}

func TestBlockCacheBounded(t *testing.T) {
	data := make([]byte, 10*cacheBlockSize+123)
	for k := range data {
		data[k] = byte(k * 7)
	}
	c := newBlockCache(bytes.NewReader(data), int64(len(data)), 3*cacheBlockSize, func() error { return nil })
	if err := c.fetch(context.Background(), []int64{0, 1, 2, 3, 4, 9, 10}); err != nil {
		t.Fatal(err)
	}
	if c.lru.Len() > 3 {
		t.Fatalf("%d blocks cached, bound 3", c.lru.Len())
	}
	p := make([]byte, 3*cacheBlockSize)
	for _, off := range []int64{0, cacheBlockSize - 5, 7*cacheBlockSize + 99} {
		n, err := c.ReadAt(p, off)
		if err != nil || n != len(p) || !bytes.Equal(p, data[off:off+int64(n)]) {
			t.Fatalf("ReadAt(%d): %d %v", off, n, err)
		}
	}
	n, err := c.ReadAt(p, int64(len(data))-10)
	if n != 10 || err == nil || !bytes.Equal(p[:10], data[len(data)-10:]) {
		t.Fatalf("ReadAt at the end: %d %v", n, err)
	}
}
