package parquet

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/mldf/convert/sample"
)

// TestReadAllocations: reading a file of images allocates about their bytes once for the
// values copied out, plus the library's pooled page buffers. Snappy pages decoded into
// buffers of ours and copied into the library's again allocated more than twice the payload;
// a zstd file of many row groups made its decoder and page buffers again for every row group
// (5.2 times the payload; 2.3 now).
func TestReadAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under -race: sync.Pool drops buffers on purpose (the norace phase runs this)")
	}
	if testing.Short() {
		t.Skip("writes 12 MB files")
	}
	for _, tc := range []struct {
		name     string
		codec    compress.Codec
		perGroup int64
		limit    float64 // allocated bytes per image byte
	}{
		{"snappy", &snappy.Codec{}, 100, 2},
		{"zstd", &zstd.Codec{Level: zstd.SpeedFastest}, 25, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, 6))
			rows := make([]benchImageRow, 200)
			var payload int64
			for i := range rows {
				img := make([]byte, 60000)
				for k := range img {
					img[k] = byte(r.Uint32()) // incompressible, as JPEG bytes are
				}
				name, label := fmt.Sprintf("img_%06d.jpg", i), int64(i%10)
				rows[i] = benchImageRow{Image: &benchImage{Bytes: img, Path: &name}, Label: &label}
				payload += int64(len(img))
			}
			data := benchFileCodec(t, rows, tc.perGroup, tc.codec)
			cols := []Column{{Name: "image", Path: "image"}, {Name: "label", Path: "label"}}
			read := func() {
				n := 0
				if err := runAll(t, data, cols, Options{Workers: 1}, func(sample.Sample) error { n++; return nil }); err != nil || n != len(rows) {
					t.Fatalf("%d rows: %v", n, err)
				}
			}
			// The library's buffer pools fill once, and no collection empties them while measured.
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			read()
			got := int64(-1) // the least of a few reads (a pool's buffer can sit on another P)
			for range 3 {
				var a, b runtime.MemStats
				runtime.ReadMemStats(&a)
				read()
				runtime.ReadMemStats(&b)
				if n := int64(b.TotalAlloc - a.TotalAlloc); got < 0 || n < got {
					got = n
				}
			}
			t.Logf("allocated %d bytes for %d bytes of images (%.2fx)", got, payload, float64(got)/float64(payload))
			if float64(got) > tc.limit*float64(payload) {
				t.Errorf("allocated %d bytes reading %d bytes of images: more than %g times the payload", got, payload, tc.limit)
			}
		})
	}
}
