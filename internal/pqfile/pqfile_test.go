package pqfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mldf/convert/internal/pqfile/pqtest"
)

func group(name string, children int32) format.SchemaElement {
	return format.SchemaElement{Name: name, NumChildren: thrift.New(children), RepetitionType: thrift.New(format.Required)}
}

func leaf(name string, t format.Type) format.SchemaElement {
	return format.SchemaElement{Name: name, Type: thrift.New(t), RepetitionType: thrift.New(format.Required)}
}

// deepSchema returns a schema of groups nested depth deep around one INT64 leaf.
func deepSchema(depth int) []format.SchemaElement {
	s := []format.SchemaElement{{Name: "root", NumChildren: thrift.New(int32(1))}}
	for i := range depth {
		s = append(s, group("g"+string(rune('a'+i%26)), 1))
	}
	return append(s, leaf("x", format.Int64))
}

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestHostileFooters: footers whose schema or lists claim more than they hold are refused
// before the library decodes them, allocating in proportion to the footer, not to the claim.
func TestHostileFooters(t *testing.T) {
	// 42 bytes: a schema list claiming 2^31-1 elements.
	huge := []byte("PAR1")
	fb := []byte{0x15, 0x02, 0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00}
	huge = append(huge, fb...)
	for len(huge) < 34 {
		huge = append(huge, 0)
	}
	huge = binary.LittleEndian.AppendUint32(huge, uint32(len(huge)-4))
	huge = append(huge, "PAR1"...)
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"schema nested 10000 deep", pqtest.File(deepSchema(10000), nil), "nested deeper than 64"},
		{"schema nested 100000 deep", pqtest.File(deepSchema(100000), nil), "nested deeper than 64"},
		{"2^31-1 schema elements in 42 bytes", huge, "does not decode"},
		{"negative children", pqtest.File([]format.SchemaElement{{Name: "root", NumChildren: thrift.New(int32(-3))}}, nil), "children"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, err = Open(bytes.NewReader(tc.file), int64(len(tc.file)), "hostile.parquet") })
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "hostile.parquet") {
				t.Fatalf("error %v, want ErrCorrupt naming the file and %q", err, tc.want)
			}
			if limit := uint64(16*len(tc.file)) + 1<<20; n > limit {
				t.Errorf("allocated %d bytes for a %d-byte file", n, len(tc.file))
			}
		})
	}
	// 64 deep is the limit, and it opens.
	ok := pqtest.File(deepSchema(63), nil)
	if _, err := Open(bytes.NewReader(ok), int64(len(ok)), "ok.parquet"); err != nil {
		t.Fatalf("63 groups deep: %v", err)
	}
}

// int64Chunk returns a required INT64 column chunk of the values, PLAIN in one page.
func int64Chunk(vals ...int64) pqtest.Chunk {
	var body []byte
	for _, v := range vals {
		body = binary.LittleEndian.AppendUint64(body, uint64(v))
	}
	return pqtest.Chunk{
		Meta: format.ColumnMetaData{Type: format.Int64, PathInSchema: []string{"x"}, Codec: format.Uncompressed, NumValues: int64(len(vals)), Encoding: []format.Encoding{format.Plain}},
		Pages: []pqtest.Page{{Header: format.PageHeader{Type: format.DataPage,
			DataPageHeader: thrift.New(format.DataPageHeader{NumValues: int32(len(vals)), Encoding: format.Plain})}, Body: body}},
	}
}

// dictChunk returns a required INT64 chunk with a dictionary page claiming dictValues values
// in dict's bytes, and one RLE_DICTIONARY data page of pageValues values in body.
func dictChunk(dictValues int32, dict []byte, pageValues int32, body []byte, chunkValues int64) pqtest.Chunk {
	return pqtest.Chunk{
		Meta: format.ColumnMetaData{Type: format.Int64, PathInSchema: []string{"x"}, Codec: format.Uncompressed, NumValues: chunkValues, Encoding: []format.Encoding{format.Plain, format.RLEDictionary}},
		Pages: []pqtest.Page{
			{Header: format.PageHeader{Type: format.DictionaryPage, DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{NumValues: dictValues, Encoding: format.Plain})}, Body: dict},
			{Header: format.PageHeader{Type: format.DataPage, DataPageHeader: thrift.New(format.DataPageHeader{NumValues: pageValues, Encoding: format.RLEDictionary})}, Body: body},
		},
	}
}

var int64Schema = []format.SchemaElement{{Name: "root", NumChildren: thrift.New(int32(1))}, leaf("x", format.Int64)}

