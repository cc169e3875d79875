package taridx

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// sparseTar writes a tar of about size bytes whose members have memberSize-byte payloads
// that are never written (holes): only the header blocks hold data.
func sparseTar(b *testing.B, path string, size, memberSize int64) int64 {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	hdr := make([]byte, BlockSize)
	var off int64
	exts := []string{"jpg", "cls", "json"}
	for i := 0; off < size; i++ {
		clear(hdr)
		sz := memberSize
		if i%3 != 0 {
			sz = 16
		}
		copy(hdr, fmt.Sprintf("train/%09d.%s", i/3, exts[i%3]))
		copy(hdr[100:], "0000644\x00")
		copy(hdr[124:], fmt.Sprintf("%011o\x00", sz))
		hdr[156] = '0'
		copy(hdr[257:], "ustar\x0000")
		if _, err := f.WriteAt(hdr, off); err != nil {
			b.Fatal(err)
		}
		off += BlockSize + (sz+BlockSize-1)/BlockSize*BlockSize
	}
	if err := f.Truncate(off + 2*BlockSize); err != nil {
		b.Fatal(err)
	}
	return off + 2*BlockSize
}

// BenchmarkIndex measures `convert index` speed in MB/s of tar indexed, on a ~1 GB tar with
// sparse payloads (100 KB images, and 4 KB images for header-dense shards):
//
//	go test -run XXX -bench Index -benchtime 3x ./taridx/
func BenchmarkIndex(b *testing.B) {
	for _, member := range []int64{100 << 10, 4 << 10} {
		b.Run(fmt.Sprintf("member-%dKB", member>>10), func(b *testing.B) {
			dir := b.TempDir()
			tarPath := filepath.Join(dir, "big.tar")
			size := sparseTar(b, tarPath, 1<<30, member)
			out := filepath.Join(dir, "big.taridx")
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := IndexFiles([]string{tarPath}, out); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			ix, err := Load(out)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(ix.Rows)), "rows")
		})
	}
}
