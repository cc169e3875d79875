package parquet

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/mldf/convert/internal/pqfile/pqtest"
	"github.com/mldf/convert/sample"
)

type benchImage struct {
	Bytes []byte  `parquet:"bytes,optional,plain"`
	Path  *string `parquet:"path,optional"`
}

type benchImageRow struct {
	Image *benchImage `parquet:"image,optional"`
	Label *int64      `parquet:"label,optional"`
}

type benchTextRow struct {
	ID   *int64  `parquet:"id,optional"`
	Text *string `parquet:"text,optional"`
}

// benchFile writes rows the way the Hub does (snappy, data pages v1, row groups of perGroup).
func benchFile[T any](b testing.TB, rows []T, perGroup int64) []byte {
	return benchFileCodec(b, rows, perGroup, &snappy.Codec{})
}

// benchFileCodec is benchFile with another codec.
func benchFileCodec[T any](b testing.TB, rows []T, perGroup int64, codec compress.Codec) []byte {
	var buf bytes.Buffer
	w := pq.NewGenericWriter[T](&buf, pq.Compression(codec), pq.MaxRowsPerRowGroup(perGroup),
		pq.DataPageVersion(1), pq.PageBufferSize(1<<20), pq.DataPageStatistics(false))
	if _, err := w.Write(rows); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func benchRun(b *testing.B, data []byte, cols []Column, workers int, payload int64) {
	var reads, readBytes atomic.Int64
	mem := memOpener(map[string][]byte{"bench.parquet": data})
	open := func(name string) (Blob, error) {
		blob, err := mem(name)
		if err != nil {
			return nil, err
		}
		return &countingBlob{Blob: blob, reads: &reads, bytes: &readBytes}, nil
	}
	b.SetBytes(payload)
	b.ReportAllocs()
	rows := 0
	cpu0 := processCPU()
	for b.Loop() {
		src, err := NewFiles([]string{"bench.parquet"}, cols, Options{Workers: workers, Open: open})
		if err != nil {
			b.Fatal(err)
		}
		rows = 0
		if err := src.Run(context.Background(), func(s sample.Sample) error {
			if s.Err != nil {
				return s.Err
			}
			rows++
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(processCPU()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
	// What a bucket input pays: one ranged GET per ReadAt, and the bytes they fetch.
	b.ReportMetric(float64(reads.Load())/float64(b.N), "reads/op")
	b.ReportMetric(float64(readBytes.Load())/float64(b.N)/float64(len(data)), "read-bytes/file-bytes")
}

// countingBlob counts the ReadAt calls made on a blob and the bytes they ask for.
type countingBlob struct {
	Blob
	reads, bytes *atomic.Int64
}

func (c *countingBlob) ReadAt(p []byte, off int64) (int, error) {
	c.reads.Add(1)
	c.bytes.Add(int64(len(p)))
	return c.Blob.ReadAt(p, off)
}

// BenchmarkImages reads 400 rows of 60 KB incompressible "images" in row groups of 100, the
// Hub's layout for image datasets: the cost of the source per image byte.
func BenchmarkImages(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	rows := make([]benchImageRow, 400)
	var total int64
	for i := range rows {
		img := make([]byte, 60000)
		for k := range img {
			img[k] = byte(r.Uint32())
		}
		name, label := fmt.Sprintf("img_%06d.jpg", i), int64(i%10)
		rows[i] = benchImageRow{Image: &benchImage{Bytes: img, Path: &name}, Label: &label}
		total += int64(len(img))
	}
	data := benchFile(b, rows, 100)
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			benchRun(b, data, []Column{{Name: "image", Path: "image"}, {Name: "label", Path: "label"}}, w, total)
		})
	}
}

// BenchmarkText reads 20000 rows of ~1 KB English-like text in row groups of 10000, in
// files compressed with snappy (as the Hub), gzip and zstd.
func BenchmarkText(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	words := strings.Fields("the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there been one all we their has would when if so no will more")
	rows := make([]benchTextRow, 20000)
	var total int64
	for i := range rows {
		var sb strings.Builder
		for sb.Len() < 1000 {
			sb.WriteString(words[r.IntN(len(words))])
			sb.WriteByte(' ')
		}
		s, id := sb.String(), int64(i)
		rows[i] = benchTextRow{ID: &id, Text: &s}
		total += int64(len(s))
	}
	for _, codec := range []compress.Codec{&snappy.Codec{}, &gzip.Codec{Level: gzip.DefaultCompression}, &zstd.Codec{Level: zstd.DefaultLevel}} {
		data := benchFileCodec(b, rows, 10000, codec)
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("codec=%s/workers=%d", strings.ToLower(codec.String()), w), func(b *testing.B) {
				benchRun(b, data, []Column{{Name: "text", Path: "text"}, {Name: "id", Path: "id"}}, w, total)
			})
		}
	}
}

// BenchmarkWide reads a table of thousands of INT64 columns and 200 rows, every column
// mapped: the cost per cell must not grow with the number of columns.
func BenchmarkWide(b *testing.B) {
	for _, cols := range []int{1000, 4000} {
		data := pqtest.Wide(cols, 200)
		b.Run(fmt.Sprintf("columns=%d", cols), func(b *testing.B) {
			benchRun(b, data, wideColumns(cols), 2, int64(len(data)))
			b.ReportMetric(float64(cols*200)*float64(b.N)/b.Elapsed().Seconds(), "cells/s")
		})
	}
}
