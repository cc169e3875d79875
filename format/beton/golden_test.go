package beton

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/pagewriter"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/tiny.beton from the hand-built bytes")

// goldenPath holds tiny.beton gzipped: the file is 2 MiB, almost all of it the zero padding
// before the first page boundary.
const goldenPath = "testdata/golden/tiny.beton.gz"

// tinyFields are the MLDF descriptors of the golden file's fields, as our encoders make them.
func tinyFields(t testing.TB) []mldf.FieldDesc {
	t.Helper()
	img, err := imagefield.New("img", imagefield.Options{Mode: imagefield.ModeRaw})
	must(t, err)
	label, err := encoders.NewInt("label")
	must(t, err)
	score, err := encoders.NewFloat("score")
	must(t, err)
	blob, err := encoders.NewBytes("blob")
	must(t, err)
	meta, err := encoders.NewJSON("meta")
	must(t, err)
	arr, err := encoders.NewNDArray("arr", "<f4", []uint64{2, 2})
	must(t, err)
	var d []mldf.FieldDesc
	for _, f := range []encoders.Field{img, label, score, blob, meta, arr} {
		d = append(d, encoders.Descriptor(f))
	}
	return d
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// tinySample is one golden sample as the encoders would hand it over.
type tinySample struct {
	w, h  uint16
	pix   []byte
	label int64
	score float64
	blob  []byte
	json  []byte // nil: missing (stored as null)
	arr   [4]float32
}

var tinySamples = []tinySample{
	{w: 2, h: 1, pix: []byte{255, 0, 0, 0, 255, 0}, label: 7, score: 0.5, blob: []byte("hello"), json: []byte(`{"a":1}`), arr: [4]float32{1, 2, 3, 4}},
	{w: 1, h: 1, pix: []byte{1, 2, 3}, label: -3, score: -2.25, blob: nil, json: nil, arr: [4]float32{-1, 0.5, 0, 8}},
}

func f32s(a [4]float32) []byte {
	b := make([]byte, 16)
	for i, v := range a {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// mldfRow builds the MLDF metadata row and payloads of a golden sample.
func mldfRow(t testing.TB, s tinySample) ([]byte, [][]byte) {
	l, err := mldf.Layout([]mldf.TypeID{mldf.TypeImageRaw, mldf.TypeInt, mldf.TypeFloat,
		mldf.TypeBytes, mldf.TypeJSON, mldf.TypeNDArray})
	must(t, err)
	row := make([]byte, l.Size)
	mldf.ImageMeta{Height: s.h, Width: s.w, Channels: 3, Mode: mldf.ImageModeRaw}.Put(row[l.Offsets[0]:])
	mldf.PutInt(row[l.Offsets[1]:], s.label)
	mldf.PutFloat(row[l.Offsets[2]:], s.score)
	return row, [][]byte{s.pix, nil, nil, s.blob, s.json, f32s(s.arr)}
}

// handBuilt builds tiny.beton from the layout alone (docs/BETON.md), not from the writer.
func handBuilt() []byte {
	const page = 2 << 20
	le := binary.LittleEndian
	u64 := func(b []byte, off int, v uint64) { le.PutUint64(b[off:], v) }
	// Rows: img @0 (13 bytes, packed), label @16, score @24, blob @32 (16), meta @48 (16),
	// arr @64; 72 bytes. Metadata at 24 + 6·1041 = 6270, data at 2 MiB.
	const meta, rowSize, data = 6270, 72, page
	// Data region (offsets from its start, no alignment):
	//  s0: img 0..6, blob 6..11, meta `{"a":1}\0` 11..19, arr 19..35
	//  s1: img 35..38, blob zero-size at 38 (one reserved byte), meta `null\0` 39..44, arr 44..60
	const dataLen, entries = 60, 8
	size := data + dataLen + entries*24
	b := make([]byte, size)
	le.PutUint16(b[0:], 2)
	le.PutUint16(b[2:], 6)
	le.PutUint32(b[4:], page)
	u64(b, 8, 2)
	u64(b, 16, data+dataLen)
	names := []string{"img", "label", "score", "blob", "meta", "arr"}
	types := []byte{2, 1, 0, 3, 5, 4}
	for i := range names {
		d := b[24+1041*i:]
		d[0] = types[i]
		copy(d[1:17], names[i])
	}
	args := b[24+1041*5+17:]
	u64(args, 0, 2)
	u64(args, 8, 2)
	descr := `[["", "<f4"]]`
	u64(args, 256, uint64(len(descr)))
	copy(args[264:], descr)

	type alloc struct{ sid, ptr, size uint64 }
	var al []alloc
	put := func(sid, off uint64, p []byte, size uint64) uint64 {
		copy(b[data+off:], p)
		al = append(al, alloc{sid, data + off, size})
		return data + off
	}
	row := func(i int, s tinySample, img, blob, blobSize, js, jsSize, arr uint64) {
		r := b[meta+rowSize*i:]
		r[0] = 0 + 1 // mode 1: raw
		le.PutUint16(r[1:], s.w)
		le.PutUint16(r[3:], s.h)
		u64(r, 5, img)
		u64(r, 16, uint64(s.label))
		u64(r, 24, math.Float64bits(s.score))
		u64(r, 32, blob)
		u64(r, 40, blobSize)
		u64(r, 48, js)
		u64(r, 56, jsSize)
		u64(r, 64, arr)
	}
	s0, s1 := tinySamples[0], tinySamples[1]
	row(0, s0, put(0, 0, s0.pix, 6), put(0, 6, s0.blob, 5), 5, put(0, 11, []byte("{\"a\":1}\x00"), 8), 8, put(0, 19, f32s(s0.arr), 16))
	row(1, s1, put(1, 35, s1.pix, 3), put(1, 38, nil, 0), 0, put(1, 39, []byte("null\x00"), 5), 5, put(1, 44, f32s(s1.arr), 16))
	for i, a := range al {
		e := b[data+dataLen+24*i:]
		u64(e, 0, a.sid)
		u64(e, 8, a.ptr)
		u64(e, 16, a.size)
	}
	return b
}

// writeTiny writes the golden samples with the writer, one chunk per sample.
func writeTiny(t testing.TB, path string, samples int64) pagewriter.Result {
	t.Helper()
	w, err := Create(path, Options{PageSize: 2 << 20, Fields: tinyFields(t), Samples: samples})
	must(t, err)
	for _, s := range tinySamples {
		b := w.NewBatch()
		row, pay := mldfRow(t, s)
		must(t, b.Append(row, pay))
		must(t, w.Commit(context.Background(), w.Issue(), b))
	}
	res, err := w.Finish()
	must(t, err)
	return res
}

func TestGolden(t *testing.T) {
	want := handBuilt()
	if *update {
		must(t, os.MkdirAll(filepath.Dir(goldenPath), 0o755))
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		_, err := zw.Write(want)
		must(t, err)
		must(t, zw.Close())
		must(t, os.WriteFile(goldenPath, gz.Bytes(), 0o644))
	}
	compressed, err := os.ReadFile(goldenPath)
	must(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(compressed))
	must(t, err)
	file, err := io.ReadAll(zr)
	must(t, err)
	if !bytes.Equal(file, want) {
		t.Fatalf("%s differs from the hand-built bytes (run with -update after checking why)", goldenPath)
	}
	// In place (sample count known) and through the data scratch file (streaming): the same bytes.
	for _, n := range []int64{2, -1} {
		out := filepath.Join(t.TempDir(), "tiny.beton")
		res := writeTiny(t, out, n)
		got, err := os.ReadFile(out)
		must(t, err)
		if !bytes.Equal(got, want) {
			t.Errorf("samples=%d: writer output differs from the golden file at byte %d (sizes %d, %d)", n, firstDiff(got, want), len(got), len(want))
		}
		if res.Samples != 2 || res.Entries != 8 || res.DataPtr != 2<<20 || res.Size != int64(len(want)) {
			t.Errorf("samples=%d: result %+v", n, res)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestReadGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiny.beton")
	must(t, os.WriteFile(path, handBuilt(), 0o644)) // TestGolden pins these bytes to the golden file
	r, err := Open(path)
	must(t, err)
	defer r.Close()
	if r.NumSamples() != 2 || len(r.Fields()) != 6 || r.Layout().Size != 72 || r.DataStart() != 2<<20 {
		t.Fatalf("samples %d, fields %d, row %d, data %d", r.NumSamples(), len(r.Fields()), r.Layout().Size, r.DataStart())
	}
	if f := r.Fields()[5]; f.DType != "<f4" || len(f.Shape) != 2 || f.Shape[0] != 2 || f.Shape[1] != 2 {
		t.Errorf("ndarray field %+v", f)
	}
	rep, err := r.Verify()
	must(t, err)
	if rep.Entries != 8 || !rep.SortedInFile || rep.PagesUsed != 1 {
		t.Errorf("verify %+v", rep)
	}
	for i, s := range tinySamples {
		v, err := r.Sample(int64(i))
		must(t, err)
		js := s.json
		if js == nil {
			js = []byte("null")
		}
		if v[0].Image.Mode != ImageRaw || v[0].Image.Width != s.w || v[0].Image.Height != s.h || !bytes.Equal(v[0].Data, s.pix) ||
			v[1].Int != s.label || v[2].Float != s.score || !bytes.Equal(v[3].Data, s.blob) ||
			!bytes.Equal(v[4].Data, js) || !bytes.Equal(v[5].Data, f32s(s.arr)) {
			t.Errorf("sample %d: %v", i, v)
		}
	}
}
