package scdl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
)

// numpyFile is what numpy's np.save writes (checked against Debian's numpy 1.24): the
// header dict padded with spaces so that the data starts at byte 128, then '\n'.
func numpyFile(dict string, data []byte) []byte {
	h := []byte("\x93NUMPY\x01\x00\x76\x00" + dict)
	h = append(h, bytes.Repeat([]byte{' '}, 127-len(h))...)
	return append(append(h, '\n'), data...)
}

func TestNPYMatchesNumpy(t *testing.T) {
	want := numpyFile("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
		[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 60, 0, 0, 0, 0, 0, 0, 0})
	if got := encodeInt64NPY([]int64{-1, 60}); !bytes.Equal(got, want) {
		t.Fatalf("cumulative_sum_index.npy\n got %q\nwant %q", got, want)
	}
	want = numpyFile("{'descr': '<U5', 'fortran_order': False, 'shape': (), }",
		[]byte("0\x00\x00\x00.\x00\x00\x001\x00\x00\x00.\x00\x00\x000\x00\x00\x00"))
	if got := encodeStringNPY("0.1.0"); !bytes.Equal(got, want) {
		t.Fatalf("version.npy\n got %q\nwant %q", got, want)
	}
	for _, v := range [][]int64{{-1}, {-1, 60, 120, 145}, make([]int64, 1000)} {
		got, err := decodeInt64NPY(encodeInt64NPY(v), "x")
		if err != nil || !slices.Equal(got, v) {
			t.Fatalf("%v: %v %v", v, got, err)
		}
	}
	if _, err := decodeInt64NPY(encodeStringNPY("0.1.0"), "x"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a <U5 array decoded as int64: %v", err)
	}
}

func FuzzDecodeInt64NPY(f *testing.F) {
	f.Add(encodeInt64NPY([]int64{-1, 5, 9}))
	f.Add(encodeStringNPY("0.1.0"))
	f.Add([]byte("\x93NUMPY\x02\x00\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeInt64NPY(b, "fuzz")
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if got, err := decodeInt64NPY(encodeInt64NPY(v), "again"); err != nil || !slices.Equal(got, v) {
			t.Fatalf("re-encoding does not round-trip: %v", err)
		}
	})
}

// TestNPYHeaderQuotedShort: a hostile header (up to the file's 64 MiB) is quoted shortened.
func TestNPYHeaderQuotedShort(t *testing.T) {
	dict := "{'descr': " + strings.Repeat("x", 1<<20)
	b := append([]byte("\x93NUMPY\x02\x00"), binary.LittleEndian.AppendUint32(nil, uint32(len(dict)))...)
	_, err := decodeInt64NPY(append(b, dict...), "cumulative_sum_index.npy")
	if err == nil || !errors.Is(err, ErrInvalid) || len(err.Error()) > 2000 || !strings.Contains(err.Error(), "bytes)") {
		t.Fatalf("error of %d bytes: %.300v", len(err.Error()), err)
	}
}
