package tarsrc

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.uber.org/goleak"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type member struct {
	name string
	typ  byte
	data []byte
}

func tarBytes(t testing.TB, members []member) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range members {
		typ := m.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: m.name, Typeflag: typ, Mode: 0o644, Size: int64(len(m.data)), Format: tar.FormatGNU}
		if typ != tar.TypeReg {
			h.Size = 0
		}
		if typ == tar.TypeSymlink {
			h.Linkname = "target"
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("%q: %v", m.name, err)
		}
		if typ == tar.TypeReg {
			if _, err := tw.Write(m.data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gz(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zst(t testing.TB, b []byte) []byte {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

func jpegBytes(t testing.TB, seed int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 16, 12))
	for i := range img.Pix {
		img.Pix[i] = byte(i*seed + seed)
	}
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type wantSample struct {
	key    string
	values map[string]sample.Value
}

// wdsShard builds a WebDataset shard: images + labels + JSON, plus members the walk must
// skip or handle (a directory, a symlink, a long name, a non-UTF-8 name, a multi-dot
// extension, an extensionless file).
func wdsShard(t testing.TB, prefix string, n int) ([]member, []wantSample) {
	var ms []member
	var want []wantSample
	add := func(key string, exts ...string) {
		w := wantSample{key: key, values: map[string]sample.Value{}}
		for _, e := range exts {
			var data []byte
			switch strings.ToLower(e) {
			case "jpg":
				data = jpegBytes(t, len(key)+len(want))
			case "cls":
				data = []byte(fmt.Sprint(len(want) % 10))
			case "json":
				data = []byte(fmt.Sprintf(`{"i":%d,"key":%q}`, len(want), key))
			default:
				data = []byte("payload of " + key + "." + e)
			}
			name := key + "." + e
			ms = append(ms, member{name: name, data: data})
			w.values[strings.ToLower(e)] = sample.Value{Kind: sample.KindBytes, Bytes: data, Name: name}
		}
		want = append(want, w)
	}
	ms = append(ms, member{name: prefix + "/", typ: tar.TypeDir})
	for i := 0; i < n; i++ {
		add(fmt.Sprintf("%s/%06d", prefix, i), "jpg", "cls", "json")
		if i == 1 {
			ms = append(ms, member{name: prefix + "/link.jpg", typ: tar.TypeSymlink})
			ms = append(ms, member{name: prefix + "/README", data: []byte("no extension")})
		}
	}
	add(prefix+"/"+strings.Repeat("long", 40), "JPG", "cls") // > 100 bytes: GNU long name
	add(prefix+"/caf\xe9-latin1", "txt")                     // not UTF-8: kept as bytes
	add(prefix+"/img", "seg.png", "jpg")                     // multi-dot extension
	add(prefix+"/Ünïcode", "Json")                           // UTF-8 key, extension lower-cased
	return ms, want
}

func collect(t testing.TB, src *Source) []sample.Sample {
	t.Helper()
	var got []sample.Sample
	if err := src.Run(context.Background(), func(s sample.Sample) error {
		got = append(got, s)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func checkSamples(t *testing.T, shard string, got []sample.Sample, want []wantSample) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d samples, want %d", len(got), len(want))
	}
	for i, g := range got {
		w := want[i]
		if g.Err != nil {
			t.Fatalf("sample %d: %v", i, g.Err)
		}
		if g.Key != w.key || g.Origin != shard+":"+w.key {
			t.Fatalf("sample %d: key %q origin %q, want %q", i, g.Key, g.Origin, w.key)
		}
		if got := asMap(g.Values); !reflect.DeepEqual(got, w.values) {
			t.Fatalf("sample %d (%q): values differ:\n got %v\nwant %v", i, g.Key, keys(got), keys(w.values))
		}
		var n int64
		for _, v := range w.values {
			n += int64(len(v.Bytes))
		}
		if g.InputBytes != n {
			t.Fatalf("sample %d: InputBytes %d, want %d", i, g.InputBytes, n)
		}
	}
}

func asMap(cols []sample.Column) map[string]sample.Value {
	m := make(map[string]sample.Value, len(cols))
	for _, c := range cols {
		m[c.Name] = c.Value
	}
	return m
}

func keys(m map[string]sample.Value) []string {
	var k []string
	for e, v := range m {
		k = append(k, e+"="+v.Name)
	}
	return k
}

func TestWebDatasetShard(t *testing.T) {
	dir := t.TempDir()
	ms, want := wdsShard(t, "train", 20)
	plain := tarBytes(t, ms)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"shard.tar", plain},
		{"shard.tar.gz", gz(t, plain)},
		{"shard.tgz", gz(t, plain)},
		{"shard.tar.zst", zst(t, plain)},
		{"misnamed.tar", gz(t, plain)}, // compression is sniffed, not trusted from the name
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			src, err := New([]string{path}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if in := src.Inputs().(sources.Inputs); src.Len() != -1 || len(in) != 1 || in[0].Size != int64(len(tc.data)) {
				t.Fatalf("Len %d Inputs %v", src.Len(), src.Inputs())
			}
			got := collect(t, src)
			checkSamples(t, path, got, want)
			for i, g := range got {
				if g.Index != int64(i) {
					t.Fatalf("sample %d has Index %d", i, g.Index)
				}
			}
		})
	}
}

// TestParallelOrder checks that any parallelism and read-ahead yields the same sequence.
func TestParallelOrder(t *testing.T) {
	dir := t.TempDir()
	var all []wantSample
	var paths []string
	for s := 0; s < 9; s++ {
		ms, want := wdsShard(t, fmt.Sprintf("s%d", s), 3+s*5%7)
		data := tarBytes(t, ms)
		name := fmt.Sprintf("data-%03d.tar", s)
		switch s % 3 {
		case 1:
			data, name = gz(t, data), name+".gz"
		case 2:
			data, name = zst(t, data), name+".zst"
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		all = append(all, want...)
	}
	pattern := filepath.Join(dir, "data-{000..008}.tar*")
	var ref []sample.Sample
	for _, o := range []Options{{Parallel: 1, ReadAhead: 1}, {Parallel: 2, ReadAhead: 1}, {Parallel: 4}, {Parallel: 16, ReadAhead: 3}} {
		src, err := New([]string{pattern}, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := src.Inputs().(sources.Inputs); len(got) != 9 || got[4].Path != paths[4] {
			t.Fatalf("inputs %v", got)
		}
		got := collect(t, src)
		if len(got) != len(all) {
			t.Fatalf("%+v: %d samples, want %d", o, len(got), len(all))
		}
		for i := range got {
			if got[i].Key != all[i].key || got[i].Index != int64(i) {
				t.Fatalf("%+v: sample %d is %q (index %d), want %q", o, i, got[i].Key, got[i].Index, all[i].key)
			}
		}
		if ref == nil {
			ref = got
		} else if !reflect.DeepEqual(got, ref) {
			t.Fatalf("%+v: output differs from Parallel 1", o)
		}
	}
}

func TestDuplicates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dup.tar")
	b := tarBytes(t, []member{
		{name: "a.jpg", data: []byte("1")},
		{name: "a.cls", data: []byte("1")},
		{name: "b.jpg", data: []byte("2")},
		{name: "b.JPG", data: []byte("2")}, // same extension twice
		{name: "b.cls", data: []byte("2")},
		{name: "a.json", data: []byte("{}")}, // key a again, not adjacent
		{name: "c.jpg", data: []byte("3")},
	})
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := New([]string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, src)
	if len(got) != 4 {
		t.Fatalf("%d samples", len(got))
	}
	if got[0].Err != nil || len(got[0].Values) != 2 {
		t.Fatalf("a: %+v", got[0])
	}
	if !errors.Is(got[1].Err, ErrDuplicateField) || got[1].Key != "b" {
		t.Fatalf("b: %v", got[1].Err)
	}
	if !errors.Is(got[2].Err, ErrDuplicateKey) || got[2].Key != "a" {
		t.Fatalf("a again: %v", got[2].Err)
	}
	if got[3].Err != nil || got[3].Key != "c" {
		t.Fatalf("c: %+v", got[3])
	}
	t.Logf("%v\n%v", got[1].Err, got[2].Err)
}

func TestBrokenShard(t *testing.T) {
	dir := t.TempDir()
	ms, want := wdsShard(t, "x", 5)
	b := tarBytes(t, ms)
	// Corrupt the header of the 8th regular member's block: find its name in the archive.
	name := want[2].key + ".jpg"
	off := bytes.Index(b, []byte(name))
	if off < 0 || off%512 != 0 {
		t.Fatalf("member %q at %d", name, off)
	}
	copy(b[off+148:], "garbage!") // checksum field
	bad := filepath.Join(dir, "a.tar")
	good := filepath.Join(dir, "b.tar")
	trunc := filepath.Join(dir, "c.tar.gz")
	os.WriteFile(bad, b, 0o644)
	os.WriteFile(good, tarBytes(t, ms), 0o644)
	z := gz(t, tarBytes(t, ms))
	os.WriteFile(trunc, z[:len(z)/2], 0o644)
	src, err := New([]string{bad, good}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, src)
	// bad: samples 0 and 1, then one error sample; good: all.
	checkSamples(t, bad, got[:2], want[:2])
	if !errors.Is(got[2].Err, ErrShard) || !strings.Contains(got[2].Err.Error(), fmt.Sprintf("tar offset %d", off)) {
		t.Fatalf("broken header: %v (header at %d)", got[2].Err, off)
	}
	t.Log(got[2].Err)
	checkSamples(t, good, got[3:3+len(want)], want)
	if len(got) != 3+len(want) {
		t.Fatalf("%d samples after the good shard", len(got)-3-len(want))
	}
	// The truncated gzip shard stops the run (see TestCorruptCompressed).
	src, err = New([]string{trunc}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = src.Run(context.Background(), func(sample.Sample) error { return nil })
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), trunc) {
		t.Fatalf("truncated gzip: %v", err)
	}
	t.Log(err)
}

func TestRunStops(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for s := 0; s < 6; s++ {
		ms, _ := wdsShard(t, fmt.Sprint(s), 30)
		p := filepath.Join(dir, fmt.Sprintf("%d.tar", s))
		os.WriteFile(p, tarBytes(t, ms), 0o644)
		paths = append(paths, p)
	}
	src, err := New(paths, Options{Parallel: 3, ReadAhead: 2})
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	n := 0
	err = src.Run(context.Background(), func(sample.Sample) error {
		if n++; n == 40 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Run = %v, want the emit error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n = 0
	err = src.Run(ctx, func(sample.Sample) error {
		if n++; n == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	// A shard that disappears before the run stops it with an error naming the file.
	os.Remove(paths[3])
	err = src.Run(context.Background(), func(sample.Sample) error { return nil })
	if err == nil || !strings.Contains(err.Error(), paths[3]) {
		t.Fatalf("Run with a missing shard = %v", err)
	}
}

func TestMemberTooLarge(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.tar")
	os.WriteFile(p, tarBytes(t, []member{{name: "a.bin", data: make([]byte, 1000)}, {name: "b.bin", data: []byte("x")}}), 0o644)
	src, err := New([]string{p}, Options{MaxMemberSize: 999})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, src)
	if len(got) != 2 || !errors.Is(got[0].Err, ErrMemberTooLarge) || got[1].Err != nil {
		t.Fatalf("%+v", got)
	}
}

func TestSplitKey(t *testing.T) {
	tests := []struct{ name, key, ext string }{
		{"a/b/c.jpg", "a/b/c", "jpg"}, {"x.seg.PNG", "x", "seg.png"}, {"d.ir/x.jpg", "d.ir/x", "jpg"},
		{"./000.cls", "./000", "cls"}, {"k\xff.TXT", "k\xff", "txt"}, {"k.\xffA", "k", "\xffa"},
		{"README", "", ""}, {"a/.hidden", "", ""}, {"a.b/", "", ""},
	}
	for _, tc := range tests {
		k, e, ok := SplitKey(tc.name)
		if k != tc.key || e != tc.ext || ok != (tc.key != "") {
			t.Errorf("SplitKey(%q) = %q, %q, %v", tc.name, k, e, ok)
		}
	}
}

func TestDefaultFieldKind(t *testing.T) {
	for ext, want := range map[string]string{"jpg": "image", "JPEG": "image", "png": "image", "webp": "image",
		"seg.png": "image", "cls": "int", "label": "int", "txt": "text", "json": "json", "wav": "audio",
		"flac": "audio", "npy": "ndarray", "bin": "bytes", "": "bytes"} {
		if got := DefaultFieldKind(ext); got != want {
			t.Errorf("DefaultFieldKind(%q) = %q, want %q", ext, got, want)
		}
	}
}

// FuzzWalk walks arbitrary bytes (plain, gzip or zstd) as a shard: no panic, every sample
// either has an error or values, and member sizes are bounded by what is present.
func FuzzWalk(f *testing.F) {
	ms, _ := wdsShard(f, "f", 2)
	plain := tarBytes(f, ms)
	f.Add(plain)
	f.Add(gz(f, plain[:1024]))
	f.Add(zst(f, plain))
	f.Add(tarBytes(f, []member{{name: "a.x", data: []byte("1")}, {name: "a.x", data: []byte("2")}}))
	for _, p := range []string{"gnu-long-nul", "pax-global-records", "sparse-formats", "writer-big", "issue10968"} {
		if b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tar", "taridx", "tars", "gostd", p+".tar")); err == nil {
			f.Add(b)
		}
	}
	f.Add(gz(f, tarBytes(f, []member{{name: "a.jpg", data: []byte("1")}, {name: "a.bin", data: make([]byte, 3000)}})))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, want := range []map[string]bool{nil, {"jpg": true, "cls": true}} {
			err := walk(context.Background(), "fuzz.tar", bytes.NewReader(b), 1<<20, want, &sources.Skipped{}, func(s sample.Sample) error {
				if s.Err == nil && len(s.Values) == 0 {
					t.Fatalf("sample %q without values or error", s.Key)
				}
				for _, v := range s.Values {
					if len(v.Value.Bytes) > 1<<20 {
						t.Fatalf("member of %d bytes", len(v.Value.Bytes))
					}
					if want != nil && !want[v.Name] && (v.Value.Kind != sample.KindNone || v.Value.Bytes != nil) {
						t.Fatalf("unwanted member %q was read", v.Name)
					}
				}
				return nil
			})
			compressed := len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b || len(b) >= 4 && string(b[:4]) == "\x28\xb5\x2f\xfd"
			if err != nil && !(compressed && errors.Is(err, ErrCorrupt)) {
				t.Fatalf("walk returned %v (tar errors must be per-sample; only a compressed stream may stop the run)", err)
			}
		}
	})
}

func TestRange(t *testing.T) {
	dir := t.TempDir()
	var keys [][]string
	for s := 0; s < 4; s++ {
		ms, want := wdsShard(t, fmt.Sprint(s), 2)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.tar", s)), tarBytes(t, ms), 0o644)
		var k []string
		for _, w := range want {
			k = append(k, w.key)
		}
		keys = append(keys, k)
	}
	src, err := New([]string{filepath.Join(dir, "{0..3}.tar")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	part, err := src.Range(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, part.(*Source))
	want := append(append([]string(nil), keys[1]...), keys[2]...)
	if len(got) != len(want) || got[0].Index != 0 {
		t.Fatalf("%d samples, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Key != want[i] {
			t.Fatalf("sample %d: %q, want %q", i, got[i].Key, want[i])
		}
	}
	if _, err := src.Range(2, 5); !errors.Is(err, ErrRange) {
		t.Fatalf("Range(2, 5) = %v", err)
	}
}

// TestKeySet: keys in increasing order are checked exactly at any distance without being
// remembered beyond the window; out of order, a key that comes back within the window is
// caught.
func TestKeySet(t *testing.T) {
	k := keySet{window: 4}
	for i := range 100 {
		if k.repeated(fmt.Sprintf("k%04d", i)) {
			t.Fatalf("increasing key %d reported as repeated", i)
		}
	}
	if len(k.cur)+len(k.old) > 8 {
		t.Fatalf("remembers %d hashes, want at most 2 windows", len(k.cur)+len(k.old))
	}
	if !k.repeated("k0098") {
		t.Fatal("a recent key that comes back out of order was not caught")
	}
	if !k.repeated("k0099") {
		t.Fatal("the last key coming back was not caught")
	}
	if k.repeated("k0100") {
		t.Fatal("a new key was reported as repeated")
	}
	// Beyond the window, out of order: not caught (the documented bound); no false alarm.
	if k.repeated("k0050") {
		t.Fatal("a key from beyond the window was reported")
	}
	// Out of order from the start, within the window: exact.
	k = keySet{window: 64}
	for _, key := range []string{"b", "a", "c"} {
		if k.repeated(key) {
			t.Fatalf("%s reported as repeated", key)
		}
	}
	if !k.repeated("a") || !k.repeated("b") {
		t.Fatal("repeated keys out of order not caught")
	}
}
