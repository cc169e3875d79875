package encoders

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/manifest"
	"github.com/mldf/convert/sample"
)

// Argument layout of an INT field (docs/fields/int.md). All zero: a plain integer.
const (
	IntArgsVersion = 1 // byte 0
	IntClassLabel  = 1 // byte 1: the values index a list of class names
)

// ClassLabel is an INT field whose values index a list of class names (a Hugging Face
// ClassLabel): -1 (no label) to len(names)-1. Its arguments record the number of classes and
// the xxhash64 of ClassNamesJSON(names); the names themselves are kept beside the output
// file (OUTPUT.classes.json), where a reader finds them and checks them against the hash.
type ClassLabel struct {
	Int
	names []string
	sum   uint64
}

// NewClassLabel returns an INT field called name whose values are indexes into names.
func NewClassLabel(name string, names []string) (*ClassLabel, error) {
	f, err := NewInt(name)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 || len(names) > 1<<31-1 {
		return nil, fmt.Errorf("field %q: %w: %d class names", name, ErrInvalid, len(names))
	}
	return &ClassLabel{Int: *f, names: append([]string(nil), names...), sum: xxhash.Sum64(ClassNamesJSON(names))}, nil
}

// ClassNamesJSON is the canonical form of a list of class names: a compact JSON array.
func ClassNamesJSON(names []string) []byte {
	b, _ := json.Marshal(names)
	return b
}

// Names returns the class names, label i being Names()[i].
func (f *ClassLabel) Names() []string { return append([]string(nil), f.names...) }

// Arguments implements Field: @0 version u8 = 1, @1 kind u8 = 1 (class label), @4 u32
// number of classes, @8 u64 xxhash64 of ClassNamesJSON(names); the rest zero.
func (f *ClassLabel) Arguments() (a [manifest.ArgumentsSize]byte) {
	a[0], a[1] = IntArgsVersion, IntClassLabel
	binary.LittleEndian.PutUint32(a[4:], uint32(len(f.names)))
	binary.LittleEndian.PutUint64(a[8:], f.sum)
	return a
}

// Encode implements Field: an INT value that must be -1 or a class index.
func (f *ClassLabel) Encode(v sample.Value, meta []byte) ([]byte, error) {
	if _, err := f.Int.Encode(v, meta); err != nil {
		return nil, err
	}
	if n := manifest.GetInt(meta); n < -1 || n >= int64(len(f.names)) {
		return nil, fmt.Errorf("field %q: %w: class %d is not in 0..%d (or -1 for none)", f.name, ErrInvalid, n, len(f.names)-1)
	}
	return nil, nil
}

// ParseClassLabel reads the arguments of an INT field: the number of classes and the hash of
// their names, and whether the field is a class label at all.
func ParseClassLabel(a [manifest.ArgumentsSize]byte) (count uint32, sum uint64, ok bool) {
	if a[0] != IntArgsVersion || a[1] != IntClassLabel {
		return 0, 0, false
	}
	return binary.LittleEndian.Uint32(a[4:]), binary.LittleEndian.Uint64(a[8:]), true
}

// CheckClassNames reports whether names are the ones an INT field's arguments describe.
func CheckClassNames(a [manifest.ArgumentsSize]byte, names []string) error {
	count, sum, ok := ParseClassLabel(a)
	switch {
	case !ok:
		return fmt.Errorf("%w: the field is not a class label", ErrInvalid)
	case int(count) != len(names) || xxhash.Sum64(ClassNamesJSON(names)) != sum:
		return fmt.Errorf("%w: the class names (%d) do not match the field's arguments (%d classes, hash %016x)", ErrInvalid, len(names), count, sum)
	}
	return nil
}
