package parquet

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/brotli"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/lz4"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mldf/convert/internal/pqfile/pqtest"
	"github.com/mldf/convert/sample"
)

func wideColumns(cols int) []Column {
	out := make([]Column, cols)
	for c := range out {
		out[c] = Column{Name: fmt.Sprintf("c%d", c), Path: fmt.Sprintf("c%d", c)}
	}
	return out
}

// runAll runs a source over one in-memory file and calls check for each sample.
func runAll(t testing.TB, data []byte, cols []Column, opt Options, check func(sample.Sample) error) error {
	t.Helper()
	opt.Open = memOpener(map[string][]byte{"t.parquet": data})
	src, err := NewFiles([]string{"t.parquet"}, cols, opt)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return src.Run(ctx, func(s sample.Sample) error {
		if s.Err != nil {
			return s.Err
		}
		return check(s)
	})
}

// TestHostilePagesRefused: pages that claim more values than their bytes or their row group
// hold fail the run with an error naming the file, the row group and the column, before the
// library allocates for the claim.
func TestHostilePagesRefused(t *testing.T) {
	const max = 1<<31 - 1
	schema := []format.SchemaElement{pqtest.Root(1), pqtest.Required("x", format.Int64)}
	dictChunk := func(dictValues int32, pageValues int32, body []byte, chunkValues int64) pqtest.Chunk {
		return pqtest.Chunk{Meta: format.ColumnMetaData{Type: format.Int64, PathInSchema: []string{"x"}, Codec: format.Uncompressed, NumValues: chunkValues},
			Pages: []pqtest.Page{
				{Header: format.PageHeader{Type: format.DictionaryPage, DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{NumValues: dictValues, Encoding: format.Plain})}, Body: make([]byte, 8)},
				{Header: format.PageHeader{Type: format.DataPage, DataPageHeader: thrift.New(format.DataPageHeader{NumValues: pageValues, Encoding: format.RLEDictionary})}, Body: body},
			}}
	}
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"dictionary of 2^31-1 values in 8 bytes", pqtest.File(schema, []pqtest.RowGroup{{Rows: 1, Chunks: []pqtest.Chunk{dictChunk(max, 1, []byte{0, 2}, 1)}}})},
		{"RLE run of 2^31-1 indices in 6 bytes", pqtest.File(schema, []pqtest.RowGroup{{Rows: max, Chunks: []pqtest.Chunk{
			dictChunk(1, max, binary.AppendUvarint([]byte{0}, uint64(max)<<1), max)}}})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := runAll(t, tc.file, []Column{{Name: "x", Path: "x"}}, Options{Workers: 1}, func(sample.Sample) error { return nil })
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "t.parquet") || !strings.Contains(msg, "row group 0") || !strings.Contains(msg, `"x"`) {
				t.Fatalf("the error does not name the file, row group and column: %v", err)
			}
		})
	}
}

// TestInputFIFO: a Parquet input that is a named pipe is refused at once, not waited on in
// open(2).
func TestInputFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe.parquet")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := NewFiles([]string{p}, []Column{{Name: "x", Path: "x"}}, Options{})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") || !strings.Contains(err.Error(), p) {
			t.Fatalf("error %v, want one naming the file as a named pipe", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("opening a named pipe blocked") // the goroutine stays blocked in open(2)
	}
}

// TestBatchBudgetAllColumns: a dictionary-encoded value repeated in every row is
// materialised in every row, and counts against the batch budget whichever column the
// footer says is the heaviest (here the id column).
func TestBatchBudgetAllColumns(t *testing.T) {
	const rows, size, budget = 8000, 32 << 10, 256 << 10
	data := pqtest.Dict(rows, size)
	open := memOpener(map[string][]byte{"dict.parquet": data})
	src, err := NewFiles([]string{"dict.parquet"}, []Column{{Name: "id", Path: "id"}, {Name: "s", Path: "s"}},
		Options{Workers: 1, BatchBytes: budget, Open: open})
	if err != nil {
		t.Fatal(err)
	}
	n, batches := 0, 0
	readGroupEach(t, src, open, "dict.parquet", 0, func(b *batch) {
		batches++
		var bytes int
		for _, s := range b.samples {
			if v := s.Value("s"); len(v.Bytes) != size || s.Value("id").Int != int64(n) {
				t.Fatalf("row %d: %d bytes, id %d", n, len(v.Bytes), s.Value("id").Int)
			}
			bytes += size + 8
			n++
		}
		if bytes > budget+size+8 {
			t.Fatalf("a batch of %d rows holds %d bytes, the budget is %d", len(b.samples), bytes, budget)
		}
	})
	if n != rows {
		t.Fatalf("%d rows in %d batches", n, batches)
	}
}

