package parquet

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mldf/convert/sample"
)

// entry is one value of a leaf column as read from its pages, with its levels. Byte values
// (BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY, INT96) are copied into the batch's arena, or, when large
// (an image), into their own allocation, so that each is freed as soon as its sample is
// written rather than with the whole batch.
type entry struct {
	rep, def uint8
	null     bool
	bits     uint64 // BOOLEAN (0/1), INT32 and INT64 (sign-extended), FLOAT and DOUBLE bits
	off, end int    // the bytes in the arena
	own      []byte // or the bytes, when large
}

// entryCost is what one value costs a batch besides its bytes: its entry, and its column in
// the sample (counted against the batch budget, so that a batch of a table of thousands of
// numeric columns is bounded too).
const entryCost = 128

// ownSize is the size from which a value gets its own allocation.
const ownSize = 32 << 10

// bytesOf returns e's bytes.
func (e *entry) bytesOf(arena []byte) []byte {
	if e.own != nil {
		return e.own
	}
	return arena[e.off:e.end]
}

// batchBytes is where a batch's byte values go: a shared arena for small ones, and the
// count of all their bytes and of entryCost per value (the batch budget).
type batchBytes struct {
	arena []byte
	n     int
}

// add copies b and records where it is in e.
func (bb *batchBytes) add(e *entry, b []byte) {
	bb.n += len(b)
	if len(b) >= ownSize {
		e.own = append(make([]byte, 0, len(b)), b...)
		return
	}
	e.off = len(bb.arena)
	bb.arena = append(bb.arena, b...)
	e.end = len(bb.arena)
}

// appendEntry converts v (valid until the next read of its column) to an entry, copying its
// bytes into bb.
func appendEntry(ents []entry, bb *batchBytes, v pq.Value) []entry {
	bb.n += entryCost
	e := entry{rep: uint8(v.RepetitionLevel()), def: uint8(v.DefinitionLevel())}
	if v.IsNull() {
		e.null = true
		return append(ents, e)
	}
	switch v.Kind() {
	case pq.Boolean:
		if v.Boolean() {
			e.bits = 1
		}
	case pq.Int32:
		e.bits = uint64(int64(v.Int32()))
	case pq.Int64:
		e.bits = uint64(v.Int64())
	case pq.Float:
		e.bits = uint64(math.Float32bits(v.Float()))
	case pq.Double:
		e.bits = math.Float64bits(v.Double())
	case pq.Int96:
		i := v.Int96()
		var b [12]byte
		binary.LittleEndian.PutUint32(b[0:], i[0])
		binary.LittleEndian.PutUint32(b[4:], i[1])
		binary.LittleEndian.PutUint32(b[8:], i[2])
		bb.add(&e, b[:])
	default:
		bb.add(&e, v.ByteArray())
	}
	return append(ents, e)
}

func (s *Schema) isStringNode(n *pq.Column) bool {
	switch s.logical(n).(type) {
	case *format.StringType, *format.EnumType, *format.JsonType:
		return true
	}
	c, ok := s.conv(n)
	return ok && (c == deprecated.UTF8 || c == deprecated.Enum || c == deprecated.Json)
}

func (s *Schema) isJSONNode(n *pq.Column) bool {
	if _, ok := s.logical(n).(*format.JsonType); ok {
		return true
	}
	c, ok := s.conv(n)
	return ok && c == deprecated.Json
}

// decimalScale returns the scale of a DECIMAL column, and whether it is one.
func (s *Schema) decimalScale(n *pq.Column) (int, bool) {
	if d, ok := s.logical(n).(*format.DecimalType); ok {
		return int(d.Scale), true
	}
	if c, ok := s.conv(n); ok && c == deprecated.Decimal {
		return int(s.elem(n).Scale.V), true
	}
	return 0, false
}

func (s *Schema) isFloat16(n *pq.Column) bool {
	_, ok := s.logical(n).(*format.Float16Type)
	return ok && s.phys(n) == format.FixedLenByteArray && s.typeLen(n) == 2
}

// unsignedWidth returns the bit width of an unsigned integer column, or 0.
func (s *Schema) unsignedWidth(n *pq.Column) int {
	if t, ok := s.logical(n).(*format.IntType); ok && !t.IsSigned {
		return int(t.BitWidth)
	}
	if c, ok := s.conv(n); ok {
		switch c {
		case deprecated.Uint8:
			return 8
		case deprecated.Uint16:
			return 16
		case deprecated.Uint32:
			return 32
		case deprecated.Uint64:
			return 64
		}
	}
	return 0
}

// julianUnixEpoch is the Julian day number of 1970-01-01.
const julianUnixEpoch = 2440588

// int96Nanos converts an INT96 timestamp (nanoseconds of the day, then the Julian day) to
// nanoseconds since the Unix epoch.
func int96Nanos(b []byte) (int64, error) {
	nanos := int64(binary.LittleEndian.Uint64(b[:8]))
	day := int64(int32(binary.LittleEndian.Uint32(b[8:12])))
	d := day - julianUnixEpoch
	const perDay int64 = 86400 * 1e9
	if d > math.MaxInt64/perDay || d < math.MinInt64/perDay {
		return 0, fmt.Errorf("%w: INT96 time (Julian day %d) is out of the int64 nanosecond range", ErrValue, day)
	}
	v := d * perDay
	if (nanos > 0 && v > math.MaxInt64-nanos) || (nanos < 0 && v < math.MinInt64-nanos) {
		return 0, fmt.Errorf("%w: INT96 time (Julian day %d) is out of the int64 nanosecond range", ErrValue, day)
	}
	return v + nanos, nil
}

