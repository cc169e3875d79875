package mds

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var resumeCols = []Column{{Name: "text", Encoding: "str"}, {Name: "label", Encoding: "int"}}

// resumeSample is sample i's values: texts of varying length, so shards differ in size.
func resumeSample(i int64) [][]byte {
	return [][]byte{[]byte(fmt.Sprintf("sample %d %s", i, bytes.Repeat([]byte{'a' + byte(i%26)}, int(i*7%90)))),
		binary.LittleEndian.AppendUint64(nil, uint64(i))}
}

// writeFrom writes samples from..n-1 and closes w.
func writeFrom(t *testing.T, w *Writer, from, n int64) {
	t.Helper()
	for i := from; i < n; i++ {
		if err := w.Write(resumeSample(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// dirFiles returns the files of dir by name.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = b
	}
	return m
}

// A writer stopped after k shards (as by a kill: no Close, a shard's temporary file left,
// maybe a shard after the last one recorded) and resumed from the k shards OnShard gave
// writes the bytes of an uninterrupted write, for every k.
func TestResume(t *testing.T) {
	const n = 300
	opt := WriterOptions{SizeLimit: 2000}
	ref := t.TempDir()
	w, err := Create(ref, resumeCols, opt)
	if err != nil {
		t.Fatal(err)
	}
	writeFrom(t, w, 0, n)
	want := dirFiles(t, ref)
	shards := len(want) - 1
	if shards < 4 {
		t.Fatalf("%d shards, want several", shards)
	}
	for k := 0; k <= shards; k++ {
		for _, extra := range []bool{false, true} {
			t.Run(fmt.Sprintf("after %d shards extra %v", k, extra), func(t *testing.T) {
				dir := t.TempDir()
				var done []ShardState
				o := opt
				o.OnShard = func(s ShardState) error { done = append(done, s); return nil }
				w, err := Create(dir, resumeCols, o)
				if err != nil {
					t.Fatal(err)
				}
				var i int64
				for ; len(done) < k+btoi(extra) && i < n; i++ {
					if err := w.Write(resumeSample(i)); err != nil {
						t.Fatal(err)
					}
				}
				if k == shards { // killed after the index was written
					writeFrom(t, w, i, n)
				}
				done = done[:min(k, len(done))] // the last shard was not recorded
				os.WriteFile(filepath.Join(dir, "."+ShardName(k)+".tmp-123"), []byte("half a shard"), 0o644)
				w2, err := Resume(dir, resumeCols, opt, done)
				if err != nil {
					t.Fatal(err)
				}
				var from int64
				for _, d := range done {
					from += d.Samples
				}
				writeFrom(t, w2, from, n)
				got := dirFiles(t, dir)
				if !maps2Equal(got, want) {
					t.Fatalf("the resumed dataset differs: %d files, want %d", len(got), len(want))
				}
			})
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func maps2Equal(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// A shard that is not as the checkpoint recorded it is ErrResume.
func TestResumeRefused(t *testing.T) {
	dir := t.TempDir()
	var done []ShardState
	w, err := Create(dir, resumeCols, WriterOptions{SizeLimit: 2000, OnShard: func(s ShardState) error { done = append(done, s); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	writeFrom(t, w, 0, 100)
	if len(done) < 2 {
		t.Fatalf("%d shards", len(done))
	}
	shard0 := filepath.Join(dir, ShardName(0))
	orig, _ := os.ReadFile(shard0)
	for _, tc := range []struct {
		name   string
		change func(d []ShardState) []ShardState
		file   func()
	}{
		{name: "shard edited", file: func() { b := slices.Clone(orig); b[len(b)-1] ^= 1; os.WriteFile(shard0, b, 0o644) }},
		{name: "shard cut", file: func() { os.WriteFile(shard0, orig[:len(orig)-1], 0o644) }},
		{name: "shard missing", file: func() { os.Remove(shard0) }},
		{name: "out of order", change: func(d []ShardState) []ShardState { return []ShardState{d[1], d[0]} }},
		{name: "no samples", change: func(d []ShardState) []ShardState { d[0].Samples = 0; return d }},
		{name: "hostile name", change: func(d []ShardState) []ShardState { d[0].Name = "../x"; return d }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(shard0, orig, 0o644)
			d := slices.Clone(done)
			if tc.change != nil {
				d = tc.change(d)
			}
			if tc.file != nil {
				tc.file()
			}
			if _, err := Resume(dir, resumeCols, WriterOptions{SizeLimit: 2000}, d); !errors.Is(err, ErrResume) {
				t.Fatalf("Resume: %v, want ErrResume", err)
			}
		})
	}
}
