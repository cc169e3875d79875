package encoders

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/sample"
)

// Field types register themselves, as source types do (sources.Register): each encoder
// package declares in an init function the recipe name of every field type it encodes, the
// option keys the type takes, their defaults and checks, and its constructor. A recipe is
// validated and built against this table; a program makes the types it offers available by
// importing their packages. The table is written only by init functions.

// FieldSpec declares a field type.
type FieldSpec struct {
	// Type is the recipe's field type ("image").
	Type string
	// Keys are the option keys the type takes, besides name, type, from and required.
	Keys []string
	// Read says how a value typed in the input (a JSON value) is read for the field; nil
	// means as a string.
	Read func(o *Options) sample.Kind
	// Defaults, when set, fills in the default of every option left unset.
	Defaults func(o *Options)
	// Check, when set, reports every problem of the options of field name (defaults filled
	// in) to c.
	Check func(name string, o *Options, c *Checker)
	// New builds the field.
	New func(name string, o *Options) (Field, error)
}

// Options are the options of one field of a recipe, by key: a bool, an int64, a float64, a
// string, a []string or a []uint64 (an option not set is absent).
type Options struct {
	values map[string]any
	has    func(key string) bool
	// refused holds the keys whose value the recipe gave with the wrong type (a problem
	// already reported).
	refused func(key string) bool
}

// NewOptions returns options holding values; has reports whether the recipe gives a key
// (nil: whether it has a value), refused whether it gave it a value of the wrong type (nil:
// never).
func NewOptions(values map[string]any, has, refused func(key string) bool) *Options {
	if values == nil {
		values = map[string]any{}
	}
	o := &Options{values: values, has: has, refused: refused}
	if o.has == nil {
		o.has = func(k string) bool { _, ok := o.values[k]; return ok }
	}
	if o.refused == nil {
		o.refused = func(string) bool { return false }
	}
	return o
}

// Values returns the options by key (the map is o's).
func (o *Options) Values() map[string]any { return o.values }

// Given reports whether the recipe gives key (as opposed to a default).
func (o *Options) Given(key string) bool { return o.has(key) }

// Refused reports whether the recipe gave key a value of the wrong type.
func (o *Options) Refused(key string) bool { return o.refused(key) }

// Lookup returns the value of key and whether it is set.
func (o *Options) Lookup(key string) (any, bool) { v, ok := o.values[key]; return v, ok }

// Set sets key (a default).
func (o *Options) Set(key string, v any) { o.values[key] = v }

// SetDefault sets key to v when it is unset (or the zero value).
func (o *Options) SetDefault(key string, v any) {
	if _, ok := o.values[key]; !ok {
		o.values[key] = v
	}
}

// String returns the string option key ("" when unset).
func (o *Options) String(key string) string { v, _ := o.values[key].(string); return v }

// Int returns the integer option key (0 when unset).
func (o *Options) Int(key string) int64 { v, _ := o.values[key].(int64); return v }

// Float returns the number option key (0 when unset).
func (o *Options) Float(key string) float64 { v, _ := o.values[key].(float64); return v }

// Bool returns the boolean option key (false when unset).
func (o *Options) Bool(key string) bool { v, _ := o.values[key].(bool); return v }

// Strings returns the list option key (nil when unset).
func (o *Options) Strings(key string) []string { v, _ := o.values[key].([]string); return v }

// Uints returns the list of counts option key (nil when unset).
func (o *Options) Uints(key string) []uint64 { v, _ := o.values[key].([]uint64); return v }

// Checker collects the problems of one field's options.
type Checker struct {
	// Where names the field in messages (`field "image"`, "fields[2]").
	Where string
	add   func(key, msg string)
}

// NewChecker returns a checker naming the field where, passing each problem to add with
// the key it is about.
func NewChecker(where string, add func(key, msg string)) *Checker {
	return &Checker{Where: where, add: add}
}

// Add reports a problem with key; the message is used as it is.
func (c *Checker) Add(key, format string, args ...any) { c.add(key, fmt.Sprintf(format, args...)) }

// OneOf reports key's value v when it is not one of choices.
func (c *Checker) OneOf(key, v string, choices []string) {
	if !slices.Contains(choices, v) {
		c.Add(key, "%s: %s: %s is not one of %s", c.Where, key, quote.Q(v), strings.Join(choices, ", "))
	}
}

// In reports key's value v when it is outside [lo, hi]; 0 (the default, explained by zero)
// is always allowed unless zero is "".
func (c *Checker) In(key string, v, lo, hi int64, zero string) {
	if (v == 0 && zero != "") || (v >= lo && v <= hi) {
		return
	}
	if zero != "" {
		zero = " (" + zero + ")"
	}
	c.Add(key, "%s: %s %d is out of range: %d..%d%s", c.Where, key, v, lo, hi, zero)
}

var fieldRegistry = struct {
	sync.RWMutex
	specs map[string]*FieldSpec
}{specs: map[string]*FieldSpec{}}

// ErrRegister is the panic value of a Register call that declares a field type twice or
// without a name or constructor.
var ErrRegister = errors.New("encoders: bad registration")

// Register makes a field type available by name. It is meant to be called from an init
// function, and panics when the type is empty or already taken, or New is nil.
func Register(s FieldSpec) {
	fieldRegistry.Lock()
	defer fieldRegistry.Unlock()
	if s.Type == "" || s.New == nil {
		panic(fmt.Errorf("%w: %q needs a type and New", ErrRegister, s.Type))
	}
	if _, dup := fieldRegistry.specs[s.Type]; dup {
		panic(fmt.Errorf("%w: %q registered twice", ErrRegister, s.Type))
	}
	fieldRegistry.specs[s.Type] = &s
}

// Lookup returns the spec of a registered field type.
func Lookup(typ string) (*FieldSpec, bool) {
	fieldRegistry.RLock()
	defer fieldRegistry.RUnlock()
	s, ok := fieldRegistry.specs[typ]
	return s, ok
}

// Types returns the registered field types, sorted.
func Types() []string {
	fieldRegistry.RLock()
	defer fieldRegistry.RUnlock()
	out := make([]string, 0, len(fieldRegistry.specs))
	for t := range fieldRegistry.specs {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Takes reports whether the field type takes the option key.
func (s *FieldSpec) Takes(key string) bool { return slices.Contains(s.Keys, key) }
