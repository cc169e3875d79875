// Command genparquet writes Parquet files the way the Hugging Face Hub writes datasets, for
// tests and benchmarks: an ImageFolder (root/<class>/<image>) as an image-classification
// table {image: struct<bytes, path>, label: ClassLabel}, or a JSONL corpus ({"id", "text",
// ...} lines) as a text table {id, text}. The "huggingface" key-value metadata holds the
// features JSON; pages are snappy-compressed data pages v1, as pyarrow writes them (-codec
// gzip or zstd for the other codecs the Hub's files use). The output is deterministic.
//
// Usage:
//
//	go run ./bench/genparquet -images DIR -out images.parquet [-rows-per-group 100]
//	go run ./bench/genparquet -jsonl corpus.jsonl -out text.parquet [-rows-per-group 10000] [-codec zstd]
//	go run ./bench/genparquet -textcls -out text.parquet   # the small text-classification fixture
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// Image is the Hugging Face Image feature's storage: a struct of the file's bytes and name.
type Image struct {
	Bytes []byte  `parquet:"bytes,optional,plain"`
	Path  *string `parquet:"path,optional"`
}

type imageRow struct {
	Image *Image `parquet:"image,optional"`
	Label *int64 `parquet:"label,optional"`
}

type textRow struct {
	ID   *int64  `parquet:"id,optional"`
	Text *string `parquet:"text,optional"`
}

type textClsRow struct {
	Text      *string   `parquet:"text,optional"`
	Label     *int64    `parquet:"label,optional"`
	InputIDs  []int32   `parquet:"input_ids,optional,list"`
	Embedding []float32 `parquet:"embedding,optional,list"`
}

func main() {
	images := flag.String("images", "", "an ImageFolder to write as an image-classification table")
	jsonl := flag.String("jsonl", "", "a JSONL corpus to write as a text table")
	textcls := flag.Bool("textcls", false, "write the small text-classification fixture")
	out := flag.String("out", "", "output .parquet (overwritten)")
	rows := flag.Int("rows-per-group", 0, "rows per row group (default 100 for images, as the Hub; 10000 for text)")
	codecName := flag.String("codec", "snappy", "page compression: snappy, gzip or zstd")
	flag.Parse()
	var err error
	var codec compress.Codec
	switch *codecName {
	case "snappy":
		codec = &snappy.Codec{}
	case "gzip":
		codec = &gzip.Codec{Level: gzip.DefaultCompression}
	case "zstd":
		codec = &zstd.Codec{Level: zstd.DefaultLevel}
	default:
		err = fmt.Errorf("-codec %q: snappy, gzip or zstd", *codecName)
	}
	switch {
	case err != nil:
	case *out == "":
		err = errors.New("-out is required")
	case *images != "":
		err = writeImages(*images, *out, or(*rows, 100), codec)
	case *jsonl != "":
		err = writeText(*jsonl, *out, or(*rows, 10000), codec)
	case *textcls:
		err = writeTextCls(*out, or(*rows, 4), codec)
	default:
		err = errors.New("one of -images, -jsonl, -textcls is required")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genparquet:", err)
		os.Exit(1)
	}
}

func or(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

func options(codec compress.Codec, rows int, features string) []parquet.WriterOption {
	return []parquet.WriterOption{
		parquet.Compression(codec), parquet.MaxRowsPerRowGroup(int64(rows)),
		parquet.DataPageVersion(1), parquet.PageBufferSize(1 << 20), parquet.DataPageStatistics(false),
		parquet.KeyValueMetadata("huggingface", `{"info": {"features": `+features+`}}`),
	}
}

func create(out string, write func(*os.File) error) error {
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

func writeImages(dir, out string, rows int, codec compress.Codec) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var classes []string
	for _, e := range entries {
		if e.IsDir() {
			classes = append(classes, e.Name())
		}
	}
	sort.Strings(classes)
	names, _ := json.Marshal(classes)
	return create(out, func(f *os.File) error {
		w := parquet.NewGenericWriter[imageRow](f, options(codec, rows, `{"image": {"_type": "Image"}, "label": {"names": `+string(names)+`, "_type": "ClassLabel"}}`)...)
		for label, class := range classes {
			var files []string
			err := filepath.WalkDir(filepath.Join(dir, class), func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() && !strings.HasSuffix(p, ".md") {
					files = append(files, p)
				}
				return err
			})
			if err != nil {
				return err
			}
			sort.Strings(files)
			for _, p := range files {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				name, l := filepath.Base(p), int64(label)
				if _, err := w.Write([]imageRow{{Image: &Image{Bytes: b, Path: &name}, Label: &l}}); err != nil {
					return err
				}
			}
		}
		return w.Close()
	})
}

func writeText(in, out string, rows int, codec compress.Codec) error {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	sc := bufio.NewScanner(src)
	sc.Buffer(nil, 1<<28)
	return create(out, func(f *os.File) error {
		w := parquet.NewGenericWriter[textRow](f, options(codec, rows, `{"id": {"dtype": "int64", "_type": "Value"}, "text": {"dtype": "string", "_type": "Value"}}`)...)
		for line := 1; sc.Scan(); line++ {
			var v struct {
				ID   int64  `json:"id"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				return fmt.Errorf("%s:%d: %w", in, line, err)
			}
			if _, err := w.Write([]textRow{{ID: &v.ID, Text: &v.Text}}); err != nil {
				return err
			}
		}
		if err := sc.Err(); err != nil {
			return err
		}
		return w.Close()
	})
}

// writeTextCls writes a small sentiment table: text, a ClassLabel, token ids (a Sequence of
// int32) and a fixed-length embedding (a Sequence of float32 of length 4); one row has a null
// text and one an empty id list.
func writeTextCls(out string, rows int, codec compress.Codec) error {
	texts := []string{"a wonderful, heartfelt film", "dull and far too long", "the cast is superb",
		"I want those two hours back", "", "quietly devastating — in the best way", "😀 loved it",
		"plot holes everywhere", "a masterpiece of restraint", "forgettable"}
	return create(out, func(f *os.File) error {
		w := parquet.NewGenericWriter[textClsRow](f, options(codec, rows, `{"text": {"dtype": "string", "_type": "Value"}, `+
			`"label": {"names": ["neg", "pos"], "_type": "ClassLabel"}, `+
			`"input_ids": {"feature": {"dtype": "int32", "_type": "Value"}, "_type": "Sequence"}, `+
			`"embedding": {"feature": {"dtype": "float32", "_type": "Value"}, "length": 4, "_type": "Sequence"}}`)...)
		for i, t := range texts {
			label := int64((i + 1) % 2)
			row := textClsRow{Label: &label}
			if i != 4 {
				row.Text = &t
			}
			for j, r := range t {
				if j < 24 {
					row.InputIDs = append(row.InputIDs, int32(r))
				}
			}
			if row.InputIDs == nil {
				row.InputIDs = []int32{}
			}
			row.Embedding = []float32{float32(i), float32(len(t)), 0.5, -1}
			if _, err := w.Write([]textClsRow{row}); err != nil {
				return err
			}
		}
		return w.Close()
	})
}
