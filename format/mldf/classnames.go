package mldf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/internal/quote"
)

// Argument layout of an INT field (docs/fields/int.md). All zero: a plain integer.
const (
	IntArgsVersion    = 1 // argument byte 0
	IntKindClassLabel = 1 // argument byte 1: the values index a list of class names
)

// Limits of class names (docs/FORMAT.md §14). A writer refuses names past them; a reader
// rejects a class-names block past them (rule V8).
const (
	// MaxClasses is the most class names a field may have.
	MaxClasses = 1 << 24
	// MaxClassNameLen is the longest class name, in bytes of UTF-8.
	MaxClassNameLen = 1024
	// MaxClassNamesBlock is the largest class-names block, in bytes.
	MaxClassNamesBlock = 64 << 20
)

// ErrClassNames means class names that break the limits of docs/FORMAT.md §14, or a
// class-names block whose bytes do not hold the names the field's arguments describe.
var ErrClassNames = errors.New("mldf: invalid class names")

// ClassLabelArgs are the arguments of a class-label INT field: kind 1 of layout version 1.
type ClassLabelArgs struct {
	NumClasses uint32 // @4
	NamesHash  uint64 // @8: xxhash64 (seed 0) of ClassNamesJSON(names)
	// NamesPtr and NamesSize (@16, @24; minor version 1) locate the class-names block in the
	// gap between the field descriptors and the data region; both zero: the names are not in
	// the file.
	NamesPtr  uint64
	NamesSize uint32
}

// ParseClassLabelArgs reads the arguments of an INT field; ok is false when the field is not
// a class label. NamesPtr and NamesSize are read whatever the file's minor version: a reader
// honours them only in files of minor version 1 or later (in a 1.0 file those bytes are
// reserved).
func ParseClassLabelArgs(a [ArgumentsSize]byte) (c ClassLabelArgs, ok bool) {
	if a[0] != IntArgsVersion || a[1] != IntKindClassLabel {
		return c, false
	}
	return ClassLabelArgs{
		NumClasses: binary.LittleEndian.Uint32(a[4:]),
		NamesHash:  binary.LittleEndian.Uint64(a[8:]),
		NamesPtr:   binary.LittleEndian.Uint64(a[16:]),
		NamesSize:  binary.LittleEndian.Uint32(a[24:]),
	}, true
}

// Put writes c into a as class-label arguments (version 1, kind 1), clearing every other
// byte.
func (c ClassLabelArgs) Put(a *[ArgumentsSize]byte) {
	clear(a[:])
	a[0], a[1] = IntArgsVersion, IntKindClassLabel
	binary.LittleEndian.PutUint32(a[4:], c.NumClasses)
	binary.LittleEndian.PutUint64(a[8:], c.NamesHash)
	binary.LittleEndian.PutUint64(a[16:], c.NamesPtr)
	binary.LittleEndian.PutUint32(a[24:], c.NamesSize)
}

// ClassNamesJSON is the canonical form of a list of class names, the bytes of a class-names
// block and of the names hash: a compact JSON array of strings as encoding/json writes it
// (no spaces; <, >, &, U+2028 and U+2029 escaped as \u003c, \u003e, \u0026, \u2028, \u2029).
// Names must be valid UTF-8 (CheckClassNames) for the form to be exact.
func ClassNamesJSON(names []string) []byte {
	if names == nil {
		names = []string{}
	}
	b, _ := json.Marshal(names)
	return b
}

// ClassNamesHash returns the names hash of the arguments: xxhash64 of ClassNamesJSON(names).
func ClassNamesHash(names []string) uint64 { return xxhash.Sum64(ClassNamesJSON(names)) }

// CheckClassNames reports whether names may be written: 1 to MaxClasses names, each 1 to
// MaxClassNameLen bytes of valid UTF-8, no two equal, the whole canonical form at most
// MaxClassNamesBlock bytes. The error names the first offending name, quoted and bounded.
func CheckClassNames(names []string) error {
	if len(names) == 0 || len(names) > MaxClasses {
		return fmt.Errorf("%w: %d names (1 to %d)", ErrClassNames, len(names), MaxClasses)
	}
	seen := make(map[string]int, len(names))
	size := 2
	for i, n := range names {
		switch {
		case n == "":
			return fmt.Errorf("%w: name %d is empty", ErrClassNames, i)
		case len(n) > MaxClassNameLen:
			return fmt.Errorf("%w: name %d (%s) is %d bytes (at most %d)", ErrClassNames, i, quote.Q(n), len(n), MaxClassNameLen)
		case !utf8.ValidString(n):
			return fmt.Errorf("%w: name %d (%s) is not UTF-8", ErrClassNames, i, quote.Q(n))
		}
		if j, dup := seen[n]; dup {
			return fmt.Errorf("%w: names %d and %d are both %s", ErrClassNames, j, i, quote.Q(n))
		}
		seen[n] = i
		size += len(n) + 3 // quotes and comma, before escapes
	}
	if size > MaxClassNamesBlock {
		return fmt.Errorf("%w: %d names take more than %d bytes", ErrClassNames, len(names), MaxClassNamesBlock)
	}
	if b := ClassNamesJSON(names); len(b) > MaxClassNamesBlock {
		return fmt.Errorf("%w: %d names take %d bytes (at most %d)", ErrClassNames, len(names), len(b), MaxClassNamesBlock)
	}
	return nil
}

// DecodeClassNames checks a class-names block against the field's arguments and returns its
// names (rule V8 of docs/FORMAT.md): its xxhash64 is the names hash, it is the canonical JSON
// (ClassNamesJSON) of a list of NumClasses names that CheckClassNames accepts.
func DecodeClassNames(block []byte, c ClassLabelArgs) ([]string, error) {
	if got := xxhash.Sum64(block); got != c.NamesHash {
		return nil, fmt.Errorf("%w: the %d-byte block hashes to %016x, the arguments say %016x", ErrClassNames, len(block), got, c.NamesHash)
	}
	if !utf8.Valid(block) {
		return nil, fmt.Errorf("%w: the block is not UTF-8", ErrClassNames)
	}
	if len(block) < 2 || block[0] != '[' {
		return nil, fmt.Errorf("%w: the block is not a JSON array", ErrClassNames)
	}
	var names []string
	if err := json.Unmarshal(block, &names); err != nil {
		return nil, fmt.Errorf("%w: the block is not a JSON array of strings: %w", ErrClassNames, err)
	}
	if uint64(len(names)) != uint64(c.NumClasses) {
		return nil, fmt.Errorf("%w: the block holds %d names, the arguments say %d classes", ErrClassNames, len(names), c.NumClasses)
	}
	if err := CheckClassNames(names); err != nil {
		return nil, err
	}
	if !bytes.Equal(ClassNamesJSON(names), block) {
		return nil, fmt.Errorf("%w: the block is not in canonical form (compact JSON as FORMAT.md §14 gives it)", ErrClassNames)
	}
	return names, nil
}
