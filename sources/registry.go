package sources

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/mldf/convert/internal/cells"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sample"
)

// Source types register themselves, as database/sql drivers and image formats do: each
// source package declares in an init function the recipe name of every type it reads, how
// that type is given its inputs, the options it takes (with their checks) and its
// constructor. A recipe is validated and planned against this table; a program makes the
// types it offers available by importing their packages (blank imports, as for sql drivers).
// The table is written only by init functions and read-only afterwards.

// InputKind says which of source.path and source.inputs a source type takes.
type InputKind uint8

const (
	// ByPath: one folder or manifest file (source.path).
	ByPath InputKind = iota + 1
	// ByInputs: files, globs or brace ranges (source.inputs).
	ByInputs
	// ByPathOrInputs: one path, or several inputs; not both.
	ByPathOrInputs
)

// Spec declares a source type.
type Spec struct {
	// Name is the recipe's source.type ("images", "tar").
	Name string
	// Article goes before the name in messages ("an" for "h5ad"); "" means "an" before a
	// vowel, else "a".
	Article string
	// Inputs says how the type is given its inputs.
	Inputs InputKind
	// InputNoun names one input in the message for a recipe that gives none ("" means
	// "input (file, glob or brace range)").
	InputNoun string
	// Buckets says the type reads objects named by URL (s3://, gs://, az://) as well as
	// local paths.
	Buckets bool
	// Cells says the type reads single-cell matrices: it may write SCDL archives, needs no
	// fields then, and its source is a CellSource.
	Cells bool
	// Records says the samples are records of named values (JSON objects, table rows):
	// packed text may read one of their columns.
	Records bool
	// TypedReads says each column is read once, as the Read.Kind of the first field that
	// reads it (a JSON key): fields reading one column must agree on the kind.
	TypedReads bool
	// Options are the keys under source: the type takes besides type, path and inputs.
	Options []Option
	// KeyColumn is the column a field reads to get each sample's key or path ("path",
	// "__key__"); "" when the type has none.
	KeyColumn string
	// Available, when set, returns why the type cannot be used in this build (a missing
	// library), or nil.
	Available func() error
	// Open opens the source (walking folders, expanding globs) without reading a sample.
	// Exactly one of Open and Table is set.
	Open func(ctx context.Context, cfg Config) (Source, error)
	// Table opens a source whose columns a schema declares (Parquet): the recipe infers its
	// fields from the schema when it gives none, and checks every field's column against it
	// before opening the source.
	Table func(ctx context.Context, cfg Config) (Table, error)
}

// Option is one key under source: a source type takes.
type Option struct {
	// Key is the recipe key ("max_line_bytes").
	Key string
	// Check returns the problem with value v (a bool, an int64 or a string, never the zero
	// value), or "" when it is valid. label is how the message names the key
	// ("source.max_line_bytes").
	Check func(label string, v any) string
}

// Config is what a source type is opened with.
type Config struct {
	// Path is source.path; Inputs are source.inputs.
	Path   string
	Inputs []string
	// Options are the options the recipe sets (zero values left out), by key: a bool, an
	// int64 (sizes and counts) or a string.
	Options map[string]any
	// Reads are the columns the fields read, in field order.
	Reads []Read
	// Store lists and reads the inputs named by URL.
	Store *objstore.Client
}

// Read is the column one field reads, and as what.
type Read struct {
	// From is the column; "a|b" reads the first of a and b a sample has.
	From string
	// Kind is how a value typed in the input (a JSON value) is read for the field.
	Kind sample.Kind
	// Required says a sample without the column is an error.
	Required bool
}

// Bool returns the boolean option key (false when unset).
func (c Config) Bool(key string) bool { v, _ := c.Options[key].(bool); return v }

// Int returns the integer option key (0 when unset).
func (c Config) Int(key string) int64 { v, _ := c.Options[key].(int64); return v }

// String returns the string option key ("" when unset).
func (c Config) String(key string) string { v, _ := c.Options[key].(string); return v }

