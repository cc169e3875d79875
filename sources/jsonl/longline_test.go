package jsonl

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/mldf/convert/sample"
)

// TestOverlongLineMemory checks the promise of docs/RECIPES.md: a line over MaxLineSize
// costs at most MaxLineSize + the read chunk (plus the reader's fixed buffers) before it is
// rejected, however long it is: it is held in chunk-sized pieces, never grown by doubling,
// and the rest is streamed past.
func TestOverlongLineMemory(t *testing.T) {
	const (
		maxLine = 8 << 20
		chunk   = 256 << 10
		slack   = 1 << 20 // the decompression reader's buffer, the discard buffer, samples
	)
	cols := []Column{{Key: "text", Kind: sample.KindString, Required: true}}
	// Lines over the limit by far, by less than a read, by one byte; and one at the limit.
	for _, size := range []int{3 * maxLine, maxLine + chunk/2, maxLine + 1, maxLine} {
		var b bytes.Buffer
		b.WriteString("{\"text\": \"first\"}\n")
		b.WriteString(`{"text": "` + strings.Repeat("x", size-12) + "\"}\n")
		b.WriteString("{\"text\": \"after\"}\n")
		path := write(t, "overlong.jsonl", b.Bytes())
		for _, batches := range []bool{false, true} {
			src := mustNew(t, []string{path}, cols, Options{Workers: 1, MaxLineSize: maxLine, ChunkSize: chunk})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			var got []sample.Sample
			if batches {
				got = collectBatches(t, src)
			} else {
				got = collect(t, src)
			}
			runtime.ReadMemStats(&after)
			if size <= maxLine {
				if len(got) != 3 || got[1].Err != nil || len(got[1].Value("text").Bytes) != size-12 {
					t.Fatalf("%d-byte line at the limit: %d samples, %v", size, len(got), got[1].Err)
				}
				continue
			}
			if len(got) != 3 || !errors.Is(got[1].Err, ErrLineTooLong) || string(got[2].Value("text").Bytes) != "after" || !strings.HasSuffix(got[2].Key, ":3") {
				t.Fatalf("%d-byte line, batches %v: %d samples: %+v", size, batches, len(got), got)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > maxLine+chunk+slack {
				t.Errorf("%d-byte line over a %d-byte limit, batches %v: allocated %d bytes, want at most %d",
					size, maxLine, batches, alloc, maxLine+chunk+slack)
			}
		}
	}
}
