// Package sample defines the unit that flows from a source to the field encoders: one sample's
// values by column name, plus where it came from. It holds no I/O beyond loading a file value.
package sample

import (
	"fmt"
	"os"
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

// Value is one column of a sample. Exactly the members its Kind names are meaningful.
type Value struct {
	Kind  Kind
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
func (v Value) Load() ([]byte, error) {
	switch v.Kind {
	case KindFile:
		b, err := os.ReadFile(v.Path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", v.Path, err)
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
	// Values by column name; the recipe maps columns to fields.
	Values map[string]Value
	// InputBytes is how many input bytes the sample accounts for (file sizes), for reports.
	InputBytes int64
	// Err, when set, means the source could not produce this sample (a malformed line, an
	// unreadable member); the pipeline applies the error policy to it.
	Err error
}