// Table is a source whose columns a schema declares, before it is opened.
type Table interface {
	// File names the file whose schema is read (the first input).
	File() string
	// Infer maps every column to a field, and returns notes on what it inferred.
	Infer() ([]Inferred, []string, error)
	// Column checks that column from can be read for a field of type fieldType and says
	// how it is read; every column Column accepts is read by Open.
	Column(from, fieldType string) (ColumnInfo, error)
	// Open returns the source over the inputs, reading the columns Column accepted.
	Open() (Source, error)
}

// Inferred is a field a Table inferred from its schema.
type Inferred struct {
	Name, Type, From string
	DType            string
	Shape            []uint64
	// Why says what the inference rests on (a Hugging Face feature, a Parquet type).
	Why string
	// Classes are the class names of a class-label column (label i is Classes[i]).
	Classes []string
}

// ColumnInfo says how a Table reads a column.
type ColumnInfo struct {
	// As is how the column's values are read ("bytes", "json"...): fields reading one
	// column must agree on it.
	As string
	// Type is the column's type in the schema, for notes.
	Type string
	// IDs says the column holds token ids already (a list of integers).
	IDs bool
}

var registry = struct {
	sync.RWMutex
	specs map[string]*Spec
}{specs: map[string]*Spec{}}

// ErrRegister is the panic value of a Register call that declares a type twice or
// without a name or constructor.
var ErrRegister = errors.New("sources: bad registration")

// Register makes a source type available by name. It is meant to be called from an init
// function, and panics when the name is empty or already taken, or when the spec has not
// exactly one of Open and Table.
func Register(s Spec) {
	registry.Lock()
	defer registry.Unlock()
	if s.Name == "" || (s.Open == nil) == (s.Table == nil) || s.Inputs == 0 {
		panic(fmt.Errorf("%w: %q needs a name, an input kind and one of Open, Table", ErrRegister, s.Name))
	}
	if _, dup := registry.specs[s.Name]; dup {
		panic(fmt.Errorf("%w: %q registered twice", ErrRegister, s.Name))
	}
	registry.specs[s.Name] = &s
}

// Lookup returns the spec of a registered source type.
func Lookup(name string) (*Spec, bool) {
	registry.RLock()
	defer registry.RUnlock()
	s, ok := registry.specs[name]
	return s, ok
}

// Types returns the names of the registered source types: those of this module in the order
// of the documentation, then any other by name.
func Types() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.specs))
	for n := range registry.specs {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := orderOf(names[i]), orderOf(names[j])
		if a != b {
			return a < b
		}
		return names[i] < names[j]
	})
	return names
}

// typeOrder is the order in which messages list the source types of this module.
var typeOrder = []string{"images", "audio_folder", "librispeech", "nemo_manifest", "tar", "jsonl", "parquet", "h5ad", "mtx10x", "scdl"}

func orderOf(name string) int {
	if i := slices.Index(typeOrder, name); i >= 0 {
		return i
	}
	return len(typeOrder)
}

// Takes reports whether the spec declares the option key.
func (s *Spec) Takes(key string) bool {
	return slices.ContainsFunc(s.Options, func(o Option) bool { return o.Key == key })
}

// Option returns the spec's option key.
func (s *Spec) Option(key string) (Option, bool) {
	for _, o := range s.Options {
		if o.Key == key {
			return o, true
		}
	}
	return Option{}, false
}

// CellSource is the source of a Cells type: besides the samples (one per cell), it gives
// the matrices themselves, which an SCDL archive is written from.
type CellSource interface {
	Sharder
	// Matrices returns the inputs' matrices and their sizes in bytes, in order.
	Matrices() (inputs []cells.Input, sizes []int64)
	// ClassNames returns the categories of a categorical obs column (label i is names[i]),
	// or nil when column is not one.
	ClassNames(column string) []string
	// Close closes the matrices.
	Close() error
}

// InputsError is an error of a source's inputs as the recipe gives them (a pattern that
// matches nothing): a problem of the recipe's source.inputs.
type InputsError struct{ Err error }

func (e InputsError) Error() string { return "source.inputs: " + e.Err.Error() }
func (e InputsError) Unwrap() error { return e.Err }
