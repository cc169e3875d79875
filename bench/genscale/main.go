// Command genscale generates the inputs of the scale benchmark (bench/scale.sh) on the fly,
// deterministically, so that 10^8 samples never have to be stored in the repository or all
// on disk at once:
//
//	genscale jsonl -n 100000000 [-files K -out PREFIX]   tiny JSONL lines {"id", "text", "lang"}
//	genscale tar -n 10000000 -kind jpg|wav               a WebDataset tar stream on stdout:
//	                                                     KEY.jpg (a 32x32 thumbnail) or KEY.wav
//	                                                     (0.1 s of 16 kHz mono) plus KEY.cls
//	genscale folder -n 1000000 -out DIR [-classes C]     an ImageFolder of hard links to a few
//	                                                     thumbnails (no data per file)
//	genscale parquet -n 10000000 -out FILE               the JSONL lines' id and text as a
//	                                                     Parquet file (snappy, row groups of 100 k)
//
// Without -out, jsonl writes to stdout. With -files K and -out PREFIX it writes K files
// PREFIX-0000k.jsonl of n/K lines each (the inputs of a sharded run).
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: genscale jsonl|tar|folder [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	n := fs.Int64("n", 1_000_000, "number of samples")
	out := fs.String("out", "", "output file, prefix or folder")
	files := fs.Int("files", 1, "jsonl: number of files")
	kind := fs.String("kind", "jpg", "tar: jpg or wav")
	classes := fs.Int("classes", 100, "folder: class folders")
	_ = fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "jsonl":
		err = genJSONL(*n, *files, *out)
	case "tar":
		w := bufio.NewWriterSize(os.Stdout, 1<<20)
		if err = genTar(w, *n, *kind); err == nil {
			err = w.Flush()
		}
	case "folder":
		err = genFolder(*n, *classes, *out)
	case "parquet":
		err = genParquet(*n, *out)
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genscale:", err)
		os.Exit(1)
	}
}

var words = []string{"the", "model", "data", "quick", "brown", "fox", "jumps", "over", "lazy", "dog",
	"tensor", "sample", "page", "scale", "memory", "token", "stream", "shard", "image", "audio"}

var langs = []string{"en", "de", "fr", "ru"}

// line appends sample i's JSONL line: {"id": i, "text": "w1 w2 w3", "lang": "xx"}.
func line(b []byte, i int64) []byte {
	b = append(b, `{"id": `...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, `, "text": "`...)
	x := uint64(i)*0x9E3779B97F4A7C15 + 1
	for k := range 1 + int(x>>61)%3 {
		if k > 0 {
			b = append(b, ' ')
		}
		b = append(b, words[(x>>(8*k))%uint64(len(words))]...)
	}
	b = append(b, `", "lang": "`...)
	b = append(b, langs[(x>>40)%4]...)
	return append(b, "\"}\n"...)
}

func genJSONL(n int64, files int, out string) error {
	if files < 1 {
		return errors.New("-files must be >= 1")
	}
	if files > 1 && out == "" {
		return errors.New("-files needs -out PREFIX")
	}
	var next int64
	for f := range files {
		count := n / int64(files)
		if f < int(n%int64(files)) {
			count++
		}
		var w io.Writer = os.Stdout
		var file *os.File
		if out != "" {
			name := out
			if files > 1 {
				name = fmt.Sprintf("%s-%05d.jsonl", out, f)
			}
			var err error
			if file, err = os.Create(name); err != nil {
				return err
			}
			w = file
		}
		bw := bufio.NewWriterSize(w, 1<<20)
		var b []byte
		for i := next; i < next+count; i++ {
			b = line(b[:0], i)
			if _, err := bw.Write(b); err != nil {
				return err
			}
		}
		next += count
		if err := bw.Flush(); err != nil {
			return err
		}
		if file != nil {
			if err := file.Close(); err != nil {
				return err
			}
		}
	}
	return nil
}

// thumbnails returns k 32x32 JPEG thumbnails (distinct for k up to 256).
func thumbnails(k int) ([][]byte, error) {
	out := make([][]byte, k)
	for t := range k {
		img := image.NewRGBA(image.Rect(0, 0, 32, 32))
		for y := range 32 {
			for x := range 32 {
				img.Set(x, y, color.RGBA{uint8(x*8 + t), uint8(y*8 + 3*t), uint8((x + y + t) * 4), 255})
			}
		}
		var b bytes.Buffer
		if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
			return nil, err
		}
		out[t] = b.Bytes()
	}
	return out, nil
}

