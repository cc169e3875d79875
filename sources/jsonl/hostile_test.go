package jsonl

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	kgzip "github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/sample"
)

// TestCorruptCompressedTable: every decompressor failure stops the run and names the file,
// including a checksum that fails only at the end of the stream.
func TestCorruptCompressedTable(t *testing.T) {
	raw := genCorpus(400, 3)
	gzStored := func() []byte {
		var b bytes.Buffer
		w, _ := kgzip.NewWriterLevel(&b, kgzip.NoCompression)
		w.Write(raw)
		w.Close()
		return b.Bytes()
	}()
	zst := func() []byte {
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
		defer enc.Close()
		return enc.EncodeAll(raw, nil)
	}()
	flip := func(b []byte, i int) []byte {
		b = bytes.Clone(b)
		if i < 0 {
			i += len(b)
		}
		b[i] ^= 0x04
		return b
	}
	at := bytes.Index(gzStored, []byte(`"text"`)) + 20 // inside a line's text: the JSON stays valid
	cols := []Column{{Key: "text", Kind: sample.KindString}}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"gzip payload flipped", flip(gzStored, at)},
		{"gzip CRC flipped", flip(gzStored, -6)},
		{"gzip trailing garbage", append(bytes.Clone(gzStored), "garbage"...)},
		{"zstd checksum flipped", flip(zst, -2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, "c.jsonl.gz", tc.data)
			src := mustNew(t, []string{path}, cols, Options{Workers: 2, ChunkSize: 16 << 10})
			err := src.Run(context.Background(), func(sample.Sample) error { return nil })
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("Run = %v, want an error naming %s", err, path)
			}
			t.Log(err)
		})
	}
}

// TestFIFOInput (JSONL): a named pipe with no writer does not hang New,
// and Run waits for a writer only until cancelled; with a writer it reads the stream.
func TestFIFOInput(t *testing.T) {
	cols := []Column{{Key: "text", Kind: sample.KindString, Required: true}}
	p := mkfifo(t)
	src, err := New([]string{p}, cols, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, func(sample.Sample) error { return nil }) }()
	select {
	case err := <-done:
		t.Fatalf("Run returned %v with no writer", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel = %v", err)
	}

	var b bytes.Buffer
	w := kgzip.NewWriter(&b)
	w.Write([]byte("{\"text\": \"a\"}\n{\"text\": \"b\"}\n"))
	w.Close()
	go func() {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(b.Bytes())
		f.Close()
	}()
	got := collect(t, src)
	if len(got) != 2 || string(got[1].Value("text").Bytes) != "b" {
		t.Fatalf("%+v", got)
	}

	// A device is refused up front.
	if _, err := New([]string{"/dev/null"}, cols, Options{}); !errors.Is(err, inputfile.ErrNotStream) {
		t.Fatalf("New(/dev/null) = %v", err)
	}
}
