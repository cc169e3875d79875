// Package jsonout holds what every JSON document the command prints shares (docs/schema):
// the schema version and kind that open each document, and the encodings of the values JSON
// numbers cannot carry exactly: 64-bit checksums and hashes as 16 hex digits, integers
// beyond 2^53 as decimal strings, and NaN and the infinities as strings.
package jsonout

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// SchemaVersion is the version of the JSON vocabulary (docs/schema/README.md). It changes
// when a key is renamed or removed or changes meaning; adding a key does not change it.
const SchemaVersion = 1

// Kinds of document, the "kind" key of each.
const (
	KindInspect  = "inspect"  // inspect FILE --json
	KindSample   = "sample"   // inspect FILE --sample N --json
	KindVerify   = "verify"   // verify FILE --json
	KindPlan     = "plan"     // validate --json, run --dry-run --json
	KindSummary  = "summary"  // run --json, the last line of a run with --log-format json
	KindReport   = "report"   // the report file beside the output
	KindMerge    = "merge"    // merge --json
	KindProgress = "progress" // progress log lines
	KindError    = "error"    // an error, on stderr, with --json or --log-format json
)

// Head opens every document: embed it first in an output struct.
type Head struct {
	SchemaVersion int    `json:"schema_version"`
	Kind          string `json:"kind"`
}

// NewHead returns the head of a document of kind.
func NewHead(kind string) Head { return Head{SchemaVersion: SchemaVersion, Kind: kind} }

// MaxSafeInt is the largest integer every JSON reader holds exactly (2^53, the integers of an
// IEEE double; JavaScript's Number.MAX_SAFE_INTEGER + 1).
const MaxSafeInt = 1 << 53

// Hex64 formats a 64-bit checksum or hash as 16 lowercase hex digits.
func Hex64(v uint64) string { return fmt.Sprintf("%016x", v) }

// U64 is an unsigned count, size or offset: a JSON number up to MaxSafeInt, and beyond it
// (only a hostile or damaged file holds such a value) the number in decimal as a string.
type U64 uint64

// MarshalJSON encodes u as a number, or as a decimal string above MaxSafeInt.
func (u U64) MarshalJSON() ([]byte, error) {
	if u > MaxSafeInt {
		return []byte(`"` + strconv.FormatUint(uint64(u), 10) + `"`), nil
	}
	return strconv.AppendUint(nil, uint64(u), 10), nil
}

// I64 is a signed value encoded as U64 is: a number within ±MaxSafeInt, else a string.
type I64 int64

// MarshalJSON encodes i as a number, or as a decimal string beyond ±MaxSafeInt.
func (i I64) MarshalJSON() ([]byte, error) {
	if i > MaxSafeInt || i < -MaxSafeInt {
		return []byte(`"` + strconv.FormatInt(int64(i), 10) + `"`), nil
	}
	return strconv.AppendInt(nil, int64(i), 10), nil
}

// Float is a float64 that encodes NaN and the infinities, which JSON numbers cannot hold,
// as the strings "NaN", "Infinity" and "-Infinity" (Python's float() reads all three).
type Float float64

// MarshalJSON encodes f.
func (f Float) MarshalJSON() ([]byte, error) {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return []byte(`"NaN"`), nil
	case math.IsInf(x, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-Infinity"`), nil
	}
	return json.Marshal(x)
}

// Floats converts a slice of float32 values (an SCDL cell) for encoding.
func Floats[T ~float32 | ~float64](xs []T) []Float {
	out := make([]Float, len(xs))
	for i, x := range xs {
		out[i] = Float(x)
	}
	return out
}
