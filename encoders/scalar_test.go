package encoders

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
)

func str(s string) sample.Value  { return sample.Value{Kind: sample.KindString, Bytes: []byte(s)} }
func raw(s string) sample.Value  { return sample.Value{Kind: sample.KindBytes, Bytes: []byte(s)} }
func num(n int64) sample.Value   { return sample.Value{Kind: sample.KindInt, Int: n} }
func flt(x float64) sample.Value { return sample.Value{Kind: sample.KindFloat, Float: x} }

func TestInt(t *testing.T) {
	f, err := NewInt("label")
	if err != nil {
		t.Fatal(err)
	}
	ok := []struct {
		v    sample.Value
		want int64
	}{
		{num(-5), -5}, {flt(3), 3}, {raw("3\n"), 3}, {str(" 42 "), 42}, {raw("-9223372036854775808"), -1 << 63},
	}
	for _, c := range ok {
		meta := make([]byte, 8)
		p, err := f.Encode(c.v, meta)
		if err != nil || p != nil || mldf.GetInt(meta) != c.want {
			t.Errorf("Encode(%+v) = %v, %v, %d; want %d", c.v, p, err, mldf.GetInt(meta), c.want)
		}
	}
	bad := []struct {
		v    sample.Value
		want error
	}{
		{flt(2.5), ErrParse}, {raw("three"), ErrParse}, {raw(""), ErrParse}, {raw("99999999999999999999"), ErrParse},
		{sample.Value{}, ErrKind}, {flt(1e300), ErrParse},
	}
	for _, c := range bad {
		_, err := f.Encode(c.v, make([]byte, 8))
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), `"label"`) {
			t.Errorf("Encode(%+v) error = %v, want %v naming the field", c.v, err, c.want)
		}
	}
}

func TestFloat(t *testing.T) {
	f, _ := NewFloat("score")
	for _, c := range []struct {
		v    sample.Value
		want float64
	}{{flt(0.25), 0.25}, {num(2), 2}, {raw("1e-3"), 1e-3}} {
		meta := make([]byte, 8)
		if _, err := f.Encode(c.v, meta); err != nil || mldf.GetFloat(meta) != c.want {
			t.Errorf("Encode(%+v) = %v, %v", c.v, mldf.GetFloat(meta), err)
		}
	}
	if _, err := f.Encode(raw("x"), make([]byte, 8)); !errors.Is(err, ErrParse) {
		t.Errorf("bad float: %v", err)
	}
}

func TestBytesAndJSON(t *testing.T) {
	b, _ := NewBytes("blob")
	dir := t.TempDir()
	path := filepath.Join(dir, "x.bin")
	if err := os.WriteFile(path, []byte{0, 1, 2}, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := b.Encode(sample.Value{Kind: sample.KindFile, Path: path}, make([]byte, 16))
	if err != nil || !bytes.Equal(p, []byte{0, 1, 2}) {
		t.Fatalf("bytes from file: %v %v", p, err)
	}
	if _, err := b.Encode(sample.Value{Kind: sample.KindFile, Path: filepath.Join(dir, "missing")}, make([]byte, 16)); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing file error should name it: %v", err)
	}
	j, _ := NewJSON("meta")
	for _, c := range []struct {
		v    sample.Value
		want string
	}{
		{raw(`{ "a" : [1, 2] }`), `{"a":[1,2]}`},
		{str("hé"), `"hé"`},
		{num(7), `7`},
		{sample.Value{Kind: sample.KindJSON, Bytes: []byte(`[ ]`)}, `[]`},
	} {
		p, err := j.Encode(c.v, make([]byte, 16))
		if err != nil || string(p) != c.want {
			t.Errorf("JSON(%+v) = %q, %v; want %q", c.v, p, err, c.want)
		}
	}
	for _, in := range []string{`{`, `nope`, "\"\xff\""} {
		if _, err := j.Encode(raw(in), make([]byte, 16)); !errors.Is(err, ErrInvalid) {
			t.Errorf("JSON(%q) error = %v, want ErrInvalid", in, err)
		}
	}
}

