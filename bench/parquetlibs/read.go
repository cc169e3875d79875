// Command parquetlibs compares the two Go Parquet readers on our workload: it writes the benchmark
// sets as Parquet (genimg, gentext: parquet-go; awrite: arrow-go, pyarrow-like) and reads every
// column chunk of a file with either library (pq, arrow), copying byte values out, or runs both
// over files that must fail (bad). A separate module, so the main one does not depend on arrow-go.
//
//	cd bench/parquetlibs && ./compare.sh
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	aparquet "github.com/apache/arrow-go/v18/parquet"
	afile "github.com/apache/arrow-go/v18/parquet/file"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
)

type Image struct {
	Bytes []byte  `parquet:"bytes,optional,plain"`
	Path  *string `parquet:"path,optional"`
}
type ImgRow struct {
	Image *Image `parquet:"image,optional"`
	Label *int64 `parquet:"label,optional"`
}
type TextRow struct {
	ID   *int64  `parquet:"id,optional"`
	Text *string `parquet:"text,optional"`
}

func main() {
	switch os.Args[1] {
	case "genimg":
		must(genImg(os.Args[2], os.Args[3]))
	case "gentext":
		must(genText(os.Args[2], os.Args[3]))
	case "pq", "arrow":
		t0 := time.Now()
		rows, bytes, err := readAll(os.Args[1], os.Args[2])
		must(err)
		s := time.Since(t0).Seconds()
		fmt.Printf("%s %s: %d rows %.1f MB in %.2fs: %.0f rows/s %.0f MB/s, peak RSS %d MiB\n", os.Args[1], filepath.Base(os.Args[2]), rows, float64(bytes)/1e6, s, float64(rows)/s, float64(bytes)/1e6/s, peak()/1024)
	case "bad":
		for _, f := range os.Args[3:] {
			res := make(chan string, 1)
			go func() {
				defer func() {
					if r := recover(); r != nil {
						res <- fmt.Sprintf("PANIC %v", strings.SplitN(fmt.Sprint(r), "\n", 2)[0])
					}
				}()
				_, _, err := readAll(os.Args[2], f)
				if err != nil {
					res <- "error: " + trunc(err.Error())
				} else {
					res <- "ok"
				}
			}()
			select {
			case r := <-res:
				fmt.Printf("%-45s %s\n", filepath.Base(f), r)
			case <-time.After(20 * time.Second):
				fmt.Printf("%-45s HANG\n", filepath.Base(f))
			}
		}
	}
}

func trunc(s string) string {
	if len(s) > 400 {
		return s[:110]
	}
	return s
}
func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
func peak() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss
}

func hfMeta(features string) parquet.WriterOption {
	return parquet.KeyValueMetadata("huggingface", `{"info": {"features": `+features+`}}`)
}

func genImg(dir, out string) error {
	var files []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	f, _ := os.Create(out)
	defer f.Close()
	w := parquet.NewGenericWriter[ImgRow](f, parquet.Compression(&snappy.Codec{}), parquet.MaxRowsPerRowGroup(100), parquet.DataPageVersion(1), parquet.PageBufferSize(1<<20),
		hfMeta(`{"image": {"_type": "Image"}, "label": {"names": ["c0","c1","c2","c3","c4","c5","c6","c7","c8","c9"], "_type": "ClassLabel"}}`))
	for i, p := range files {
		b, _ := os.ReadFile(p)
		name := filepath.Base(p)
		l := int64(i % 10)
		if _, err := w.Write([]ImgRow{{Image: &Image{Bytes: b, Path: &name}, Label: &l}}); err != nil {
			return err
		}
	}
	return w.Close()
}

func genText(jsonl, out string) error {
	in, err := os.Open(jsonl)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<26)
	f, _ := os.Create(out)
	defer f.Close()
	w := parquet.NewGenericWriter[TextRow](f, parquet.Compression(&snappy.Codec{}), parquet.MaxRowsPerRowGroup(10000),
		hfMeta(`{"id": {"dtype": "int64", "_type": "Value"}, "text": {"dtype": "string", "_type": "Value"}}`))
	for sc.Scan() {
		var v struct {
			ID   int64  `json:"id"`
			Text string `json:"text"`
		}
		json.Unmarshal(sc.Bytes(), &v)
		if _, err := w.Write([]TextRow{{ID: &v.ID, Text: &v.Text}}); err != nil {
			return err
		}
	}
	return w.Close()
}