// clips returns k distinct WAV clips of 0.1 s of 16 kHz 16-bit mono tone.
func clips(k int) [][]byte {
	const rate, n = 16000, 1600
	out := make([][]byte, k)
	for t := range k {
		b := make([]byte, 44+2*n)
		le := binary.LittleEndian
		copy(b[0:], "RIFF")
		le.PutUint32(b[4:], uint32(36+2*n))
		copy(b[8:], "WAVEfmt ")
		le.PutUint32(b[16:], 16)
		le.PutUint16(b[20:], 1)
		le.PutUint16(b[22:], 1)
		le.PutUint32(b[24:], rate)
		le.PutUint32(b[28:], 2*rate)
		le.PutUint16(b[32:], 2)
		le.PutUint16(b[34:], 16)
		copy(b[36:], "data")
		le.PutUint32(b[40:], 2*n)
		f := 200 + 20*float64(t)
		for i := range n {
			v := 8000 * math.Sin(2*math.Pi*f*float64(i)/rate)
			le.PutUint16(b[44+2*i:], uint16(int16(v)))
		}
		out[t] = b
	}
	return out
}

func genTar(w io.Writer, n int64, kind string) error {
	var payloads [][]byte
	ext := kind
	switch kind {
	case "jpg":
		var err error
		if payloads, err = thumbnails(64); err != nil {
			return err
		}
	case "wav":
		payloads = clips(64)
	default:
		return fmt.Errorf("-kind %q: want jpg or wav", kind)
	}
	tw := tar.NewWriter(w)
	var cls []byte
	for i := range n {
		key := fmt.Sprintf("%09d", i)
		p := payloads[i%int64(len(payloads))]
		cls = strconv.AppendInt(cls[:0], i%1000, 10)
		for _, m := range []struct {
			name string
			data []byte
		}{{key + "." + ext, p}, {key + ".cls", cls}} {
			if err := tw.WriteHeader(&tar.Header{Name: m.name, Mode: 0o644, Size: int64(len(m.data)), Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}); err != nil {
				return err
			}
			if _, err := tw.Write(m.data); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

// genFolder writes root/class_CCCC/img_NNNNNNNNN.jpg as hard links to a few thumbnails
// (stored once in root/.src, which the folder source skips: its name starts with a dot).
func genFolder(n int64, classes int, root string) error {
	if root == "" {
		return errors.New("-out is required")
	}
	// ext4 allows 65000 links to one file.
	thumbs, err := thumbnails(max(16, int(n/60000)+1))
	if err != nil {
		return err
	}
	src := filepath.Join(root, ".src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	srcs := make([]string, len(thumbs))
	for k, t := range thumbs {
		srcs[k] = filepath.Join(src, fmt.Sprintf("t%05d.jpg", k))
		if err := os.WriteFile(srcs[k], t, 0o644); err != nil {
			return err
		}
	}
	for c := range classes {
		if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("class_%04d", c)), 0o755); err != nil {
			return err
		}
	}
	for i := range n {
		c := i % int64(classes)
		p := filepath.Join(root, fmt.Sprintf("class_%04d", c), fmt.Sprintf("img_%09d.jpg", i))
		if err := os.Link(srcs[i%int64(len(srcs))], p); err != nil {
			return err
		}
	}
	return nil
}

type parquetRow struct {
	ID   int64  `parquet:"id"`
	Text string `parquet:"text"`
	Lang string `parquet:"lang"`
}

// genParquet writes the rows of genJSONL as a Parquet file, as the Hugging Face Hub does
// (snappy, data pages v1, row groups of 100 k rows).
func genParquet(n int64, out string) error {
	if out == "" {
		return errors.New("-out is required")
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := pq.NewGenericWriter[parquetRow](bw, pq.Compression(&snappy.Codec{}), pq.MaxRowsPerRowGroup(100_000),
		pq.DataPageVersion(1), pq.PageBufferSize(1<<20), pq.DataPageStatistics(false))
	rows := make([]parquetRow, 0, 4096)
	for i := range n {
		x := uint64(i)*0x9E3779B97F4A7C15 + 1
		text := words[x%uint64(len(words))]
		if k := int(x>>61) % 3; k > 0 {
			text += " " + words[(x>>8)%uint64(len(words))]
		}
		rows = append(rows, parquetRow{ID: i, Text: text, Lang: langs[(x>>40)%4]})
		if len(rows) == cap(rows) || i == n-1 {
			if _, err := w.Write(rows); err != nil {
				return err
			}
			rows = rows[:0]
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}
