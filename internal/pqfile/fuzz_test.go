package pqfile

import (
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
