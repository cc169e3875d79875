package loader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/format/mldf"
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
	// every kind of field, read through the block cache
	path2 := scalarFile(t, 200)
	b, err = os.ReadFile(path2)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(srv.Dir, "bkt", "scalars.mldf"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	sl := openT(t, path2, Options{})
	sr := openT(t, "s3://bkt/scalars.mldf", Options{Threads: 3, VerifyChecksums: true})
	ps, pr2 := planT(t, sl, scalarPlan), planT(t, sr, scalarPlan)
	batch := []int64{199, 0, 3, 17, 100, 5}
	a, err := runT(t, ps, batch, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := runT(t, pr2, batch, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k := range a {
		if !bytes.Equal(a[k].Data, c[k].Data) || fmt.Sprint(a[k].Offsets) != fmt.Sprint(c[k].Offsets) {
			t.Fatalf("output %d differs between local and bucket", k)
		}
	}
	if _, err := runT(t, pr2, []int64{200}, 0); !errors.Is(err, ErrIndex) {
		t.Fatalf("index 200: %v", err)
	}
	// a corrupt payload in the bucket is named
	off, _ := sl.src.payloadRange(18, 2)
	b[off] ^= 0x55
	if err := os.WriteFile(filepath.Join(srv.Dir, "bkt", "bad.mldf"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := openT(t, "s3://bkt/bad.mldf", Options{VerifyChecksums: true})
	_, err = runT(t, planT(t, bad, scalarPlan), []int64{1, 18}, 0)
	if !errors.Is(err, mldf.ErrChecksum) || !strings.Contains(err.Error(), "s3://bkt/bad.mldf: sample 18") {
		t.Fatalf("corrupt payload in a bucket: %v", err)
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

// BenchmarkRunBucket runs BenchmarkRun's 224 batches from a local file and from the same
// file in versitygw on loopback (cold: the first pass over the file; warm: the cache holds
// it), reporting images/s.
func BenchmarkRunBucket(b *testing.B) {
	path := imageFile(b, 256, 256, 192, -1)
	srv := s3test.Start(b)
	srv.MakeBucket(b, "bkt")
	s3test.Env(b, srv.Endpoint, s3test.SecretKey)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(srv.Dir, "bkt", "train.mldf"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	plan := `{"fields":[{"field":"image","ops":[{"op":"RandomResizedCrop","size":224},{"op":"RandomHorizontalFlip"}]},{"field":"label","ops":[{"op":"Int"}]}]}`
	for _, where := range []string{"local", "s3-cold", "s3-warm"} {
		b.Run(where, func(b *testing.B) {
			url := path
			if where != "local" {
				url = "s3://bkt/train.mldf"
			}
			l, err := Open(context.Background(), url, Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			p := planT(b, l, plan)
			o, _ := l.Order(OrderSpec{Mode: OrderQuasiRandom})
			idx := make([]int64, 128)
			bufs := []Buffer{{Data: make([]byte, 128*224*224*3)}, {Data: make([]byte, 128*8)}}
			if where == "s3-warm" {
				for start := 0; start < 256; start += 128 {
					o.Fill(start, idx)
					if err := p.Run(context.Background(), idx, 0, bufs); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				o.Fill(it%2*128, idx)
				if err := p.Run(context.Background(), idx, 0, bufs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*128)/b.Elapsed().Seconds(), "images/s")
		})
	}
}
