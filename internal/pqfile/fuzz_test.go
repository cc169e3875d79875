package pqfile

import (
	"bytes"

	"github.com/mldf/convert/internal/pqfile/pqtest"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// FuzzThriftSize: the Thrift walker never panics, never claims more bytes than it was given,
// and whatever it accepts as a page header decodes within those bytes.
func FuzzThriftSize(f *testing.F) {
	f.Add([]byte{0x15, 0x00, 0x15, 0x08, 0x15, 0x08, 0x00})
	f.Add([]byte{0x19, 0xfc, 0xff, 0xff, 0xff, 0x0f, 0x00})
	f.Add([]byte{0x18, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := ThriftSize(b)
		if err != nil {
			return
		}
		if n < 1 || n > len(b) {
			t.Fatalf("size %d of %d bytes", n, len(b))
		}
		var h format.PageHeader
		_ = thrift.Unmarshal(&thrift.CompactProtocol{}, b[:n], &h)
	})
}

// FuzzOpen: Open and the page checks never panic or hang on arbitrary bytes (seeded with
// the hostile files of the tests and with a footer's bytes behind PAR1).
func FuzzOpen(f *testing.F) {
	for _, b := range hostilePages() {
		f.Add(b)
	}
	f.Add(pqtest.File(deepSchema(70), nil))
	f.Add(pqtest.File(int64Schema, []pqtest.RowGroup{{Rows: 2, Chunks: []pqtest.Chunk{int64Chunk(1, 2)}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		pf, err := Open(bytes.NewReader(b), int64(len(b)), "fuzz.parquet")
		if err != nil {
			return
		}
		_ = pf.CheckPages(Limits{MaxPageSize: 1 << 20})
	})
}
