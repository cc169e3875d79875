package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// sameSamples fails unless got and want are the same samples: keys, origins, values, input
// bytes and errors (of an overlong line, only that it is one: its message says its length
// when the line arrived whole, which depends on where the reads or windows fall).
func sameSamples(t *testing.T, what string, got, want []sample.Sample) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d samples, want %d", what, len(got), len(want))
	}
	for i := range got {
		a, b := got[i], want[i]
		if errors.Is(b.Err, ErrLineTooLong) {
			if a.Key != b.Key || a.Origin != b.Origin || !errors.Is(a.Err, ErrLineTooLong) {
				t.Fatalf("%s: sample %d: %q %v, want %q %v", what, i, a.Key, a.Err, b.Key, b.Err)
			}
			continue
		}
		if a.Key != b.Key || a.Origin != b.Origin || a.Index != b.Index || fmt.Sprint(a.Err) != fmt.Sprint(b.Err) ||
			!reflect.DeepEqual(a.Values, b.Values) || a.InputBytes != b.InputBytes {
			t.Fatalf("%s: sample %d differs:\n%+v\nwant\n%+v", what, i, a, b)
		}
	}
}

// TestMappedMatchesRead checks that local files read through mapping windows give the
// samples the read path gives, with windows smaller than a line, than a page, and the
// default, over Run and RunBatches: lines across windows, lines longer than a window (and
// than the limit, by far or by one byte), a byte order mark, blank and CRLF lines, a last
// line without a newline, a file of one byte and one holding only a mark.
func TestMappedMatchesRead(t *testing.T) {
	const maxLine = 3000
	long := func(n int) string { return `{"text": "` + strings.Repeat("l", n-12) + "\"}\n" }
	inputs := map[string]string{
		"corpus":   string(genCorpus(300, 11)),
		"bom":      "\xef\xbb\xbf{\"text\": \"a\"}\r\n\r\n  \n{\"text\": \"b\"}",
		"bomonly":  "\xef\xbb\xbf",
		"one":      "x",
		"blank":    "\n\n \r\n\t\n",
		"crlf":     "{\"text\": \"a\"}\r\n{\"text\": \"b\"}\r\n",
		"nolastnl": "{\"text\": \"a\"}\n{\"text\": \"" + strings.Repeat("é", 900) + "\"}",
		"long": "{\"text\": \"first\"}\n" + long(maxLine) + long(maxLine+1) + long(5*maxLine) + "{\"text\": \"mid\"}\n" +
			long(2*maxLine) + long(maxLine-1) + "{\"text\": \"after\"}\n" + long(7000)[:6000],
		"longlast": "{\"text\": \"a\"}\n" + long(4*maxLine),
		"fixture":  "",
	}
	fixture, err := os.ReadFile(filepath.Join(fixtures, "broken.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	inputs["fixture"] = string(fixture)
	dir := t.TempDir()
	var all []string
	for name, data := range inputs {
		p := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		all = append(all, p)
	}
	cols := []Column{
		{Key: "text", Kind: sample.KindString, Required: true},
		{Key: "id", Kind: sample.KindInt},
		{Key: "meta.tags", Name: "tags", Kind: sample.KindJSON},
	}
	for _, path := range append(all, strings.Join(all, "\x00")) {
		paths := strings.Split(path, "\x00")
		base := Options{Workers: 2, MaxLineSize: maxLine, ChunkLines: 5}
		ro := base
		ro.noMap = true
		want := collect(t, mustNew(t, paths, cols, ro))
		for _, w := range []int{1, 7, 100, 2500, 4096, 20000, 0} {
			o := base
			o.mapWindow = w
			var maps atomic.Int64
			o.hook = func(ev string) {
				if ev == "mapped" {
					maps.Add(1)
				}
			}
			what := fmt.Sprintf("%s, window %d", filepath.Base(paths[0]), w)
			sameSamples(t, what+", Run", collect(t, mustNew(t, paths, cols, o)), want)
			sameSamples(t, what+", RunBatches", collectBatches(t, mustNew(t, paths, cols, o)), want)
			if maps.Load() == 0 && canMap && !strings.HasSuffix(paths[0], "bomonly.jsonl") {
				t.Fatalf("%s: nothing was mapped", what)
			}
		}
	}
}

// TestMappedFileShrinks checks that a file truncated while it is read through a mapping is
// an error naming it (ErrChanged), never a crash: when the reader meets the missing pages,
// when a RunBatches consumer decodes a piece of them (that piece's sample then names the
// line; also the file's last piece, after which the reader sends nothing), and when Run's
// parsers do.
func TestMappedFileShrinks(t *testing.T) {
	if !canMap {
		t.Skip("no mapping on this system")
	}
	data := genCorpus(3000, 5)
	cols := []Column{{Key: "text", Kind: sample.KindString}}
	for _, tc := range []struct {
		name    string
		event   string // the hook event that truncates the file
		at      int    // at the at-th such event
		batches bool
	}{
		{"reader, Run", "mapped", 2, false},
		{"reader, RunBatches", "mapped", 2, true},
		{"parser, Run", "cut", 1, false},
		{"parser, RunBatches", "decode", 1, true},
		{"parser of the last piece, RunBatches", "decode", 1, true},
		{"parser after the reader's end, RunBatches", "end", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := data
			if strings.Contains(tc.name, "last") {
				data = []byte("{\"text\": \"only\"}\n{\"text\": \"piece\"}\n")
			}
			path := write(t, "shrinks.jsonl", data)
			truncate := func() {
				if err := os.Truncate(path, 0); err != nil {
					t.Error(err)
				}
			}
			var n atomic.Int32
			var held []sources.Batch // "end": decoded only once the reader is done
			var faulted []sample.Sample
			decode := func(b sources.Batch) {
				var m sources.Memory
				b.Decode(&m)
				for _, s := range m.Samples {
					if errors.Is(s.Err, ErrChanged) {
						faulted = append(faulted, s)
					}
				}
			}
			o := Options{Workers: 2, mapWindow: 64 << 10}
			o.hook = func(ev string) {
				if ev == tc.event && int(n.Add(1)) == tc.at {
					truncate()
					for _, b := range held {
						decode(b)
					}
				}
			}
			src := mustNew(t, []string{path}, cols, o)
			var err error
			if tc.batches {
				err = src.RunBatches(context.Background(), func(b sources.Batch) error {
					if tc.event == "end" {
						held = append(held, b)
						return nil
					}
					if tc.event == "decode" && n.Add(1) == 1 {
						truncate()
					}
					decode(b)
					return nil
				})
			} else {
				err = src.Run(context.Background(), func(sample.Sample) error { return nil })
			}
			if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "jsonl: "+path+": read error") {
				t.Fatalf("err = %v, want ErrChanged naming %s", err, path)
			}
			if tc.event == "end" && len(faulted) == 0 {
				t.Fatalf("no piece decoded after the truncation faulted")
			}
			if tc.event == "decode" && (len(faulted) != 1 || faulted[0].Key != path+":1" || !strings.Contains(err.Error(), "in line 1:")) {
				t.Fatalf("decoded after the truncation: %+v (%v)", faulted, err)
			}
		})
	}
}

