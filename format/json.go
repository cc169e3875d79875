package format

import "github.com/mldf/convert/internal/jsonout"

// The JSON shapes every format's documents share (docs/schema): each format's describe_json.go
// embeds them first in its own output structs, which add only what the format has of its own.
// An embedded struct's keys are encoded in place, in order, so a document reads as if its
// struct had declared them.

// DocJSON opens every document a File's Text encodes (inspect, inspect --sample, verify):
// the schema version and kind, then the format's name and the file (or folder) read.
type DocJSON struct {
	jsonout.Head
	Format string `json:"format"`
	File   string `json:"file"`
}

// NewDocJSON returns the opening of a document of kind (jsonout.KindInspect, KindSample,
// KindVerify) about file, of the format named name.
func NewDocJSON(kind, name, file string) DocJSON {
	return DocJSON{Head: jsonout.NewHead(kind), Format: name, File: file}
}

// FieldJSON opens a field's entry in the description of a format with typed fields (MLDF,
// .beton): its index, name, type and the type's number in the file.
type FieldJSON struct {
	Index  int    `json:"index"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	TypeID uint16 `json:"type_id"`
}

// ValueJSON opens one field's value in a sample of a format with typed fields (MLDF,
// .beton): the field's index, name and type, and the number of an integer or float field
// (absent for the other types, whose members the format adds).
type ValueJSON struct {
	Field int            `json:"field"`
	Name  string         `json:"name"`
	Type  string         `json:"type"`
	Int   *jsonout.I64   `json:"int,omitempty"`
	Float *jsonout.Float `json:"float,omitempty"`
}

// NewValueJSON returns the opening of a value of field (its index), without a number: WithInt
// and WithFloat add one.
func NewValueJSON(field int, name, typ string) ValueJSON {
	return ValueJSON{Field: field, Name: name, Type: typ}
}

// WithInt returns v holding the integer x.
func (v ValueJSON) WithInt(x int64) ValueJSON {
	i := jsonout.I64(x)
	v.Int = &i
	return v
}

// WithFloat returns v holding the float x (NaN and the infinities as jsonout.Float encodes
// them).
func (v ValueJSON) WithFloat(x float64) ValueJSON {
	f := jsonout.Float(x)
	v.Float = &f
	return v
}