// decimalText formats the unscaled value of a DECIMAL (an integer, or big-endian two's
// complement bytes) with its scale: "-12.345".
func decimalText(unscaled *big.Int, scale int) string {
	s := unscaled.String()
	if scale <= 0 {
		return s
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	for len(s) <= scale {
		s = "0" + s
	}
	s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	if neg {
		s = "-" + s
	}
	return s
}

func bigFromBytes(b []byte) *big.Int {
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}

// half converts IEEE 754 binary16 bits to a float64.
func half(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * frac * math.Pow(2, -24)
	case 31:
		if frac == 0 {
			return sign * math.Inf(1)
		}
		return math.NaN()
	}
	return sign * (1 + frac/1024) * math.Pow(2, float64(exp-15))
}

// scalar converts a defined leaf value to a sample value: BOOLEAN and integers → KindInt
// (INT96 as nanoseconds since the Unix epoch), FLOAT, DOUBLE and FLOAT16 → KindFloat,
// DECIMAL → KindString (exact decimal text), STRING/ENUM → KindString, JSON → KindJSON,
// other byte arrays → KindBytes. Bytes alias arena.
func (s *Schema) scalar(n *pq.Column, e *entry, arena []byte) (sample.Value, error) {
	b := e.bytesOf(arena)
	if scale, ok := s.decimalScale(n); ok {
		var v *big.Int
		switch s.phys(n) {
		case format.Int32, format.Int64:
			v = big.NewInt(int64(e.bits))
		case format.ByteArray, format.FixedLenByteArray:
			v = bigFromBytes(b)
		default:
			return sample.Value{}, fmt.Errorf("%w: DECIMAL on %s", ErrValue, s.phys(n))
		}
		return sample.Value{Kind: sample.KindString, Bytes: []byte(decimalText(v, scale))}, nil
	}
	switch s.phys(n) {
	case format.Boolean:
		return sample.Value{Kind: sample.KindInt, Int: int64(e.bits)}, nil
	case format.Int32:
		v := int64(e.bits)
		if s.unsignedWidth(n) > 0 {
			v = int64(uint32(e.bits))
		}
		return sample.Value{Kind: sample.KindInt, Int: v}, nil
	case format.Int64:
		if s.unsignedWidth(n) == 64 && int64(e.bits) < 0 {
			return sample.Value{}, fmt.Errorf("%w: unsigned value %d does not fit an int64", ErrValue, e.bits)
		}
		return sample.Value{Kind: sample.KindInt, Int: int64(e.bits)}, nil
	case format.Int96:
		v, err := int96Nanos(b)
		return sample.Value{Kind: sample.KindInt, Int: v}, err
	case format.Float:
		return sample.Value{Kind: sample.KindFloat, Float: float64(math.Float32frombits(uint32(e.bits)))}, nil
	case format.Double:
		return sample.Value{Kind: sample.KindFloat, Float: math.Float64frombits(e.bits)}, nil
	}
	if s.isFloat16(n) {
		return sample.Value{Kind: sample.KindFloat, Float: half(binary.LittleEndian.Uint16(b))}, nil
	}
	switch {
	case s.isJSONNode(n):
		return sample.Value{Kind: sample.KindJSON, Bytes: b}, nil
	case s.isStringNode(n):
		return sample.Value{Kind: sample.KindString, Bytes: b}, nil
	}
	return sample.Value{Kind: sample.KindBytes, Bytes: b}, nil
}

// appendJSONScalar appends a defined leaf value as JSON: numbers as numbers (NaN and
// infinities as null), text as strings, JSON columns as they are, other bytes as base64.
func (s *Schema) appendJSONScalar(out []byte, n *pq.Column, e *entry, arena []byte) ([]byte, error) {
	v, err := s.scalar(n, e, arena)
	if err != nil {
		return out, err
	}
	if _, ok := s.decimalScale(n); ok {
		return append(out, v.Bytes...), nil
	}
	switch v.Kind {
	case sample.KindInt:
		if s.phys(n) == format.Boolean {
			return strconv.AppendBool(out, v.Int != 0), nil
		}
		if s.phys(n) == format.Int64 && s.unsignedWidth(n) == 64 {
			return strconv.AppendUint(out, e.bits, 10), nil
		}
		return strconv.AppendInt(out, v.Int, 10), nil
	case sample.KindFloat:
		if math.IsNaN(v.Float) || math.IsInf(v.Float, 0) {
			return append(out, "null"...), nil
		}
		bits := 64
		if s.phys(n) == format.Float {
			bits = 32
		}
		return strconv.AppendFloat(out, v.Float, 'g', -1, bits), nil
	case sample.KindJSON:
		if validJSON(v.Bytes) {
			return append(out, v.Bytes...), nil
		}
		return appendJSONString(out, v.Bytes), nil
	case sample.KindString:
		return appendJSONString(out, v.Bytes), nil
	}
	out = append(out, '"')
	out = base64.StdEncoding.AppendEncode(out, v.Bytes)
	return append(out, '"'), nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendJSONString(out, s []byte) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				out = append(out, '\\', c)
			case c == '\n':
				out = append(out, '\\', 'n')
			case c == '\r':
				out = append(out, '\\', 'r')
			case c == '\t':
				out = append(out, '\\', 't')
			case c < 0x20:
				out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				out = append(out, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, `\ufffd`...)
		} else {
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	return append(out, '"')
}
