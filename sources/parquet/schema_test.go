package parquet

import (
	"bytes"
	"testing"

	"github.com/parquet-go/parquet-go/format"

	"github.com/mldf/convert/internal/pqfile"
	"github.com/mldf/convert/internal/pqfile/pqtest"
	"github.com/mldf/convert/sample"
)

// TestSchemaIsTheLibrarys: the schema is parquet-go's own column tree, its leaves' column
// indexes those of the library, and a dotted path, a wide table's column and a column
// named with a dot are found in it.
func TestSchemaIsTheLibrarys(t *testing.T) {
	data := pqtest.Wide(40, 2)
	f, err := pqfile.Open(bytes.NewReader(data), int64(len(data)), "t.parquet")
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSchema(f.Root(), f.Schema)
	if err != nil {
		t.Fatal(err)
	}
	if s.Root != f.PF().Root() {
		t.Fatal("the schema's root is not the library's")
	}
	for i, c := range f.PF().Root().Columns() {
		if s.Lookup(c.Name()) != c || c.Index() != i || s.leaves[i] != c {
			t.Fatalf("column %d: not the library's own", i)
		}
	}
	if s.Lookup("nosuch") != nil || s.Lookup("") != s.Root {
		t.Fatal("lookups of the root and of a missing column")
	}
	hf, _, err := ReadSchema("../../testdata/parquet/hf-images.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	if b := hf.Lookup("image.bytes"); b == nil || b != hf.Lookup("image").Column("bytes") || pathOf(b) != "image.bytes" {
		t.Fatal("image.bytes is not the image struct's member")
	}
}

// TestNoRepetitionType: a column whose element has no repetition type reads as required, as
// the library decodes it (a tree of the source's own counted it optional, so every value
// was "below its definition level").
func TestNoRepetitionType(t *testing.T) {
	x := pqtest.Required("x", format.Int64)
	x.RepetitionType.Valid = false
	data := pqtest.File([]format.SchemaElement{pqtest.Root(1), x},
		[]pqtest.RowGroup{{Rows: 3, Chunks: []pqtest.Chunk{pqtest.Int64Column("x", []int64{7, 8, 9})}}})
	var got []int64
	err := runAll(t, data, []Column{{Name: "x", Path: "x"}}, Options{Workers: 1}, func(s sample.Sample) error {
		got = append(got, s.Value("x").Int)
		return nil
	})
	if err != nil || len(got) != 3 || got[0] != 7 || got[2] != 9 {
		t.Fatalf("%v: %v", got, err)
	}
}
