package tarsrc

import (
	"archive/tar"
	"bufio"
	"bytes"
	stdgzip "compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/pgzip"
	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/sample"
)

// benchShard writes a WebDataset-like tar of about size bytes: per sample a ~100 KB
// incompressible "jpg", a label and a small JSON; with text set, a ~50 KB compressible "txt"
// too. It returns the tar's path and its size.
func benchShard(b *testing.B, dir string, size int64, text bool) (string, int64) {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("bench-%d-%v.tar", size, text))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	tw := tar.NewWriter(bw)
	rng := rand.New(rand.NewPCG(1, 2))
	img := make([]byte, 100<<10)
	words := []string{"the ", "cat ", "sat ", "on ", "a ", "mat ", "dataset ", "tensor ", "shard ", "image "}
	var txt bytes.Buffer
	for txt.Len() < 50<<10 {
		txt.WriteString(words[rng.IntN(len(words))])
	}
	put := func(name string, data []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			b.Fatal(err)
		}
		tw.Write(data)
	}
	var written int64
	for i := 0; written < size; i++ {
		for j := 0; j < len(img); j += 8 {
			v := rng.Uint64()
			for k := 0; k < 8; k++ {
				img[j+k] = byte(v >> (8 * k))
			}
		}
		key := fmt.Sprintf("%08d", i)
		put(key+".jpg", img)
		put(key+".cls", []byte(fmt.Sprint(i%1000)))
		put(key+".json", []byte(fmt.Sprintf(`{"i":%d}`, i)))
		written += int64(len(img)) + 3*1536
		if text {
			put(key+".txt", txt.Bytes())
			written += int64(txt.Len())
		}
	}
	if err := tw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	return path, st.Size()
}

func compressFile(b *testing.B, src, dst string, wrap func(io.Writer) io.WriteCloser) {
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	w := wrap(out)
	if _, err := io.Copy(w, in); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGzipDecode compares gzip readers on a ~100 MB tar.gz (MB/s of tar produced):
//
//	go test -run XXX -bench GzipDecode -benchtime 3x ./sources/tarsrc/
func BenchmarkGzipDecode(b *testing.B) {
	dir := b.TempDir()
	tarPath, tarSize := benchShard(b, dir, 100<<20, true)
	gzPath := tarPath + ".gz"
	compressFile(b, tarPath, gzPath, func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })
	st, _ := os.Stat(gzPath)
	b.Logf("tar %d bytes, tar.gz %d bytes", tarSize, st.Size())
	readers := map[string]func(io.Reader) (io.ReadCloser, error){
		"stdlib":         func(r io.Reader) (io.ReadCloser, error) { return stdgzip.NewReader(r) },
		"klauspost-gzip": func(r io.Reader) (io.ReadCloser, error) { return gzip.NewReader(r) },
		"pgzip":          func(r io.Reader) (io.ReadCloser, error) { return pgzip.NewReader(r) },
	}
	decode := func(name string) error {
		f, err := os.Open(gzPath)
		if err != nil {
			return err
		}
		defer f.Close()
		zr, err := readers[name](bufio.NewReaderSize(f, 512<<10))
		if err != nil {
			return err
		}
		defer zr.Close()
		n, err := io.Copy(io.Discard, zr)
		if err == nil && n != tarSize {
			err = fmt.Errorf("decoded %d bytes, want %d", n, tarSize)
		}
		return err
	}
	// "xN": N shards decoded at once, as the source does with Parallel N (aggregate MB/s).
	for _, streams := range []int{1, 2} {
		for _, name := range []string{"stdlib", "klauspost-gzip", "pgzip"} {
			b.Run(fmt.Sprintf("%s-x%d", name, streams), func(b *testing.B) {
				b.SetBytes(tarSize * int64(streams))
				cpu0 := cpuTime()
				defer func() {
					// CPU time is the fair measure on a shared machine: wall time rewards
					// whichever reader spawns more threads.
					sec := (cpuTime() - cpu0).Seconds()
					b.ReportMetric(float64(tarSize*int64(streams)*int64(b.N))/1e6/sec, "MB/cpu-s")
				}()
				for i := 0; i < b.N; i++ {
					var g errgroup.Group
					for s := 0; s < streams; s++ {
						g.Go(func() error { return decode(name) })
					}
					if err := g.Wait(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSource measures the source's throughput in MB/s of tar (uncompressed) walked into
// samples, for 4 shards of ~64 MB:
//
//	go test -run XXX -bench Source -benchtime 3x ./sources/tarsrc/
func BenchmarkSource(b *testing.B) {
	dir := b.TempDir()
	var plain []string
	var total int64
	for s := 0; s < 4; s++ {
		p, n := benchShard(b, dir, 64<<20, false)
		sp := filepath.Join(dir, fmt.Sprintf("shard-%d.tar", s))
		os.Rename(p, sp)
		plain = append(plain, sp)
		total += n
	}
	for _, p := range plain {
		compressFile(b, p, p+".gz", func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) })
	}
	for _, tc := range []struct {
		name     string
		pattern  string
		parallel int
	}{
		{"tar-p1", filepath.Join(dir, "shard-{0..3}.tar"), 1},
		{"tar-p2", filepath.Join(dir, "shard-{0..3}.tar"), 2},
		{"tar.gz-p1", filepath.Join(dir, "shard-{0..3}.tar.gz"), 1},
		{"tar.gz-p2", filepath.Join(dir, "shard-{0..3}.tar.gz"), 2},
	} {
		b.Run(tc.name, func(b *testing.B) {
			src, err := New([]string{tc.pattern}, Options{Parallel: tc.parallel})
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(total)
			for i := 0; i < b.N; i++ {
				n := 0
				if err := src.Run(context.Background(), func(s sample.Sample) error {
					if s.Err != nil {
						return s.Err
					}
					n++
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// cpuTime returns the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
