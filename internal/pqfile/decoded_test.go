package pqfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/parquet-go/parquet-go/encoding/thrift"
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
			st, err := c.Chunk(f.ReaderAt(), &rg.Columns[0].MetaData, rg.NumRows, f.Leaves()[0], Limits{})
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

// TestHostileSchemas: what the library builds its schema tree from without a word is checked
// when the file is opened: the tree it builds is then the file's one schema.
func TestHostileSchemas(t *testing.T) {
	leaf := func(name string, typ format.Type) format.SchemaElement {
		return format.SchemaElement{Name: name, Type: thrift.New(typ), RepetitionType: thrift.New(format.Required)}
	}
	group := func(name string, children int32) format.SchemaElement {
		return format.SchemaElement{Name: name, NumChildren: thrift.New(children), RepetitionType: thrift.New(format.Optional)}
	}
	root := func(children int32) format.SchemaElement {
		return format.SchemaElement{Name: "schema", NumChildren: thrift.New(children)}
	}
	badRep := leaf("x", format.Int64)
	badRep.RepetitionType = thrift.New(format.FieldRepetitionType(7))
	noType := format.SchemaElement{Name: "x", RepetitionType: thrift.New(format.Required)}
	flba := leaf("x", format.FixedLenByteArray)
	typedGroup := group("g", 1)
	typedGroup.Type = thrift.New(format.Int64)
	for _, tc := range []struct {
		name   string
		schema []format.SchemaElement
		want   string
	}{
		{"a column without a name", []format.SchemaElement{root(1), leaf("", format.Int64)}, "has no name"},
		{"repetition type 7", []format.SchemaElement{root(1), badRep}, `column "x" has repetition type 7`},
		{"a leaf without a type", []format.SchemaElement{root(1), noType}, `column "x" has no type`},
		{"physical type 99", []format.SchemaElement{root(1), leaf("x", format.Type(99))}, `column "x" has physical type 99`},
		{"FIXED_LEN_BYTE_ARRAY of length 0", []format.SchemaElement{root(1), flba}, "FIXED_LEN_BYTE_ARRAY of length 0"},
		{"a group with a physical type", []format.SchemaElement{root(1), typedGroup, leaf("x", format.Int64)}, `group "g" has a physical type`},
		{"elements after the root's children", []format.SchemaElement{root(1), leaf("x", format.Int64), leaf("y", format.Int64)}, "follow the root's children"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := pqtest.File(tc.schema, nil)
			_, err := Open(bytes.NewReader(data), int64(len(data)), "hostile.parquet")
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "hostile.parquet") {
				t.Fatalf("error %v, want ErrCorrupt naming the file and %q", err, tc.want)
			}
		})
	}
}
