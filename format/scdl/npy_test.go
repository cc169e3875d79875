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

// TestLabelsNPYMatchesNumpy: labels.npy is byte for byte what np.save(list_of_str) writes
// (checked against numpy 1.26), and decodes back as np.load(allow_pickle=False) reads it.
func TestLabelsNPYMatchesNumpy(t *testing.T) {
	cases := []struct {
		labels []string
		file   []byte
	}{
		{[]string{"a", "bé😀"}, numpyFile("{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }",
			[]byte("a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00b\x00\x00\x00\xe9\x00\x00\x00\x00\xf6\x01\x00"))},
		{[]string{}, numpyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }", nil)},
		{[]string{""}, numpyFile("{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }", []byte{0, 0, 0, 0})},
	}
	for _, c := range cases {
		got := encodeLabelsNPY(c.labels)
		if !bytes.Equal(got, c.file) {
			t.Fatalf("%q:\n got %q\nwant %q", c.labels, got, c.file)
		}
		back, err := decodeLabelsNPY(got, "labels.npy")
		if err != nil || !slices.Equal(back, c.labels) {
			t.Fatalf("%q: decoded %q, %v", c.labels, back, err)
		}
	}
}

// TestLabelsNPYBad: what decodeLabelsNPY refuses, each with the rule it breaks.
func TestLabelsNPYBad(t *testing.T) {
	u := func(descr, shape string, data []byte) []byte {
		return numpyFile("{'descr': '"+descr+"', 'fortran_order': False, 'shape': ("+shape+"), }", data)
	}
	cases := []struct {
		name, rule string
		file       []byte
	}{
		{"pickled object array", "labels", u("|O", "2,", []byte("\x80\x03cnumpy.core.multiarray\n_reconstruct"))},
		{"int64", "npy dtype", encodeInt64NPY([]int64{-1, 3})},
		{"non-empty float", "npy dtype", u("<f8", "1,", make([]byte, 8))},
		{"big-endian unicode", "npy dtype", u(">U1", "1,", []byte{0, 0, 0, 'a'})},
		{"width 0 with items", "npy dtype", u("<U0", "3,", nil)},
		{"huge width", "npy dtype", u("<U99999999999", "1,", nil)},
		{"short data", "npy size", u("<U2", "2,", make([]byte, 12))},
		{"long data", "npy size", u("<U1", "1,", make([]byte, 8))},
		{"count overflows", "npy size", u("<U4", "4611686018427387904,", make([]byte, 16))},
		{"data for no item", "npy size", u("<U1", "0,", make([]byte, 4))},
		{"two dimensions", "npy shape", u("<U1", "1, 1", make([]byte, 4))},
		{"0-d", "npy shape", u("<U1", "", make([]byte, 4))},
		{"surrogate", "labels", u("<U1", "1,", []byte{0x00, 0xd8, 0, 0})},
		{"beyond Unicode", "labels", u("<U1", "1,", []byte{0, 0, 0x11, 0})},
		{"not NPY", "npy magic", []byte(`["a.h5ad"]`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeLabelsNPY(c.file, "var_features/labels.npy")
			var re *RuleError
			if !errors.As(err, &re) || re.Rule != c.rule || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "var_features/labels.npy") {
				t.Fatalf("error %v, want rule %q naming the file", err, c.rule)
			}
		})
	}
}

func FuzzDecodeLabelsNPY(f *testing.F) {
	f.Add(encodeLabelsNPY([]string{"a.h5ad", "bé😀"}))
	f.Add(encodeLabelsNPY(nil))
	f.Add(numpyFile("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", []byte("\x80\x03")))
	f.Add(numpyFile("{'descr': '<U0', 'fortran_order': False, 'shape': (9223372036854775807,), }", nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeLabelsNPY(b, "fuzz")
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		// Trailing NULs are dropped by the decoder as by numpy: a round trip keeps the rest.
		if got, err := decodeLabelsNPY(encodeLabelsNPY(v), "again"); err != nil || !slices.Equal(got, v) {
			t.Fatalf("re-encoding does not round-trip: %q %q %v", v, got, err)
		}
	})
}
