// Package pqtest writes Parquet files byte by byte for tests: footers and page headers as
// given, however hostile, so that a test can state exactly what a file claims.
package pqtest

import (
	"encoding/binary"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Page is one page of a column chunk: its header (sizes filled in from Body when zero) and
// its bytes.
type Page struct {
	Header format.PageHeader
	Body   []byte
}

// Chunk is one column chunk: its metadata (offsets and sizes are filled in) and its pages.
type Chunk struct {
	Meta  format.ColumnMetaData
	Pages []Page
}

// RowGroup is a row group: its row count and one chunk per leaf column.
type RowGroup struct {
	Rows   int64
	Chunks []Chunk
}

// Marshal encodes a Thrift struct in the compact protocol.
func Marshal(v any) []byte {
	b, err := thrift.Marshal(new(thrift.CompactProtocol), v)
	if err != nil {
		panic(err)
	}
	return b
}

// File returns a Parquet file with the schema and row groups given. A chunk's codec, type
// and value count are taken from its Meta; a page's sizes, when zero, are its body's length.
func File(schema []format.SchemaElement, groups []RowGroup) []byte {
	return FileOrdinals(schema, groups, false)
}

// FileOrdinals is File, with each row group's ordinal set (as parquet-go and recent pyarrow
// write them) when ordinals is true.
func FileOrdinals(schema []format.SchemaElement, groups []RowGroup, ordinals bool) []byte {
	out := []byte("PAR1")
	md := format.FileMetaData{Version: 1, Schema: schema}
	for i, g := range groups {
		rg := format.RowGroup{NumRows: g.Rows}
		if ordinals {
			rg.Ordinal = int16(i)
		}
		for _, c := range g.Chunks {
			m := c.Meta
			start := int64(len(out))
			m.DictionaryPageOffset, m.DataPageOffset = 0, -1
			var unc int64
			for _, p := range c.Pages {
				h := p.Header
				if h.CompressedPageSize == 0 {
					h.CompressedPageSize = int32(len(p.Body))
				}
				if h.UncompressedPageSize == 0 {
					h.UncompressedPageSize = int32(len(p.Body))
				}
				if h.Type == format.DictionaryPage {
					m.DictionaryPageOffset = int64(len(out))
				} else if m.DataPageOffset < 0 {
					m.DataPageOffset = int64(len(out))
				}
				hb := Marshal(&h)
				unc += int64(len(hb)) + int64(h.UncompressedPageSize)
				out = append(out, hb...)
				out = append(out, p.Body...)
			}
			if m.DataPageOffset < 0 {
				m.DataPageOffset = start
			}
			m.TotalCompressedSize = int64(len(out)) - start
			m.TotalUncompressedSize = unc
			rg.Columns = append(rg.Columns, format.ColumnChunk{FileOffset: start, MetaData: m})
			rg.TotalByteSize += unc
		}
		md.RowGroups = append(md.RowGroups, rg)
		md.NumRows += g.Rows
	}
	return Footer(out, &md)
}

// Footer appends the footer md and the trailing magic to the file's body.
func Footer(body []byte, md *format.FileMetaData) []byte {
	fb := Marshal(md)
	body = append(body, fb...)
	body = binary.LittleEndian.AppendUint32(body, uint32(len(fb)))
	return append(body, "PAR1"...)
}
