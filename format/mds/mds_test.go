package mds

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func int64Bytes(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }

// readAll reads every sample of the dataset in dir.
func readAll(t *testing.T, dir string) (*Index, [][][]byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, IndexName))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := ParseIndex(b, IndexName)
	if err != nil {
		t.Fatal(err)
	}
	var out [][][]byte
	for _, sh := range ix.Shards {
		data, err := os.ReadFile(filepath.Join(dir, sh.Basename))
		if err != nil {
			t.Fatal(err)
		}
		r, err := OpenShard(bytes.NewReader(data), int64(len(data)), sh, ix.Columns, sh.Basename)
		if err != nil {
			t.Fatal(err)
		}
		for i := range r.Len() {
			vals, _, err := r.Sample(i, nil)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, vals)
		}
	}
	return ix, out
}

// TestRoundTrip: samples written in shards of a size limit read back equal, columns in name
// order, the index listing every shard.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	cols := []Column{{Name: "text", Encoding: "str"}, {Name: "label", Encoding: "int"}, {Name: "arr", Encoding: "ndarray:uint8:2,2"}, {Name: "blob", Encoding: "bytes"}}
	w, err := Create(dir, cols, WriterOptions{SizeLimit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	for i := range n {
		if err := w.Write([][]byte{[]byte(fmt.Sprintf("sample %d", i)), int64Bytes(int64(i)), {1, 2, 3, byte(i)}, bytes.Repeat([]byte{'x'}, i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ix, got := readAll(t, dir)
	if len(ix.Shards) < 2 || ix.Samples != n || len(got) != n {
		t.Fatalf("%d shards, %d samples, %d read", len(ix.Shards), ix.Samples, len(got))
	}
	for _, sh := range ix.Shards {
		if st, _ := os.Stat(filepath.Join(dir, sh.Basename)); st.Size() > 1000 && sh.Samples > 1 {
			t.Errorf("%s: %d bytes over the limit", sh.Basename, st.Size())
		}
	}
	if names := fmt.Sprint(ix.Columns); names != "[{arr ndarray:uint8:2,2 4} {blob bytes 0} {label int 8} {text str 0}]" {
		t.Fatalf("columns %s", names)
	}
	for i, vals := range got {
		if string(vals[3]) != fmt.Sprintf("sample %d", i) || int64(binary.LittleEndian.Uint64(vals[2])) != int64(i) || len(vals[1]) != i || vals[0][3] != byte(i) {
			t.Fatalf("sample %d: %q", i, vals)
		}
	}
}

// TestRefused: unsafe and unknown encodings, values of the wrong size, and an existing
// dataset are refused when writing.
func TestRefused(t *testing.T) {
	for _, enc := range []string{"pkl", "nope", "ndarray:complex64", "ndarray:uint8:0"} {
		if _, err := Create(t.TempDir(), []Column{{Name: "x", Encoding: enc}}, WriterOptions{}); err == nil {
			t.Errorf("encoding %q accepted", enc)
		} else if enc == "pkl" && !errors.Is(err, ErrUnsafe) {
			t.Errorf("pkl: %v, want ErrUnsafe", err)
		}
	}
	w, err := Create(t.TempDir(), []Column{{Name: "x", Encoding: "int"}}, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([][]byte{{1, 2}}); !errors.Is(err, ErrEncoding) {
		t.Errorf("a 2-byte int: %v", err)
	}
	w.Abort()
}

// TestAbort: an aborted dataset leaves no shard and no index.
func TestAbort(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, []Column{{Name: "x", Encoding: "bytes"}}, WriterOptions{SizeLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if err := w.Write([][]byte{bytes.Repeat([]byte{1}, 40)}); err != nil {
			t.Fatal(err)
		}
	}
	w.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %d files", len(ents))
	}
}

// goodShard returns a dataset of two samples of columns {b bytes, i int} as its index and
// its one shard's bytes.
func goodShard(t testing.TB) ([]byte, []byte) {
	dir := t.TempDir()
	w, err := Create(dir, []Column{{Name: "b", Encoding: "bytes"}, {Name: "i", Encoding: "int"}}, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := w.Write([][]byte{[]byte("hello"), int64Bytes(int64(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ix, _ := os.ReadFile(filepath.Join(dir, IndexName))
	sh, _ := os.ReadFile(filepath.Join(dir, ShardName(0)))
	return ix, sh
}

// TestHostileShards: offsets and sizes that lie are errors naming the shard, never a panic or
// a read past the file.
func TestHostileShards(t *testing.T) {
	index, shard := goodShard(t)
	ix, err := ParseIndex(index, IndexName)
	if err != nil {
		t.Fatal(err)
	}
	head := 4 + 4*3
	put := func(b []byte, at int, v uint32) []byte {
		c := bytes.Clone(b)
		binary.LittleEndian.PutUint32(c[at:], v)
		return c
	}
	for _, tc := range []struct {
		name  string
		shard []byte
		want  string
	}{
		{"count unlike the index", put(shard, 0, 3), "the index says"},
		{"huge count", put(shard, 0, 1<<30), "the index says"},
		{"first offset inside the header", put(shard, 4, 8), "inside the header"},
		{"offsets going back", put(shard, 8, uint32(head)), "before it starts"},
		{"offset past the end", put(shard, 12, uint32(len(shard)+100)), "past the end"},
		{"size past the sample", put(shard, int(binary.LittleEndian.Uint32(shard[4:])), 1000), "past the end of the sample"},
		{"truncated", shard[:len(shard)-3], "the index says"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh := ix.Shards[0]
			r, err := OpenShard(bytes.NewReader(tc.shard), int64(len(tc.shard)), sh, ix.Columns, "s.mds")
			for i := 0; err == nil && i < r.Len(); i++ {
				_, _, err = r.Sample(i, nil)
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "s.mds") {
				t.Fatalf("error %v, want ErrCorrupt naming the shard and %q", err, tc.want)
			}
		})
	}
}

// TestHostileIndex: indexes that name files outside the directory, pickled or compressed
// columns, or sizes unlike their encoding are refused.
func TestHostileIndex(t *testing.T) {
	index, _ := goodShard(t)
	for _, tc := range []struct {
		name, from, to string
		want           error
	}{
		{"path out of the directory", `"basename":"shard.00000.mds"`, `"basename":"../etc/passwd"`, ErrCorrupt},
		{"pickle", `"column_encodings":["bytes","int"]`, `"column_encodings":["pkl","int"]`, ErrUnsafe},
		{"unknown encoding", `"column_encodings":["bytes","int"]`, `"column_encodings":["bytes","what"]`, ErrEncoding},
		{"size unlike the encoding", `"column_sizes":[null,8]`, `"column_sizes":[null,4]`, ErrCorrupt},
		{"compressed", `"compression":null`, `"compression":"zstd"`, ErrUnsupported},
		{"other format", `"format":"mds"`, `"format":"xsv"`, ErrUnsupported},
		{"version 1", `"version":2}`, `"version":1}`, ErrUnsupported},
		{"not JSON", `{`, `[`, ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := strings.Replace(string(index), tc.from, tc.to, 1)
			if b == string(index) {
				t.Fatalf("%s not in the index %s", tc.from, index)
			}
			if _, err := ParseIndex([]byte(b), IndexName); !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
		})
	}
}

// TestNDArray: values of an ndarray column without a fixed dtype and shape carry them, and
// decode back; lying shapes are errors.
func TestNDArray(t *testing.T) {
	spec, _, err := ParseNDArray("ndarray")
	if err != nil {
		t.Fatal(err)
	}
	a := NDArray{Dtype: "float32", Shape: []int{2, 300}, Data: make([]byte, 4*600)}
	b, err := EncodeNDArray(spec, a)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeNDArray(spec, b)
	if err != nil || got.Dtype != "float32" || fmt.Sprint(got.Shape) != "[2 300]" || len(got.Data) != len(a.Data) {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := DecodeNDArray(spec, b[:len(b)-1]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a short array: %v", err)
	}
	if _, err := DecodeNDArray(spec, []byte{34, 0xff}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("63 dimensions in no bytes: %v", err)
	}
}

// FuzzShard: a shard's bytes, whatever they are, give samples within the file or an error,
// never a panic.
func FuzzShard(f *testing.F) {
	index, shard := goodShard(f)
	ix, err := ParseIndex(index, IndexName)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(shard, int64(2))
	f.Add(shard[:20], int64(2))
	f.Fuzz(func(t *testing.T, b []byte, samples int64) {
		sh := Shard{Basename: "s.mds", Samples: samples, Bytes: -1}
		r, err := OpenShard(bytes.NewReader(b), int64(len(b)), sh, ix.Columns, "s.mds")
		if err != nil {
			return
		}
		for i := range r.Len() {
			vals, buf, err := r.Sample(i, nil)
			if err != nil {
				continue
			}
			n := 0
			for _, v := range vals {
				n += len(v)
			}
			if n > len(buf) {
				t.Fatalf("sample %d: %d bytes of values in %d", i, n, len(buf))
			}
		}
	})
}

// FuzzIndex: any index.json parses or is an error, and what parses names plain files.
func FuzzIndex(f *testing.F) {
	index, _ := goodShard(f)
	f.Add(index)
	f.Add([]byte(`{"version":2,"shards":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := ParseIndex(b, IndexName)
		if err != nil {
			return
		}
		for _, s := range ix.Shards {
			if strings.ContainsAny(s.Basename, `/\`) || s.Basename == ".." {
				t.Fatalf("shard file %q", s.Basename)
			}
		}
	})
}
