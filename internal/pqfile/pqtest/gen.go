package pqtest

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Required returns a required leaf of type t.
func Required(name string, t format.Type) format.SchemaElement {
	return format.SchemaElement{Name: name, Type: thrift.New(t), RepetitionType: thrift.New(format.Required)}
}

// Root returns the root of a schema of children top-level fields.
func Root(children int) format.SchemaElement {
	return format.SchemaElement{Name: "schema", NumChildren: thrift.New(int32(children))}
}

// PlainPage returns one uncompressed PLAIN data page of n values in body.
func PlainPage(n int, body []byte) Page {
	return Page{Header: format.PageHeader{Type: format.DataPage,
		DataPageHeader: thrift.New(format.DataPageHeader{NumValues: int32(n), Encoding: format.Plain})}, Body: body}
}

// Int64Column returns a required INT64 column chunk of vals.
func Int64Column(name string, vals []int64) Chunk {
	var body []byte
	for _, v := range vals {
		body = binary.LittleEndian.AppendUint64(body, uint64(v))
	}
	return Chunk{Meta: format.ColumnMetaData{Type: format.Int64, PathInSchema: []string{name}, Codec: format.Uncompressed,
		NumValues: int64(len(vals)), Encoding: []format.Encoding{format.Plain}}, Pages: []Page{PlainPage(len(vals), body)}}
}

// Wide returns a table of cols INT64 columns c0, c1... and rows rows (cell = row*cols+col).
func Wide(cols, rows int) []byte {
	schema := []format.SchemaElement{Root(cols)}
	var chunks []Chunk
	for c := range cols {
		name := fmt.Sprintf("c%d", c)
		schema = append(schema, Required(name, format.Int64))
		vals := make([]int64, rows)
		for r := range vals {
			vals[r] = int64(r*cols + c)
		}
		chunks = append(chunks, Int64Column(name, vals))
	}
	return File(schema, []RowGroup{{Rows: int64(rows), Chunks: chunks}})
}

// Dict returns the table {id INT64, s BYTE_ARRAY} of rows rows where s is one value of
// size bytes, dictionary-encoded: one dictionary entry, and indices of bit width 0.
func Dict(rows, size int) []byte {
	ids := make([]int64, rows)
	for i := range ids {
		ids[i] = int64(i)
	}
	dict := binary.LittleEndian.AppendUint32(nil, uint32(size))
	dict = append(dict, bytes.Repeat([]byte{'x'}, size)...)
	run := binary.AppendUvarint([]byte{0}, uint64(rows)<<1)
	s := Chunk{Meta: format.ColumnMetaData{Type: format.ByteArray, PathInSchema: []string{"s"}, Codec: format.Uncompressed,
		NumValues: int64(rows), Encoding: []format.Encoding{format.Plain, format.RLEDictionary}},
		Pages: []Page{
			{Header: format.PageHeader{Type: format.DictionaryPage, DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{NumValues: 1, Encoding: format.Plain})}, Body: dict},
			{Header: format.PageHeader{Type: format.DataPage, DataPageHeader: thrift.New(format.DataPageHeader{NumValues: int32(rows), Encoding: format.RLEDictionary})}, Body: run},
		}}
	return File([]format.SchemaElement{Root(2), Required("id", format.Int64), Required("s", format.ByteArray)},
		[]RowGroup{{Rows: int64(rows), Chunks: []Chunk{Int64Column("id", ids), s}}})
}

// Zstd returns a table of cols BYTE_ARRAY columns, each one zstd page holding one value
// of size zero bytes, in groups row groups of one row.
func Zstd(cols, groups, size int) []byte {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		panic(err)
	}
	defer enc.Close()
	plain := binary.LittleEndian.AppendUint32(nil, uint32(size))
	plain = append(plain, make([]byte, size)...)
	body := enc.EncodeAll(plain, nil)
	schema := []format.SchemaElement{Root(cols)}
	for c := range cols {
		schema = append(schema, Required(fmt.Sprintf("b%d", c), format.ByteArray))
	}
	var rgs []RowGroup
	for range groups {
		var chunks []Chunk
		for c := range cols {
			p := PlainPage(1, body)
			p.Header.UncompressedPageSize = int32(len(plain))
			chunks = append(chunks, Chunk{Meta: format.ColumnMetaData{Type: format.ByteArray, PathInSchema: []string{fmt.Sprintf("b%d", c)},
				Codec: format.Zstd, NumValues: 1, Encoding: []format.Encoding{format.Plain}}, Pages: []Page{p}})
		}
		rgs = append(rgs, RowGroup{Rows: 1, Chunks: chunks})
	}
	return File(schema, rgs)
}

// ManyGroups returns a table {x INT64} of groups one-row row groups (x = the row).
func ManyGroups(groups int) []byte {
	rgs := make([]RowGroup, groups)
	for i := range rgs {
		rgs[i] = RowGroup{Rows: 1, Chunks: []Chunk{Int64Column("x", []int64{int64(i)})}}
	}
	return File([]format.SchemaElement{Root(1), Required("x", format.Int64)}, rgs)
}

// Compressed returns a table {b BYTE_ARRAY} of one row whose one PLAIN page holds plain
// compressed as body says, under a header that declares declared bytes uncompressed (a lie
// when it is not len(plain)) and the checksum crc (0: none).
func Compressed(codec format.CompressionCodec, body []byte, declared int, crc int32) []byte {
	p := PlainPage(1, body)
	p.Header.UncompressedPageSize = int32(declared)
	p.Header.CRC = crc
	c := Chunk{Meta: format.ColumnMetaData{Type: format.ByteArray, PathInSchema: []string{"b"}, Codec: codec,
		NumValues: 1, Encoding: []format.Encoding{format.Plain}}, Pages: []Page{p}}
	return File([]format.SchemaElement{Root(1), Required("b", format.ByteArray)}, []RowGroup{{Rows: 1, Chunks: []Chunk{c}}})
}
