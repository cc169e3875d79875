package encoders

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
)

// Errors returned by the scalar and blob fields.
var (
	ErrKind    = errors.New("value has the wrong kind for this field")
	ErrParse   = errors.New("value does not parse")
	ErrInvalid = errors.New("invalid value")
)

type base struct {
	name string
	typ  mldf.TypeID
}

func (b base) Name() string                            { return b.name }
func (b base) Type() mldf.TypeID                       { return b.typ }
func (b base) Arguments() (a [mldf.ArgumentsSize]byte) { return a }

func newBase(name string, t mldf.TypeID) (base, error) {
	if err := mldf.ValidateName(name); err != nil {
		return base{}, err
	}
	return base{name: name, typ: t}, nil
}

// Int is an INT field: a signed 64-bit value stored in the metadata row, no payload. It accepts
// integers, integral floats, and decimal text (a WebDataset ".cls" member such as "3\n").
type Int struct{ base }

// NewInt returns an INT field called name.
func NewInt(name string) (*Int, error) {
	b, err := newBase(name, mldf.TypeInt)
	return &Int{b}, err
}

// Encode implements Field.
func (f *Int) Encode(v sample.Value, meta []byte) ([]byte, error) {
	var n int64
	switch v.Kind {
	case sample.KindInt:
		n = v.Int
	case sample.KindFloat:
		if v.Float != math.Trunc(v.Float) || math.Abs(v.Float) >= 1<<63 {
			return nil, fmt.Errorf("field %q: %w: %v is not an integer", f.name, ErrParse, v.Float)
		}
		n = int64(v.Float)
	case sample.KindBytes, sample.KindString, sample.KindFile:
		b, err := v.Load()
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.name, err)
		}
		s := strings.TrimSpace(string(b))
		n, err = strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w: %q is not a decimal integer", f.name, ErrParse, truncate(s))
		}
	default:
		return nil, fmt.Errorf("field %q: %w (kind %d)", f.name, ErrKind, v.Kind)
	}
	mldf.PutInt(meta, n)
	return nil, nil
}

// Float is a FLOAT field: a 64-bit float stored in the metadata row, no payload.
type Float struct{ base }

// NewFloat returns a FLOAT field called name.
func NewFloat(name string) (*Float, error) {
	b, err := newBase(name, mldf.TypeFloat)
	return &Float{b}, err
}

// Encode implements Field.
func (f *Float) Encode(v sample.Value, meta []byte) ([]byte, error) {
	var x float64
	switch v.Kind {
	case sample.KindFloat:
		x = v.Float
	case sample.KindInt:
		x = float64(v.Int)
	case sample.KindBytes, sample.KindString, sample.KindFile:
		b, err := v.Load()
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.name, err)
		}
		s := strings.TrimSpace(string(b))
		x, err = strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w: %q is not a number", f.name, ErrParse, truncate(s))
		}
	default:
		return nil, fmt.Errorf("field %q: %w (kind %d)", f.name, ErrKind, v.Kind)
	}
	mldf.PutFloat(meta, x)
	return nil, nil
}

// Bytes is a BYTES field: the value's bytes stored verbatim as the payload.
type Bytes struct{ base }

// NewBytes returns a BYTES field called name.
func NewBytes(name string) (*Bytes, error) {
	b, err := newBase(name, mldf.TypeBytes)
	return &Bytes{b}, err
}

// Encode implements Field.
func (f *Bytes) Encode(v sample.Value, meta []byte) ([]byte, error) {
	switch v.Kind {
	case sample.KindInt:
		return []byte(strconv.FormatInt(v.Int, 10)), nil
	case sample.KindFloat:
		return []byte(strconv.FormatFloat(v.Float, 'g', -1, 64)), nil
	}
	b, err := v.Load()
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", f.name, err)
	}
	return b, mldf.CheckPayloadSize(len(b))
}

// JSON is a JSON field: one JSON value stored as compact UTF-8 bytes.
type JSON struct{ base }

// NewJSON returns a JSON field called name.
func NewJSON(name string) (*JSON, error) {
	b, err := newBase(name, mldf.TypeJSON)
	return &JSON{b}, err
}

// Encode implements Field. Text values that are not JSON are stored as JSON strings only when
// the value is KindString; raw bytes must parse as JSON, nested at most manifest.MaxJSONDepth
// deep (a deeper value is an ErrInvalid error for that sample).
func (f *JSON) Encode(v sample.Value, meta []byte) ([]byte, error) {
	switch v.Kind {
	case sample.KindInt:
		return []byte(strconv.FormatInt(v.Int, 10)), nil
	case sample.KindFloat:
		b, err := json.Marshal(v.Float)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w: %v", f.name, ErrInvalid, err)
		}
		return b, nil
	case sample.KindString:
		if !utf8.Valid(v.Bytes) {
			return nil, fmt.Errorf("field %q: %w: text is not UTF-8", f.name, ErrInvalid)
		}
		return json.Marshal(string(v.Bytes))
	}
	raw, err := v.Load()
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", f.name, err)
	}
	if d := mldf.JSONDepth(raw, mldf.MaxJSONDepth); d > mldf.MaxJSONDepth {
		return nil, fmt.Errorf("field %q: %w: JSON nested more than %d levels deep (readers accept at most %d; docs/FORMAT.md rule D3)",
			f.name, ErrInvalid, mldf.MaxJSONDepth, mldf.MaxJSONDepth)
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("field %q: %w: not JSON: %v", f.name, ErrInvalid, err)
	}
	if !utf8.Valid(buf.Bytes()) {
		return nil, fmt.Errorf("field %q: %w: JSON is not UTF-8", f.name, ErrInvalid)
	}
	return buf.Bytes(), mldf.CheckPayloadSize(buf.Len())
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