// readAll reads every leaf column of every row group, copying byte values out, column by column
// per row group (what a row-group worker does).
func readAll(lib, path string) (rows, nbytes int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, _ := f.Stat()
	arena := make([]byte, 0, 1<<20)
	if lib == "pq" {
		pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true), parquet.ReadBufferSize(1<<20))
		if err != nil {
			return 0, 0, err
		}
		vals := make([]parquet.Value, 256)
		for _, rg := range pf.RowGroups() {
			rows += rg.NumRows()
			for _, cc := range rg.ColumnChunks() {
				vr := parquet.NewColumnChunkValueReader(cc)
				for {
					n, err := vr.ReadValues(vals)
					for _, v := range vals[:n] {
						switch v.Kind() {
						case parquet.ByteArray, parquet.FixedLenByteArray:
							arena = append(arena[:0], v.ByteArray()...)
							nbytes += int64(len(v.ByteArray()))
						default:
							nbytes += 8
						}
					}
					if err == io.EOF {
						break
					}
					if err != nil {
						vr.Close()
						return rows, nbytes, err
					}
				}
				vr.Close()
			}
		}
		return rows, nbytes, nil
	}
	props := aparquet.NewReaderProperties(memory.DefaultAllocator)
	props.BufferedStreamEnabled = true
	props.BufferSize = 1 << 20
	r, err := afile.NewParquetReader(f, afile.WithReadProps(props))
	if err != nil {
		return 0, 0, err
	}
	ba := make([]aparquet.ByteArray, 256)
	i64 := make([]int64, 256)
	i32 := make([]int32, 256)
	f64 := make([]float64, 256)
	f32 := make([]float32, 256)
	bo := make([]bool, 256)
	i96 := make([]aparquet.Int96, 256)
	fl := make([]aparquet.FixedLenByteArray, 256)
	def := make([]int16, 256)
	rep := make([]int16, 256)
	for g := 0; g < r.NumRowGroups(); g++ {
		rg := r.RowGroup(g)
		rows += rg.NumRows()
		for c := 0; c < rg.NumColumns(); c++ {
			cr, err := rg.Column(c)
			if err != nil {
				return rows, nbytes, err
			}
			for cr.HasNext() {
				var n int
				var total int64
				switch cr := cr.(type) {
				case *afile.ByteArrayColumnChunkReader:
					total, n, err = cr.ReadBatch(256, ba, def, rep)
					for _, v := range ba[:n] {
						arena = append(arena[:0], v...)
						nbytes += int64(len(v))
					}
				case *afile.FixedLenByteArrayColumnChunkReader:
					total, n, err = cr.ReadBatch(256, fl, def, rep)
					for _, v := range fl[:n] {
						nbytes += int64(len(v))
					}
				case *afile.Int64ColumnChunkReader:
					total, n, err = cr.ReadBatch(256, i64, def, rep)
					nbytes += int64(8 * n)
				case *afile.Int32ColumnChunkReader:
					total, n, err = cr.ReadBatch(256, i32, def, rep)
					nbytes += int64(8 * n)
				case *afile.Float64ColumnChunkReader:
					total, n, err = cr.ReadBatch(256, f64, def, rep)
					nbytes += int64(8 * n)
				case *afile.Float32ColumnChunkReader:
					total, n, err = cr.ReadBatch(256, f32, def, rep)
					nbytes += int64(8 * n)
				case *afile.BooleanColumnChunkReader:
					total, n, err = cr.ReadBatch(256, bo, def, rep)
					nbytes += int64(8 * n)
				case *afile.Int96ColumnChunkReader:
					total, n, err = cr.ReadBatch(256, i96, def, rep)
					nbytes += int64(8 * n)
				default:
					return rows, nbytes, errors.New("unknown column reader")
				}
				if err != nil {
					return rows, nbytes, err
				}
				if total == 0 && cr.Err() == nil {
					break
				}
			}
			if err := cr.Err(); err != nil {
				return rows, nbytes, err
			}
		}
	}
	return rows, nbytes, nil
}

var _ = context.Background
var _ = debug.SetMaxStack