// TestJSONDepthLimit: the writer refuses JSON nested deeper than the depth
// every reader accepts (manifest.MaxJSONDepth), as a per-sample error; at the limit it writes.
func TestJSONDepthLimit(t *testing.T) {
	j, _ := NewJSON("meta")
	for _, c := range []struct {
		depth int
		ok    bool
	}{{mldf.MaxJSONDepth, true}, {mldf.MaxJSONDepth + 1, false}, {2000, false}, {10000, false}, {10001, false}} {
		in := strings.Repeat("[", c.depth) + strings.Repeat("]", c.depth)
		_, err := j.Encode(sample.Value{Kind: sample.KindJSON, Bytes: []byte(in)}, make([]byte, 16))
		if c.ok != (err == nil) || (err != nil && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "rule D3"))) {
			t.Errorf("depth %d: %v", c.depth, err)
		}
	}
}

func TestFieldNames(t *testing.T) {
	for _, name := range []string{"", strings.Repeat("x", 64), "a\x00b", "\xff"} {
		if _, err := NewInt(name); !errors.Is(err, mldf.ErrFieldName) {
			t.Errorf("NewInt(%q) = %v, want ErrFieldName", name, err)
		}
	}
}

// npy builds a version-1 .npy file.
func npy(descr string, shape string, data []byte) []byte {
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	out := []byte("\x93NUMPY\x01\x00")
	out = binary.LittleEndian.AppendUint16(out, uint16(len(h)))
	return append(append(out, h...), data...)
}

func TestNDArray(t *testing.T) {
	data := make([]byte, 2*3*4)
	for i := range data {
		data[i] = byte(i)
	}
	fixed, err := NewNDArray("emb", "<f4", []uint64{2, 3})
	if err != nil {
		t.Fatal(err)
	}
	a := fixed.Arguments()
	if a[0] != 1 || a[1] != NDArrayFixed || string(a[2:5]) != "<f4" || a[18] != 2 || binary.LittleEndian.Uint64(a[32:]) != 3 {
		t.Fatalf("arguments % x", a[:40])
	}
	p, err := fixed.Encode(raw(string(npy("<f4", "(2, 3)", data))), make([]byte, 16))
	if err != nil || !bytes.Equal(p, data) {
		t.Fatalf("fixed encode: %v %v", p, err)
	}
	variable, _ := NewNDArray("any", "", nil)
	whole := npy("|u1", "(5,)", []byte{1, 2, 3, 4, 5})
	if p, err := variable.Encode(raw(string(whole)), make([]byte, 16)); err != nil || !bytes.Equal(p, whole) {
		t.Fatalf("npy-file encode: %v", err)
	}
	bad := map[string][]byte{
		"wrong dtype":    npy("<i4", "(2, 3)", data),
		"wrong shape":    npy("<f4", "(3, 2, 1)", data),
		"short data":     npy("<f4", "(2, 3)", data[:5]),
		"fortran":        []byte(strings.Replace(string(npy("<f4", "(2, 3)", data)), "False", "True ", 1)),
		"object dtype":   npy("|O8", "(2, 3)", data),
		"no magic":       []byte("hello world, not npy"),
		"huge shape":     npy("<f4", "(4294967296, 4294967296)", data),
		"bad version":    append([]byte("\x93NUMPY\x09\x00"), 0, 0),
		"header overrun": append([]byte("\x93NUMPY\x01\x00"), 0xff, 0xff),
	}
	for name, in := range bad {
		if _, err := fixed.Encode(raw(string(in)), make([]byte, 16)); !errors.Is(err, ErrNPY) {
			t.Errorf("%s: error = %v, want ErrNPY", name, err)
		}
	}
	if _, err := NewNDArray("x", "<f4", []uint64{1 << 20, 1 << 20}); err == nil {
		t.Error("a shape over 4 GiB should be refused")
	}
}

func FuzzParseNPY(f *testing.F) {
	f.Add(npy("<f4", "(2, 3)", make([]byte, 24)))
	f.Add(npy("|u1", "()", []byte{7}))
	f.Add([]byte("\x93NUMPY\x02\x00\x10\x00\x00\x00{'descr': '<i8'}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		arr, err := ParseNPY(b)
		if err != nil {
			return
		}
		item, _ := dtypeSize(arr.Descr)
		n := item
		for _, d := range arr.Shape {
			n *= d
		}
		if uint64(len(arr.Data)) != n {
			t.Fatalf("accepted %d data bytes for shape %v of %s", len(arr.Data), arr.Shape, arr.Descr)
		}
	})
}
