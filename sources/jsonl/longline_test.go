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

// FuzzLongLines checks the reader's cutting of lines across reads of chunk bytes, and across
// mapping windows of chunk bytes, with a limit of maxLine (lines held in pieces, joined, or
// dropped and streamed past; windows grown): the samples (keys, values, errors) are those of
// a reader whose chunk holds the whole file.
func FuzzLongLines(f *testing.F) {
	f.Add([]byte("{\"text\": \"a\"}\n{\"text\": \""+strings.Repeat("x", 100)+"\"}\n\n{\"text\": \"b\"}"), uint8(16), uint8(40))
	f.Add([]byte("\xef\xbb\xbf{\"text\": \""+strings.Repeat("y", 37)+"\"}\r\n{\"text\": \"c\"}\n"), uint8(7), uint8(50))
	f.Add([]byte(strings.Repeat("z", 200)), uint8(9), uint8(30))
	f.Add([]byte("{\"text\": \""+strings.Repeat("w", 41)+"\"}\n{\"text\": \"d\"}\n"+strings.Repeat("\n", 20)), uint8(5), uint8(52))
	cols := []Column{{Key: "text", Kind: sample.KindString, Required: true}}
	f.Fuzz(func(t *testing.T, data []byte, chunk, maxLine uint8) {
		if chunk < 2 || maxLine < 2 || len(data) > 4096 {
			return
		}
		path := write(t, "f.jsonl", data)
		ref := collect(t, mustNew(t, []string{path}, cols, Options{Workers: 1, ChunkSize: len(data) + 1, MaxLineSize: int(maxLine), noMap: true}))
		for k := range 4 {
			// Read with chunks of chunk bytes, Run and RunBatches; then mapped in windows of
			// chunk bytes.
			batches := k%2 == 1
			o := Options{Workers: 2, ChunkSize: int(chunk), MaxLineSize: int(maxLine), ChunkLines: 3, noMap: k < 2, mapWindow: int(chunk)}
			src := mustNew(t, []string{path}, cols, o)
			var got []sample.Sample
			if batches {
				got = collectBatches(t, src)
			} else {
				got = collect(t, src)
			}
			if len(got) != len(ref) {
				t.Fatalf("chunk %d, limit %d, mapped %v: %d samples, want %d", chunk, maxLine, !o.noMap, len(got), len(ref))
			}
			for i := range got {
				g, r := got[i], ref[i]
				if g.Key != r.Key || (g.Err == nil) != (r.Err == nil) || errors.Is(g.Err, ErrLineTooLong) != errors.Is(r.Err, ErrLineTooLong) ||
					!bytes.Equal(g.Value("text").Bytes, r.Value("text").Bytes) {
					t.Fatalf("chunk %d, limit %d, mapped %v, sample %d: %s %v %q, want %s %v %q", chunk, maxLine, !o.noMap, i,
						g.Key, g.Err, g.Value("text").Bytes, r.Key, r.Err, r.Value("text").Bytes)
				}
			}
		}
	})
}
