package format

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/mldf/convert/internal/jsonout"
)

// TestSharedJSON: the shared shapes, embedded first in a format's struct, encode their keys
// in place and in order, before the format's own.
func TestSharedJSON(t *testing.T) {
	type doc struct {
		DocJSON
		N int `json:"n"`
	}
	type field struct {
		FieldJSON
		RowOffset int `json:"row_offset"`
	}
	type value struct {
		ValueJSON
		Bytes *int `json:"bytes,omitempty"`
	}
	three := 3
	for _, c := range []struct {
		v    any
		want string
	}{
		{doc{DocJSON: NewDocJSON(jsonout.KindVerify, "mldf", "a.mldf"), N: 1},
			`{"schema_version":1,"kind":"verify","format":"mldf","file":"a.mldf","n":1}`},
		{field{FieldJSON: FieldJSON{Index: 2, Name: "label", Type: "INT", TypeID: 1}, RowOffset: 8},
			`{"index":2,"name":"label","type":"INT","type_id":1,"row_offset":8}`},
		{value{ValueJSON: NewValueJSON(0, "x", "INT").WithInt(math.MaxInt64)},
			`{"field":0,"name":"x","type":"INT","int":"9223372036854775807"}`},
		{value{ValueJSON: NewValueJSON(1, "y", "FLOAT").WithFloat(math.Inf(-1))},
			`{"field":1,"name":"y","type":"FLOAT","float":"-Infinity"}`},
		{value{ValueJSON: NewValueJSON(2, "z", "BYTES"), Bytes: &three},
			`{"field":2,"name":"z","type":"BYTES","bytes":3}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("%+v: %s %v, want %s", c.v, b, err, c.want)
		}
	}
}
