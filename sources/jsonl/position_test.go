package jsonl

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// line is what a test compares of a sample: its origin, its value or its error.
// (An overlong line's message says its length when its end came in the same read, which
// depends on where the reads fall: only that the line is too long is compared.)
func describe(s sample.Sample) string {
	if errors.Is(s.Err, ErrLineTooLong) {
		return s.Origin + " too long"
	}
	if s.Err != nil {
		return s.Origin + " error " + s.Err.Error()
	}
	return s.Origin + " " + s.Key + " " + string(s.Values[0].Value.Bytes)
}

// batches runs src's batches and returns their samples and the token after each batch.
func batches(t *testing.T, src sources.Source) ([]string, [][]byte, []int) {
	t.Helper()
	var got []string
	var tokens [][]byte
	var ends []int
	err := src.(sources.BatchSource).RunBatches(context.Background(), func(b sources.Batch) error {
		tok := b.(sources.PositionedBatch).After()
		var m sources.Memory
		b.Decode(&m)
		for _, s := range m.Samples {
			got = append(got, describe(s))
		}
		tokens, ends = append(tokens, tok), append(ends, len(got))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, tokens, ends
}

// TestResumeFromEveryBatch: resuming from the token after any batch gives exactly the
// samples after it, origins (line numbers) included, over plain, gzip, BOM-started,
// newline-less and overlong-line files, read as streams and through mapping windows.
func TestResumeFromEveryBatch(t *testing.T) {
	dir := t.TempDir()
	var plain bytes.Buffer
	for i := range 40 {
		if i == 7 {
			plain.WriteString("{not json\n")
		}
		if i == 11 {
			plain.WriteString(`{"text":"` + strings.Repeat("x", 300) + `"}` + "\n") // over MaxLineSize
		}
		fmt.Fprintf(&plain, `{"text":"a%d"}`+"\n", i)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for i := range 25 {
		fmt.Fprintf(zw, `{"text":"g%d"}`+"\n", i)
	}
	zw.Close()
	files := []string{
		write("a.jsonl", plain.Bytes()),
		write("b.jsonl.gz", gz.Bytes()),
		write("c.jsonl", []byte("\xEF\xBB\xBF"+`{"text":"bom"}`+"\n\n"+`{"text":"last, no newline"}`)),
		write("d.jsonl", []byte(`{"text":"d0"}`+"\n")),
	}
	cols := []Column{{Name: "text", Key: "text", Kind: sample.KindString}}
	for _, o := range []Options{{noMap: true}, {mapWindow: 100}, {}} {
		o.ChunkLines, o.MaxLineSize, o.ChunkSize = 3, 200, 256
		resumeFromEveryBatch(t, files, cols, o)
	}
}

func resumeFromEveryBatch(t *testing.T, files []string, cols []Column, o Options) {
	src, err := New(files, cols, o)
	if err != nil {
		t.Fatal(err)
	}
	all, tokens, ends := batches(t, src)
	if len(tokens) < 10 {
		t.Fatalf("only %d batches", len(tokens))
	}
	for k, tok := range tokens {
		next, err := src.Resume(0, tok)
		if err != nil {
			t.Fatalf("resume after batch %d (%s): %v", k, tok, err)
		}
		rest, _, _ := batches(t, next)
		want := all[ends[k]:]
		if strings.Join(rest, "\n") != strings.Join(want, "\n") {
			t.Fatalf("resumed after batch %d (%s):\n%s\nwant\n%s", k, tok, strings.Join(rest, "\n"), strings.Join(want, "\n"))
		}
		// Run (sample by sample) gives the same samples.
		var viaRun []string
		if err := next.Run(context.Background(), func(s sample.Sample) error { viaRun = append(viaRun, describe(s)); return nil }); err != nil {
			t.Fatal(err)
		}
		if strings.Join(viaRun, "\n") != strings.Join(want, "\n") {
			t.Fatalf("Run after batch %d differs", k)
		}
	}
	for _, bad := range []string{``, `{`, `{"file":"nope.jsonl","line":3}`, `{"file":"` + files[0] + `","line":0}`} {
		if _, err := src.Resume(0, []byte(bad)); !errors.Is(err, sources.ErrPosition) {
			t.Errorf("Resume(%q) = %v, want ErrPosition", bad, err)
		}
	}
}
