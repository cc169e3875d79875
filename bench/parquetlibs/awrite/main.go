// Writes the image and text benchmark sets with arrow-go's pqarrow writer (pyarrow's
// defaults: dictionary on, snappy, data page v1).
package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func main() {
	mem := memory.DefaultAllocator
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(100))
	if os.Args[1] == "img" {
		var files []string
		filepath.Walk(os.Args[2], func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				files = append(files, p)
			}
			return nil
		})
		sort.Strings(files)
		st := arrow.StructOf(arrow.Field{Name: "bytes", Type: arrow.BinaryTypes.Binary, Nullable: true}, arrow.Field{Name: "path", Type: arrow.BinaryTypes.String, Nullable: true})
		schema := arrow.NewSchema([]arrow.Field{{Name: "image", Type: st, Nullable: true}, {Name: "label", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
		b := array.NewRecordBuilder(mem, schema)
		sb := b.Field(0).(*array.StructBuilder)
		for i, p := range files {
			data, _ := os.ReadFile(p)
			sb.Append(true)
			sb.FieldBuilder(0).(*array.BinaryBuilder).Append(data)
			sb.FieldBuilder(1).(*array.StringBuilder).Append(filepath.Base(p))
			b.Field(1).(*array.Int64Builder).Append(int64(i % 10))
		}
		rec := b.NewRecord()
		f, _ := os.Create(os.Args[3])
		w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
		if err != nil {
			panic(err)
		}
		tbl := array.NewTableFromRecords(schema, []arrow.Record{rec})
		if err := w.WriteTable(tbl, 100); err != nil {
			panic(err)
		}
		w.Close()
		return
	}
	props = parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(10000))
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "text", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	in, _ := os.Open(os.Args[2])
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var v struct {
			ID   int64  `json:"id"`
			Text string `json:"text"`
		}
		json.Unmarshal(sc.Bytes(), &v)
		b.Field(0).(*array.Int64Builder).Append(v.ID)
		b.Field(1).(*array.StringBuilder).Append(v.Text)
	}
	rec := b.NewRecord()
	f, _ := os.Create(os.Args[3])
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err != nil {
		panic(err)
	}
	if err := w.WriteTable(array.NewTableFromRecords(schema, []arrow.Record{rec}), 10000); err != nil {
		panic(err)
	}
	w.Close()
}
