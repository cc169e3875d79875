package parquet

import (
	"errors"
	"fmt"

	"github.com/mldf/convert/internal/pqfile"
)

// Errors. Each is wrapped with the file and, where it applies, the row group, row and column.
var (
	// ErrNoFiles means an input pattern matched nothing, or no input was given.
	ErrNoFiles = errors.New("parquet: no input files")
	// ErrCorrupt means the file is not valid Parquet: a truncated file, a bad footer, a page
	// that does not decode or fails its checksum, levels that contradict the schema.
	ErrCorrupt = pqfile.ErrCorrupt
	// ErrUnsupported means valid Parquet that this reader does not read (encryption, a
	// deprecated codec, a column type with no sample value); the message names the feature.
	ErrUnsupported = pqfile.ErrUnsupported
	// ErrColumn means a configured column is not in the file's schema, or cannot be read as
	// asked (a list of strings as an array of numbers).
	ErrColumn = errors.New("parquet: unusable column")
	// ErrValue means one row's value cannot become a sample value (an INT96 time out of
	// range, a ragged array); it is a per-sample error.
	ErrValue = errors.New("parquet: value cannot be converted")
)

// RowError is a per-row problem: the sample is reported through Sample.Err and the error
// policy decides.
type RowError struct {
	File     string
	RowGroup int
	Row      int64 // row number within the file, from 0
	Column   string
	Err      error
}

func (e *RowError) Error() string {
	return fmt.Sprintf("%s: row group %d, row %d, column %q: %v", e.File, e.RowGroup, e.Row, e.Column, e.Err)
}

func (e *RowError) Unwrap() error { return e.Err }
