// Package sample defines the unit that flows from a source to the field encoders: one sample's
// values by column name, plus where it came from. It holds no I/O beyond loading a file value.
package sample

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/internal/quote"
)

// Kind says which member of a Value is set.
type Kind uint8

// Value kinds.
const (
	KindNone   Kind = iota
	KindBytes       // Bytes holds the value's encoded bytes (an image file, a tar member, text)
	KindFile        // Path names a file to read; the encoder worker reads it (parallel I/O)
	KindInt         // Int
	KindFloat       // Float
	KindString      // Bytes holds UTF-8 text
	KindJSON        // Bytes holds one compact JSON value
)

// Value is one column of a sample. Exactly the members its Kind names are meaningful. Bytes
// are read-only once the sample is emitted: a source never changes or reuses them, so a field
// may return them as its payload without a copy (and a source may let many values share one
// buffer).
type Value struct {
	Kind Kind
	// UTF8 marks Bytes as checked to be valid UTF-8 by the source that set them (a JSONL
	// source validates every line), so that a text field need not check them again. The
	// zero value, false, means unknown: a field must validate. Only KindString and KindBytes
	// values may carry it.
	UTF8  bool
	Bytes []byte
	Path  string
	Int   int64
	Float float64
	// Name is the member or file name the value came from (its extension tells the format).
	Name string
	// Offset and Duration select a segment of an audio file, in seconds; Duration 0 means
	// to the end.
	Offset, Duration float64
}

// Load returns the value's bytes: Bytes for in-memory kinds, the file's contents for KindFile.
// A KindFile path must name a regular file (symbolic links followed): a named pipe, a device
// or a directory is an error wrapping inputfile.ErrNotRegular, returned without blocking.
func (v Value) Load() ([]byte, error) {
	switch v.Kind {
	case KindFile:
		b, err := inputfile.ReadFile(v.Path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", quote.S(v.Path), err)
		}
		return b, nil
	case KindBytes, KindString, KindJSON:
		return v.Bytes, nil
	}
	return nil, fmt.Errorf("value of kind %d has no bytes", v.Kind)
}

// Sample is one input record: its values by column name and where it came from.
type Sample struct {
	// Index is the sample's position in the source's deterministic order (before any skips).
	Index int64
	// Key identifies the sample within its source (relative path, tar key, line number).
	Key string
	// Origin names it for errors and the rejects file: a file path, "shard.tar:member",
	// "corpus.jsonl:123".
	Origin string
	// Values are the sample's columns, in the order the source produced them; the recipe maps
	// columns to fields. A small slice, not a map: sources build it without hashing, and a
	// chunk's samples can share one backing array.
	Values []Column
	// InputBytes is how many input bytes the sample accounts for (file sizes), for reports.
	InputBytes int64
	// Err, when set, means the source could not produce this sample (a malformed line, an
	// unreadable member); the pipeline applies the error policy to it.
	Err error
}

// Column is one named value of a sample.
type Column struct {
	Name  string
	Value Value
}

// Get returns the value of the column named name.
func (s *Sample) Get(name string) (Value, bool) {
	for i := range s.Values {
		if s.Values[i].Name == name {
			return s.Values[i].Value, true
		}
	}
	return Value{}, false
}

// Find returns the index of the column named name, or -1, looking at column hint first. A
// caller that looks up many columns in the order a source emits them passes the index after
// the last one found, so that finding every column of a wide sample takes time linear in
// its columns, not quadratic.
func (s *Sample) Find(name string, hint int) int {
	if hint >= 0 && hint < len(s.Values) && s.Values[hint].Name == name {
		return hint
	}
	for i := range s.Values {
		if s.Values[i].Name == name {
			return i
		}
	}
	return -1
}

// Value returns the value of the column named name, or the zero Value (KindNone).
func (s *Sample) Value(name string) Value {
	v, _ := s.Get(name)
	return v
}

// Has reports whether the sample has a column named name.
func (s *Sample) Has(name string) bool {
	_, ok := s.Get(name)
	return ok
}

// Set sets the column named name to v, replacing an existing value or appending a column.
func (s *Sample) Set(name string, v Value) {
	for i := range s.Values {
		if s.Values[i].Name == name {
			s.Values[i].Value = v
			return
		}
	}
	s.Values = append(s.Values, Column{Name: name, Value: v})
}

// ColumnsOf returns m's columns sorted by name: a convenience for tests and callers that
// build a few samples by hand (sources build their slices directly).
func ColumnsOf(m map[string]Value) []Column {
	cols := make([]Column, 0, len(m))
	for name, v := range m {
		cols = append(cols, Column{Name: name, Value: v})
	}
	slices.SortFunc(cols, func(a, b Column) int { return strings.Compare(a.Name, b.Name) })
	return cols
}
