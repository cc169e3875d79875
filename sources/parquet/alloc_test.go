package parquet

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/parquet-go/parquet-go/compress/snappy"

	"github.com/mldf/convert/sample"
)

// TestSnappyAllocations: reading a snappy file of incompressible images (the Hub's layout)
// allocates about its payload once for the values copied out, plus the library's pooled page
// buffers; a page decoded into a buffer of ours and then copied into the library's again
// doubled it (2.8 times the payload).
func TestSnappyAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 12 MB file")
	}
	r := rand.New(rand.NewPCG(5, 6))
	rows := make([]benchImageRow, 200)
	var payload int64
	for i := range rows {
		img := make([]byte, 60000)
		for k := range img {
			img[k] = byte(r.Uint32())
		}
		name, label := fmt.Sprintf("img_%06d.jpg", i), int64(i%10)
		rows[i] = benchImageRow{Image: &benchImage{Bytes: img, Path: &name}, Label: &label}
		payload += int64(len(img))
	}
	data := benchFileCodec(t, rows, 100, &snappy.Codec{})
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
	if got > 2*payload {
		t.Errorf("allocated %d bytes reading %d bytes of images: more than twice the payload", got, payload)
	}
}
