package scdl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"testing"
)

func spillSpecs() []ColumnSpec {
	return []ColumnSpec{{Name: "i", Kind: KindInt}, {Name: "f", Kind: KindFloat}, {Name: "s", Kind: KindString}, {Name: "b", Kind: KindBool}}
}

func spillCols() []Column {
	s := spillSpecs()
	return []Column{
		{ColumnSpec: s[0], Ints: []int64{-1, 7, 0}},
		{ColumnSpec: s[1], Floats: []float64{math.NaN(), 1.5, -0}, Null: []bool{false, true, false}},
		{ColumnSpec: s[2], Strings: []string{"", "é\x00", "x"}},
		{ColumnSpec: s[3], Bools: []bool{true, false, true}, Null: []bool{false, false, true}},
	}
}

func specsOne(in int) ([]ColumnSpec, bool) { return spillSpecs(), in == 1 }

func TestObsSpillRoundTrip(t *testing.T) {
	want := spillCols()
	b := encodeObs(nil, 1, 10, 13, want)
	b = encodeObs(b, 1, 13, 16, want)
	r := bytes.NewReader(b)
	var buf []byte
	for k := range 2 {
		rec, err := readObs(r, &buf, specsOne)
		if err != nil {
			t.Fatal(err)
		}
		if rec.in != 1 || rec.lo != int64(10+3*k) || rec.hi != int64(13+3*k) || len(rec.cols) != 4 {
			t.Fatalf("record %d: %+v", k, rec)
		}
		for c := range want {
			for r := range 3 {
				g, w := &rec.cols[c], &want[c]
				if g.IsNull(r) != w.IsNull(r) || g.Text(r) != w.Text(r) {
					t.Fatalf("column %s row %d: %q, want %q", w.Name, r, g.Text(r), w.Text(r))
				}
			}
		}
	}
	if _, err := readObs(r, &buf, specsOne); err != io.EOF {
		t.Fatalf("at the end: %v", err)
	}
}

// A damaged spill is errSpill, never a panic or an allocation of what a length claims.
func TestObsSpillDamaged(t *testing.T) {
	good := encodeObs(nil, 1, 0, 3, spillCols())
	set := func(off int, v uint32) []byte {
		b := bytes.Clone(good)
		binary.LittleEndian.PutUint32(b[off:], v)
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"short length", good[:2]},
		{"short payload", good[:len(good)-1]},
		{"length too small", set(0, 3)},
		{"length huge", set(0, math.MaxUint32)},
		{"length past the end", set(0, uint32(len(good)))},
		{"unknown input", set(4, 9)},
		{"no rows", set(16, 0)},
		{"too many rows", set(16, 1<<20)},
		{"string length past the record", func() []byte {
			b := bytes.Clone(good)
			// the first string's length: after the header, 3 flags+3 ints, 3 flags+3 floats, 3 flags
			binary.LittleEndian.PutUint32(b[4+20+3+24+3+24+3:], 1<<30)
			return b
		}()},
		{"bytes left over", func() []byte {
			b := append(bytes.Clone(good), 0)
			binary.LittleEndian.PutUint32(b, binary.LittleEndian.Uint32(b)+1)
			return b
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf []byte
			_, err := readObs(bytes.NewReader(tc.b), &buf, specsOne)
			if !errors.Is(err, errSpill) {
				t.Fatalf("got %v, want %v", err, errSpill)
			}
		})
	}
}

func FuzzReadObs(f *testing.F) {
	f.Add(encodeObs(nil, 1, 0, 3, spillCols()))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		var buf []byte
		for range 4 {
			if _, err := readObs(r, &buf, specsOne); err != nil {
				return
			}
		}
	})
}