// TestMappedOnlyPlainLocalFiles checks which inputs are mapped: a local plain file, not a
// compressed one (by its first bytes, whatever its name), an empty one, or with noMap.
func TestMappedOnlyPlainLocalFiles(t *testing.T) {
	if !canMap {
		t.Skip("no mapping on this system")
	}
	fixture := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(fixtures, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cols := []Column{{Key: "question", Kind: sample.KindString}}
	for _, tc := range []struct {
		name   string
		data   []byte
		noMap  bool
		mapped bool
	}{
		{"plain.jsonl", fixture("gsm8k_head8.jsonl"), false, true},
		{"plain-nomap.jsonl", fixture("gsm8k_head8.jsonl"), true, false},
		{"zstd.jsonl", fixture("gsm8k_9to12.jsonl.zst"), false, false},
		{"gzip.jsonl", fixture("humaneval_head3.jsonl.gz"), false, false},
		{"empty.jsonl", nil, false, false},
	} {
		path := write(t, tc.name, tc.data)
		var maps atomic.Int64
		o := Options{noMap: tc.noMap, hook: func(ev string) {
			if ev == "mapped" {
				maps.Add(1)
			}
		}}
		got := collect(t, mustNew(t, []string{path}, cols, o))
		if (maps.Load() > 0) != tc.mapped {
			t.Errorf("%s: mapped %v, want %v", tc.name, maps.Load() > 0, tc.mapped)
		}
		if len(tc.data) > 0 && len(got) == 0 {
			t.Errorf("%s: no samples", tc.name)
		}
	}
}

// TestMappedCancelled checks that a run cancelled while windows are in flight returns, and
// that a later run of the file is whole (the dropped windows are unmapped when collected).
func TestMappedCancelled(t *testing.T) {
	path := write(t, "corpus.jsonl", bytes.Repeat(genCorpus(500, 3), 4))
	cols := []Column{{Key: "text", Kind: sample.KindString}}
	src := mustNew(t, []string{path}, cols, Options{Workers: 2, mapWindow: 32 << 10, ChunkLines: 7})
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := src.Run(ctx, func(sample.Sample) error {
		if n++; n == 100 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	if got := collect(t, src); len(got) < 1900 {
		t.Fatalf("%d samples after a cancelled run", len(got))
	}
}

// TestMapFails checks that a file whose windows cannot be mapped (from the first one, or from
// a later one) is read on with read calls, with the same samples.
func TestMapFails(t *testing.T) {
	if !canMap {
		t.Skip("no mapping on this system")
	}
	data := append([]byte("\xef\xbb\xbf"), genCorpus(2000, 4)...)
	path := write(t, "corpus.jsonl", data)
	cols := []Column{{Key: "text", Kind: sample.KindString}}
	want := collect(t, mustNew(t, []string{path}, cols, Options{noMap: true}))
	for _, failAt := range []int64{0, 64 << 10, 200 << 10} {
		var maps atomic.Int64
		o := Options{Workers: 2, mapWindow: 60 << 10, mapErr: func(start int64) error {
			if start >= failAt {
				return errors.New("no room to map")
			}
			maps.Add(1)
			return nil
		}}
		what := fmt.Sprintf("windows from %d unmappable", failAt)
		sameSamples(t, what+", Run", collect(t, mustNew(t, []string{path}, cols, o)), want)
		sameSamples(t, what+", RunBatches", collectBatches(t, mustNew(t, []string{path}, cols, o)), want)
		if (maps.Load() > 0) != (failAt > 0) {
			t.Fatalf("%s: %d windows mapped", what, maps.Load())
		}
	}
}
