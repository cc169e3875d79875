package mldf

import (
	"errors"
	"fmt"
	"strings"
)

// Errors returned by the reader. Every error the package returns wraps one of them (test with
// errors.Is) and names the file, and where it applies the sample, field or allocation entry.
var (
	// ErrCorrupt: a structural rule of docs/FORMAT.md §10 does not hold.
	ErrCorrupt = errors.New("mldf: corrupt file")
	// ErrChecksum: a payload's CRC-32C or the header's xxhash64 does not match (rules V1, V6).
	ErrChecksum = errors.New("mldf: checksum mismatch")
	// ErrUnsupported: the file uses a feature this reader does not implement (compression,
	// encryption).
	ErrUnsupported = errors.New("mldf: unsupported feature")
	// ErrOutOfRange: a sample, field or entry index outside the file.
	ErrOutOfRange = errors.New("mldf: index out of range")
	// ErrFieldType: a typed accessor called on a field of another type.
	ErrFieldType = errors.New("mldf: wrong field type")
	// ErrClosed: the Reader was closed.
	ErrClosed = errors.New("mldf: reader closed")
)

// RuleError reports a violated rule of docs/FORMAT.md §10. Err is one of the package's
// error values; Cause, when set, is the underlying manifest error.
type RuleError struct {
	File   string
	Rule   string // "R1".."R14" (Open and access), "V1".."V8" (Verify, class names), "F1".."F11"
	Sample int    // sample index, or -1
	Field  int    // field index, or -1
	Name   string // field name when Field >= 0
	Entry  int    // allocation entry index, or -1
	Err    error
	Cause  error
	Msg    string
}

// Error formats the error as "FILE: sample S, field F "name": ERR: MSG (rule R)".
func (e *RuleError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	var where []string
	if e.Sample >= 0 {
		where = append(where, fmt.Sprintf("sample %d", e.Sample))
	}
	if e.Field >= 0 {
		where = append(where, fmt.Sprintf("field %d %q", e.Field, e.Name))
	}
	if e.Entry >= 0 {
		where = append(where, fmt.Sprintf("allocation entry %d", e.Entry))
	}
	if len(where) > 0 {
		b.WriteString(": ")
		b.WriteString(strings.Join(where, ", "))
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	if e.Cause != nil {
		b.WriteString(": ")
		b.WriteString(e.Cause.Error())
	}
	if e.Rule != "" {
		b.WriteString(" (FORMAT.md rule ")
		b.WriteString(e.Rule)
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns Err and Cause, so errors.Is matches either.
func (e *RuleError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

// ruleErr builds a RuleError about the whole file.
func (r *Reader) ruleErr(rule string, err error, format string, args ...any) *RuleError {
	return &RuleError{File: r.name, Rule: rule, Sample: -1, Field: -1, Entry: -1, Err: err,
		Msg: fmt.Sprintf(format, args...)}
}

// at returns e with its sample and field set.
func (r *Reader) at(e *RuleError, sample, field int) *RuleError {
	e.Sample = sample
	if field >= 0 && field < len(r.fields) {
		e.Field = field
		e.Name = r.fields[field].Name
	}
	return e
}