// TestPagesInFlight: the decoded pages of the row groups being read are bounded together:
// a row group whose pages alone need more than MaxInFlight is refused before it is read,
// and row groups that each fit are read (in order) however many workers wait for the budget.
func TestPagesInFlight(t *testing.T) {
	const size = 1 << 20
	cols := []Column{{Name: "b0", Path: "b0"}, {Name: "b1", Path: "b1"}, {Name: "b2", Path: "b2"}, {Name: "b3", Path: "b3"}}
	err := runAll(t, pqtest.Zstd(4, 1, size), cols, Options{Workers: 2, MaxInFlight: 3 * size},
		func(sample.Sample) error { return nil })
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "MaxInFlight") || !strings.Contains(err.Error(), "row group 0") {
		t.Fatalf("four 1 MiB pages with a budget of 3 MiB: %v", err)
	}
	n := 0
	err = runAll(t, pqtest.Zstd(4, 6, size), cols, Options{Workers: 4, MaxInFlight: 13 * size}, func(s sample.Sample) error {
		if s.Index != int64(n) || len(s.Value("b3").Bytes) != size {
			return fmt.Errorf("sample %d: index %d, %d bytes", n, s.Index, len(s.Value("b3").Bytes))
		}
		n++
		return nil
	})
	if err != nil || n != 6 {
		t.Fatalf("%d samples: %v", n, err)
	}
}

// TestManyRowGroups: a file of many one-row row groups is read in order and whole, while
// the footer's row groups are decoded a window at a time: the heap does not grow with them.
func TestManyRowGroups(t *testing.T) {
	const groups = 30000
	data := pqtest.ManyGroups(groups)
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak uint64
	n := 0
	err := runAll(t, data, []Column{{Name: "x", Path: "x"}}, Options{Workers: 2}, func(s sample.Sample) error {
		if s.Value("x").Int != int64(n) {
			return fmt.Errorf("row %d holds %d", n, s.Value("x").Int)
		}
		if n%2000 == 1999 {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
		}
		n++
		return nil
	})
	if err != nil || n != groups {
		t.Fatalf("%d rows: %v", n, err)
	}
	t.Logf("heap grew by %d MB", (int64(peak)-int64(base.HeapAlloc))>>20)
	// About 2.4 KB of the library's state per row group would be 72 MB here.
	if grown := int64(peak) - int64(base.HeapAlloc); grown > 40<<20 {
		t.Errorf("the heap grew by %d MB reading %d row groups of a %d-byte file", grown>>20, groups, len(data))
	}
}

