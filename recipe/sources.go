package recipe

import (
	"reflect"
	"slices"
	"strings"

	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// The source section of a recipe is checked against the registered source types
// (sources.Register): which of path and inputs a type takes, whether it reads buckets, the
// options it takes and their checks. The recipe knows no source type by name.

// sourceBaseKeys are the keys of every source; the others are options of some types.
var sourceBaseKeys = []string{"type", "path", "inputs"}

// option is one source option the recipe sets.
type option struct {
	key   string
	value any // bool, int64 or string
}

// options returns the source options s sets (zero values left out), in the order of the
// Source struct, as sources.Config takes them: a bool, an int64 (sizes) or a string.
func (s Source) options() []option {
	var out []option
	v := reflect.ValueOf(s)
	for i := range v.NumField() {
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		f := v.Field(i)
		if key == "" || slices.Contains(sourceBaseKeys, key) || f.IsZero() {
			continue
		}
		switch f.Kind() {
		case reflect.Bool:
			out = append(out, option{key, f.Bool()})
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			out = append(out, option{key, f.Int()})
		case reflect.String:
			out = append(out, option{key, f.String()})
		}
	}
	return out
}

// article returns the name of a source type with "a" or "an" before it ("an images", "a
// tar", "an h5ad"; the article of the first type when name lists several).
func article(name string) string {
	first, _, _ := strings.Cut(name, " ")
	if s, ok := sources.Lookup(first); ok && s.Article != "" {
		return s.Article + " " + name
	}
	if name != "" && strings.ContainsRune("aeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

// typesWhere returns the registered source types whose spec satisfies ok, in the order of
// the documentation.
func typesWhere(ok func(*sources.Spec) bool) []string {
	var out []string
	for _, t := range sources.Types() {
		if s, _ := sources.Lookup(t); ok(s) {
			out = append(out, t)
		}
	}
	return out
}

// validateSource checks the source section: its type is registered, it is given its
// inputs the way the type takes them, URLs only where the type reads buckets, and every
// option applies to the type and is valid for it. It returns the type's spec (nil when
// the type is unknown).
func (r *Recipe) validateSource(add func(line int, format string, args ...any)) *sources.Spec {
	s := r.Source
	types := sources.Types()
	spec, known := sources.Lookup(s.Type)
	switch {
	case s.Type == "":
		add(r.line("source"), "source.type is required (one of %s)", strings.Join(types, ", "))
	case !known:
		add(r.line("source", "type"), "%s: %s is not one of %s", "source.type", quote.Q(s.Type), strings.Join(types, ", "))
	case spec.Inputs == sources.ByInputs:
		if len(s.Inputs) == 0 {
			noun := spec.InputNoun
			if noun == "" {
				noun = "input"
			}
			add(r.line("source"), "source.inputs: %s source needs at least one %s (file, glob or brace range)", article(s.Type), noun)
		}
		if s.Path != "" {
			add(r.line("source", "path"), "source.path does not apply to %s source (use inputs)", article(s.Type))
		}
	case spec.Inputs == sources.ByPath:
		if s.Path == "" {
			add(r.line("source"), "source.path is required for a %s source", s.Type)
		}
		if len(s.Inputs) > 0 {
			add(r.line("source", "inputs"), "source.inputs does not apply to a %s source (use path)", s.Type)
		}
	case spec.Inputs == sources.ByPathOrInputs:
		if s.Path == "" && len(s.Inputs) == 0 {
			add(r.line("source"), "source.path (or inputs, for several) is required for a %s source", s.Type)
		} else if s.Path != "" && len(s.Inputs) > 0 {
			add(r.line("source", "inputs"), "source.path and source.inputs are exclusive")
		}
	}
	if known && spec.Available != nil {
		if err := spec.Available(); err != nil {
			add(r.line("source", "type"), "source.type %s: %v", s.Type, err)
		}
	}
	// Names (paths; s3://, gs://, az://, azblob://, file:// URLs): well formed (objstore.Key
	// refuses a malformed URL, naming it), and in a bucket only where the source reads from
	// buckets (a folder that is not a directory of this machine). Whether they exist is
	// checked by Build, before any work.
	checkURL := func(line int, key, v string) {
		if _, err := objstore.Key(v); err != nil {
			add(line, "%s: %v", key, err)
			return
		}
		if _, local := objstore.FolderOf(v).Dir(); !local && (!known || !spec.Buckets) {
			add(line, "%s %s: a %s source reads local files only (sources that read buckets: %s)", key, quote.Q(v), s.Type,
				strings.Join(typesWhere(func(s *sources.Spec) bool { return s.Buckets }), ", "))
		}
	}
	if s.Path != "" {
		checkURL(r.line("source", "path"), "source.path", s.Path)
	}
	for _, in := range s.Inputs {
		checkURL(r.line("source", "inputs"), "source.inputs", in)
	}
	for _, o := range s.options() {
		line, label := r.line("source", o.key), "source."+o.key
		opt, takes := sources.Option{}, false
		if known {
			opt, takes = spec.Option(o.key)
		}
		switch {
		case takes && opt.Check != nil:
			if msg := opt.Check(label, o.value); msg != "" {
				add(line, "%s", msg)
			}
		case takes:
		default:
			by := typesWhere(func(s *sources.Spec) bool { return s.Takes(o.key) })
			if len(by) == 0 {
				add(line, "%s applies to no source type", label)
			} else {
				add(line, "%s applies only to %s source", label, article(strings.Join(by, " or ")))
			}
		}
	}
	if !known {
		return nil
	}
	return spec
}

// sourceConfig is what the source is opened with.
func (r *Recipe) sourceConfig(store *objstore.Client) sources.Config {
	cfg := sources.Config{Path: r.Source.Path, Inputs: r.Source.Inputs, Options: map[string]any{}, Store: store}
	for _, o := range r.Source.options() {
		cfg.Options[o.key] = o.value
	}
	for i, f := range r.Fields {
		cfg.Reads = append(cfg.Reads, sources.Read{From: f.From, Kind: r.readKind(i), Required: f.Required == nil || *f.Required})
	}
	return cfg
}

// readKindName says how a field reads a typed value, for messages.
func readKindName(k sample.Kind) string {
	switch k {
	case sample.KindInt:
		return "an integer"
	case sample.KindFloat:
		return "a number"
	case sample.KindJSON:
		return "any JSON value"
	case sample.KindBytes:
		return "base64"
	}
	return "a string"
}
