package jsonout

import (
	"encoding/json"
	"math"
	"testing"
)

// TestValues: integers beyond 2^53 are strings, NaN and the infinities are strings, 64-bit
// hashes are 16 hex digits.
func TestValues(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{U64(0), `0`},
		{U64(MaxSafeInt), `9007199254740992`},
		{U64(MaxSafeInt + 1), `"9007199254740993"`},
		{U64(math.MaxUint64), `"18446744073709551615"`},
		{I64(-MaxSafeInt), `-9007199254740992`},
		{I64(-MaxSafeInt - 1), `"-9007199254740993"`},
		{I64(math.MaxInt64), `"9223372036854775807"`},
		{I64(-1), `-1`},
		{Float(0.25), `0.25`},
		{Float(math.NaN()), `"NaN"`},
		{Float(math.Inf(1)), `"Infinity"`},
		{Float(math.Inf(-1)), `"-Infinity"`},
		{Hex64(0x4e30ddc0be88af7b), `"4e30ddc0be88af7b"`},
		{Hex64(1), `"0000000000000001"`},
		{NewHead(KindVerify), `{"schema_version":1,"kind":"verify"}`},
		{Floats([]float32{1, float32(math.NaN())}), `[1,"NaN"]`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("%#v: %s %v, want %s", c.v, b, err, c.want)
		}
	}
}