// TestWideTable: a table of thousands of columns is read with memory in proportion to its
// columns (not a read buffer of 256 KiB each), every value in place.
func TestWideTable(t *testing.T) {
	const cols, rows = 3000, 50
	data := pqtest.Wide(cols, rows)
	var err error
	n := 0
	alloc := allocated(func() {
		err = runAll(t, data, wideColumns(cols), Options{Workers: 2}, func(s sample.Sample) error {
			if len(s.Values) != cols || s.Values[cols-1].Value.Int != int64(n*cols+cols-1) {
				return fmt.Errorf("row %d: %d values", n, len(s.Values))
			}
			n++
			return nil
		})
	})
	if err != nil || n != rows {
		t.Fatalf("%d rows: %v", n, err)
	}
	t.Logf("allocated %d MB", alloc>>20)
	if alloc > 400<<20 {
		t.Errorf("allocated %d MB to read a %d-byte table", alloc>>20, len(data))
	}
}

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestLyingPageBodies: a compressed page whose body decodes to more or fewer bytes than its
// header declares (a decompression bomb, a lying header) or whose checksum fails is refused
// with an error naming the file, the row group, the column and the page, whatever the codec,
// and no more than the declared size is decoded.
func TestLyingPageBodies(t *testing.T) {
	value := []byte("a value of some length, long enough to compress")
	plain := binary.LittleEndian.AppendUint32(nil, uint32(len(value)))
	plain = append(plain, value...)
	bomb := append(binary.LittleEndian.AppendUint32(nil, 1<<30), make([]byte, 64<<20)...) // claims 1 GiB, holds 64 MiB
	for _, tc := range []struct {
		name     string
		codec    format.CompressionCodec
		body     []byte
		declared int
		crc      int32
		want     string
	}{
		{"gzip bomb", format.Gzip, compressBody(t, format.Gzip, bomb), 1024, 0, "where the header says 1024"},
		{"zstd bomb", format.Zstd, compressBody(t, format.Zstd, bomb), 1024, 0, "where the header says 1024"},
		{"brotli bomb", format.Brotli, compressBody(t, format.Brotli, bomb), 1024, 0, "where the header says 1024"},
		{"snappy length beyond the header", format.Snappy, compressBody(t, format.Snappy, plain), len(plain) - 1, 0, "where the header says"},
		{"snappy length short of the header", format.Snappy, compressBody(t, format.Snappy, plain), len(plain) + 1, 0, "where the header says"},
		{"snappy checksum", format.Snappy, compressBody(t, format.Snappy, plain), len(plain), 12345, "crc32 checksum mismatch"},
		{"lz4 beyond the header", format.Lz4Raw, compressBody(t, format.Lz4Raw, plain), len(plain) - 1, 0, "lz4"},
		{"gzip short of the header", format.Gzip, compressBody(t, format.Gzip, plain), len(plain) + 10, 0, "where the header says"},
		{"zstd short of the header", format.Zstd, compressBody(t, format.Zstd, plain), len(plain) + 10, 0, "where the header says"},
		{"gzip checksum", format.Gzip, compressBody(t, format.Gzip, plain), len(plain), 12345, "crc32 checksum mismatch"},
		{"zstd garbage", format.Zstd, []byte("not zstd at all"), len(plain), 0, "magic number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := pqtest.Compressed(tc.codec, tc.body, tc.declared, tc.crc)
			err := runAll(t, data, []Column{{Name: "b", Path: "b"}}, Options{Workers: 1}, func(sample.Sample) error { return nil })
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v, want ErrCorrupt", err)
			}
			msg := err.Error()
			for _, part := range []string{"t.parquet", "row group 0", `column "b"`, tc.want} {
				if !strings.Contains(msg, part) {
					t.Fatalf("the error does not say %q: %v", part, err)
				}
			}
		})
	}
	// The same bodies under honest headers read.
	for _, codec := range []format.CompressionCodec{format.Gzip, format.Zstd, format.Brotli, format.Snappy, format.Lz4Raw} {
		data := pqtest.Compressed(codec, compressBody(t, codec, plain), len(plain), int32(crc32.ChecksumIEEE(compressBody(t, codec, plain))))
		n := 0
		err := runAll(t, data, []Column{{Name: "b", Path: "b"}}, Options{Workers: 1}, func(s sample.Sample) error {
			n++
			if string(s.Value("b").Bytes) != string(value) {
				return fmt.Errorf("value %q", s.Value("b").Bytes)
			}
			return nil
		})
		if err != nil || n != 1 {
			t.Errorf("%s: %d rows: %v", codec, n, err)
		}
	}
}

// compressBody compresses b with codec, as a page body.
func compressBody(t testing.TB, codec format.CompressionCodec, b []byte) []byte {
	t.Helper()
	var c compress.Codec
	switch codec {
	case format.Gzip:
		c = &gzip.Codec{Level: gzip.DefaultCompression}
	case format.Zstd:
		c = &zstd.Codec{Level: zstd.DefaultLevel}
	case format.Brotli:
		c = &brotli.Codec{Quality: 1, LGWin: brotli.DefaultLGWin}
	case format.Snappy:
		c = &snappy.Codec{}
	case format.Lz4Raw:
		c = &lz4.Codec{Level: lz4.DefaultLevel}
	}
	out, err := c.Encode(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRowGroupOrdinals: a file whose row groups carry their ordinals (parquet-go and pyarrow
// write them) and whose footer is read a window at a time reads whole, in order.
func TestRowGroupOrdinals(t *testing.T) {
	const groups = 700
	rgs := make([]pqtest.RowGroup, groups)
	for i := range rgs {
		rgs[i] = pqtest.RowGroup{Rows: 1, Chunks: []pqtest.Chunk{pqtest.Int64Column("x", []int64{int64(i)})}}
	}
	data := pqtest.FileOrdinals([]format.SchemaElement{pqtest.Root(1), pqtest.Required("x", format.Int64)}, rgs, true)
	n := 0
	err := runAll(t, data, []Column{{Name: "x", Path: "x"}}, Options{Workers: 2}, func(s sample.Sample) error {
		if s.Value("x").Int != int64(n) {
			return fmt.Errorf("row %d holds %d", n, s.Value("x").Int)
		}
		n++
		return nil
	})
	if err != nil || n != groups {
		t.Fatalf("%d rows: %v", n, err)
	}
}
