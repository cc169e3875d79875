package pqfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mldf/convert/internal/pqfile/pqtest"
)

// TestSnappyServedRaw: a snappy chunk is served as it lies, and the decoded length its body
// states is checked against its header however the library's reads cut the body (here one
// byte at a time, so the length is never within one read).
func TestSnappyServedRaw(t *testing.T) {
	value := []byte("a value of some length, long enough to compress, and then some more of it")
	plain := binary.LittleEndian.AppendUint32(nil, uint32(len(value)))
	plain = append(plain, value...)
	body := snappy.Encode(nil, plain)
	for _, tc := range []struct {
		name     string
		declared int
		want     string // "" reads
	}{
		{"honest", len(plain), ""},
		{"length beyond the header", len(plain) - 1, "where the header says"},
		{"length short of the header", len(plain) + 1, "where the header says"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := pqtest.Compressed(format.Snappy, body, tc.declared, 0)
			f, err := Open(bytes.NewReader(data), int64(len(data)), "t.parquet")
			if err != nil {
				t.Fatal(err)
			}
			w, err := f.Window(0)
			if err != nil {
				t.Fatal(err)
			}
			var c Checker
			defer c.Close()
			rg := &w.PF.Metadata().RowGroups[0]
			st, err := c.Chunk(f.ReaderAt(), &rg.Columns[0].MetaData, rg.NumRows, Leaves(f.Schema)[0], Limits{})
			if err != nil {
				t.Fatal(err)
			}
			g, err := f.RowGroup(w, 0, []int{0}, []ChunkStats{st})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if g.v == nil || len(g.v.chunks) != 1 || !g.v.chunks[0].raw {
				t.Fatal("the snappy chunk is not served as it lies")
			}
			whole := make([]byte, g.v.size)
			_, errWhole := g.v.ReadAt(whole, 0)
			g.v.err, g.v.chunks[0].checked[0] = nil, false
			var one [1]byte
			var got []byte
			var errOne error
			for off := int64(0); off < g.v.size && errOne == nil; off++ {
				if _, errOne = g.v.ReadAt(one[:], off); errOne == nil {
					got = append(got, one[0])
				}
			}
			for _, err := range []error{errWhole, errOne} {
				switch {
				case tc.want == "" && err != nil && err != io.EOF:
					t.Fatal(err)
				case tc.want != "" && (!errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `column "b"`)):
					t.Fatalf("error %v, want ErrCorrupt naming the column and %q", err, tc.want)
				}
			}
			if tc.want == "" && !bytes.Equal(got, whole) {
				t.Fatal("read a byte at a time, the view differs")
			}
		})
	}
}
