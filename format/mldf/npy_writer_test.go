package mldf

import (
	"bytes"
	"slices"
	"testing"
)

// AppendNPYHeader writes what ParseNPY reads back, with the data 64-byte aligned as np.save
// aligns it, for 0-d, 1-d and n-d arrays.
func TestAppendNPYHeaderRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		descr string
		shape []uint64
		size  int
	}{
		{"<f4", nil, 4},
		{"<f4", []uint64{0}, 0},
		{"<i8", []uint64{5}, 40},
		{"<u2", []uint64{2, 3, 4}, 48},
		{"|u1", []uint64{1, 1, 1, 1, 1, 1, 1, 1, 7}, 7},
	} {
		data := bytes.Repeat([]byte{7}, tc.size)
		h := AppendNPYHeader([]byte("prefix"), tc.descr, tc.shape)
		if string(h[:6]) != "prefix" {
			t.Fatalf("%v: dst not kept", tc)
		}
		h = h[6:]
		if len(h)%64 != 0 || h[len(h)-1] != '\n' {
			t.Fatalf("%v: header of %d bytes, last %q", tc, len(h), h[len(h)-1])
		}
		a, err := ParseNPY(append(h, data...))
		if err != nil {
			t.Fatalf("%v: %v\n%q", tc, err, h)
		}
		if a.Descr != tc.descr || !slices.Equal(a.Shape, tc.shape) && !(len(a.Shape) == 0 && len(tc.shape) == 0) || !bytes.Equal(a.Data, data) {
			t.Fatalf("%v: read back %s %v %d bytes", tc, a.Descr, a.Shape, len(a.Data))
		}
	}
}