// HostilePages returns files whose pages claim more values than they can hold.
func hostilePages() map[string][]byte {
	const max = 1<<31 - 1
	run := binary.AppendUvarint([]byte{0}, uint64(max)<<1) // bit width 0, one RLE run of 2^31-1
	return map[string][]byte{
		"a dictionary of 2^31-1 values in 8 bytes": pqtest.File(int64Schema, []pqtest.RowGroup{{Rows: 1, Chunks: []pqtest.Chunk{
			dictChunk(max, make([]byte, 8), 1, []byte{0, 2}, 1)}}}),
		"an RLE run of 2^31-1 dictionary indices in 6 bytes": pqtest.File(int64Schema, []pqtest.RowGroup{{Rows: max, Chunks: []pqtest.Chunk{
			dictChunk(1, make([]byte, 8), max, run, max)}}}),
		"a chunk of more values than rows": pqtest.File(int64Schema, []pqtest.RowGroup{{Rows: 1, Chunks: []pqtest.Chunk{int64Chunk(1, 2)}}}),
	}
}

// TestHostilePages: page headers whose value counts exceed what their bytes or their row
// group hold are refused before the library decodes (and allocates for) them.
func TestHostilePages(t *testing.T) {
	for name, file := range hostilePages() {
		t.Run(name, func(t *testing.T) {
			f, err := Open(bytes.NewReader(file), int64(len(file)), "hostile.parquet")
			if err != nil {
				t.Fatal(err)
			}
			err = f.CheckPages(Limits{})
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("CheckPages: %v", err)
			}
			if !strings.Contains(err.Error(), "hostile.parquet") || !strings.Contains(err.Error(), `"x"`) {
				t.Fatalf("the error names neither the file nor the column: %v", err)
			}
		})
	}
	good := pqtest.File(int64Schema, []pqtest.RowGroup{{Rows: 3, Chunks: []pqtest.Chunk{int64Chunk(1, 2, 3)}}})
	f, err := Open(bytes.NewReader(good), int64(len(good)), "good.parquet")
	if err == nil {
		err = f.CheckPages(Limits{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestOpenPathFIFO: a named pipe is refused at once, not waited on in open(2).
func TestOpenPathFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe.parquet")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := OpenPath(p)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Fatalf("error %v, want one naming a named pipe", err)
		}
	case <-time.After(10 * time.Second):
		// Unblock the open so the goroutine ends.
		if w, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("OpenPath blocked on a named pipe")
	}
}

// TestWindows: a file of many row groups is decoded a window at a time, and every window
// lists exactly its row groups, with the right data.
func TestWindows(t *testing.T) {
	for _, ordinals := range []bool{false, true} {
		t.Run(fmt.Sprintf("ordinals=%v", ordinals), func(t *testing.T) { testWindows(t, ordinals) })
	}
}

// testWindows: row groups with ordinals (as parquet-go and pyarrow write them) are read by
// window too, whose footers number them from 0.
func testWindows(t *testing.T, ordinals bool) {
	const n = 1000
	var groups []pqtest.RowGroup
	for i := range n {
		groups = append(groups, pqtest.RowGroup{Rows: 1, Chunks: []pqtest.Chunk{int64Chunk(int64(i))}})
	}
	file := pqtest.FileOrdinals(int64Schema, groups, ordinals)
	f, err := Open(bytes.NewReader(file), int64(len(file)), "many.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRowGroups() != n {
		t.Fatalf("%d row groups", f.NumRowGroups())
	}
	windows := 0
	for i := 0; i < n; {
		w, err := f.Window(i)
		if err != nil {
			t.Fatal(err)
		}
		if w.First != i {
			t.Fatalf("window of %d starts at %d", i, w.First)
		}
		rgs := w.PF.Metadata().RowGroups
		if len(rgs) == 0 || len(rgs) > windowRowGroups {
			t.Fatalf("window of %d row groups", len(rgs))
		}
		for k := range rgs {
			v := make([]byte, 8)
			m := rgs[k].Columns[0].MetaData
			if _, err := w.PF.ReadAt(v, m.DataPageOffset+m.TotalCompressedSize-8); err != nil {
				t.Fatal(err)
			}
			if got := int64(binary.LittleEndian.Uint64(v)); got != int64(i+k) {
				t.Fatalf("row group %d holds %d", i+k, got)
			}
		}
		i += len(rgs)
		windows++
	}
	if windows < n/windowRowGroups {
		t.Fatalf("%d windows", windows)
	}
	if err := f.CheckPages(Limits{}); err != nil {
		t.Fatal(err)
	}
}
