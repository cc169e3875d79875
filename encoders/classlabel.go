package encoders

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/sample"
)

// Argument layout of an INT field (docs/fields/int.md). All zero: a plain integer.
const (
	IntArgsVersion = mldf.IntArgsVersion    // byte 0
	IntClassLabel  = mldf.IntKindClassLabel // byte 1: the values index a list of class names
)

// ClassLabel is an INT field whose values index a list of class names (a Hugging Face
// ClassLabel, the class folders of an ImageFolder): -1 (no label) to len(names)-1. Its
// arguments record the number of classes and the xxhash64 of ClassNamesJSON(names); the
// writer stores the names themselves in the file, in a class-names block (docs/FORMAT.md
// §14), when the field's descriptor (Descriptor) reaches it.
//
// A value may also be given as a class name (a WebDataset .cls member holding "dog", an h5ad
// category): it is stored as that name's index. A decimal integer is read as the index
// itself, and empty text (a missing category) as -1.
type ClassLabel struct {
	Int
	names []string
	index map[string]int
	sum   uint64
}

// NewClassLabel returns an INT field called name whose values are indexes into names. The
// names must pass manifest.CheckClassNames (1 to 2^24 distinct names of 1 to 1024 bytes of
// UTF-8).
func NewClassLabel(name string, names []string) (*ClassLabel, error) {
	f, err := NewInt(name)
	if err != nil {
		return nil, err
	}
	if err := mldf.CheckClassNames(names); err != nil {
		return nil, fmt.Errorf("field %q: %w: %w", name, ErrInvalid, err)
	}
	c := &ClassLabel{Int: *f, names: append([]string(nil), names...), sum: mldf.ClassNamesHash(names),
		index: make(map[string]int, len(names))}
	for i, n := range names {
		c.index[n] = i
	}
	return c, nil
}

// ClassNamesJSON is the canonical form of a list of class names: a compact JSON array
// (manifest.ClassNamesJSON).
func ClassNamesJSON(names []string) []byte { return mldf.ClassNamesJSON(names) }

// Names returns the class names, label i being Names()[i].
func (f *ClassLabel) Names() []string { return append([]string(nil), f.names...) }

// Arguments implements Field: @0 version u8 = 1, @1 kind u8 = 1 (class label), @4 u32
// number of classes, @8 u64 xxhash64 of ClassNamesJSON(names); the rest zero (the writer
// fills the block's place, @16 and @24, when it writes the names).
func (f *ClassLabel) Arguments() (a [mldf.ArgumentsSize]byte) {
	mldf.ClassLabelArgs{NumClasses: uint32(len(f.names)), NamesHash: f.sum}.Put(&a)
	return a
}

// Encode implements Field: an INT value that must be -1 or a class index; text that is not
// a decimal integer is looked up among the class names.
func (f *ClassLabel) Encode(v sample.Value, meta []byte) ([]byte, error) {
	if v.Kind == sample.KindBytes || v.Kind == sample.KindString || v.Kind == sample.KindFile {
		b, err := v.Load()
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.name, err)
		}
		s := strings.TrimSpace(string(b))
		if s == "" { // a missing category (an h5ad categorical's NaN): no label
			mldf.PutInt(meta, -1)
			return nil, nil
		}
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			k, ok := f.index[s]
			if !ok {
				return nil, fmt.Errorf("field %q: %w: %s is neither a class index nor one of the %d class names", f.name, ErrInvalid, quote.Q(s), len(f.names))
			}
			mldf.PutInt(meta, int64(k))
			return nil, nil
		}
	}
	if _, err := f.Int.Encode(v, meta); err != nil {
		return nil, err
	}
	if n := mldf.GetInt(meta); n < -1 || n >= int64(len(f.names)) {
		return nil, fmt.Errorf("field %q: %w: class %d is not in 0..%d (or -1 for none)", f.name, ErrInvalid, n, len(f.names)-1)
	}
	return nil, nil
}

// ParseClassLabel reads the arguments of an INT field: the number of classes and the hash of
// their names, and whether the field is a class label at all.
func ParseClassLabel(a [mldf.ArgumentsSize]byte) (count uint32, sum uint64, ok bool) {
	c, ok := mldf.ParseClassLabelArgs(a)
	return c.NumClasses, c.NamesHash, ok
}

// CheckClassNames reports whether names are the ones an INT field's arguments describe.
func CheckClassNames(a [mldf.ArgumentsSize]byte, names []string) error {
	count, sum, ok := ParseClassLabel(a)
	switch {
	case !ok:
		return fmt.Errorf("%w: the field is not a class label", ErrInvalid)
	case int(count) != len(names) || mldf.ClassNamesHash(names) != sum:
		return fmt.Errorf("%w: the class names (%d) do not match the field's arguments (%d classes, hash %016x)", ErrInvalid, len(names), count, sum)
	}
	return nil
}
