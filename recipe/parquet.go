package recipe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/internal/quote"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/sources"
	"github.com/mldf/convert/sources/parquet"
)

// ClassesSuffix names the file beside an output that holds the class names of its class-label
// fields: OUTPUT.classes.json, {"field": ["name0", "name1", ...]} (docs/fields/int.md).
const ClassesSuffix = ".classes.json"

// buildParquet resolves a parquet source. The first file's schema decides: with no fields in
// the recipe, every column is mapped by Infer (Hugging Face features, else Parquet types) and
// the mapping is recorded in p.Notes; a field's from may name a column, a struct member by
// dotted path, or a Hugging Face Image/Audio struct (read as its bytes). Class names of
// ClassLabel columns go with the int fields that read them.
func buildParquet(ctx context.Context, r *Recipe, p *Plan, store *objstore.Client) (sources.Source, error) {
	files, err := parquet.Expand(ctx, store, r.Source.Inputs)
	if err != nil {
		return nil, fmt.Errorf("%w: source.inputs: %w", ErrRecipe, err)
	}
	open := parquet.StoreOpener(ctx, store)
	schema, meta, err := parquet.ReadSchema(files[0], open)
	if err != nil {
		return nil, err
	}
	inferred, notes, err := parquet.Infer(schema, meta)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", files[0], err)
	}
	byColumn := map[string]parquet.Field{}
	for _, f := range inferred {
		byColumn[f.From] = f
	}
	if len(r.Fields) == 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("fields inferred from the schema of %s:", files[0]))
		for _, f := range inferred {
			rf := Field{Name: f.Name, Type: f.Type, From: f.From, DType: f.DType, Shape: f.Shape}
			switch f.Type {
			case "image":
				rf.Mode = "smart" // JPEG and PNG bytes kept as they are
			case "tokens":
				rf.Tokenizer = "none"
			}
			r.Fields = append(r.Fields, rf)
			p.Notes = append(p.Notes, fmt.Sprintf("  %-24s → %-8s %s", strconv.Quote(f.From), f.Type, f.Why))
		}
		r.Defaults()
		if err := r.Validate(); err != nil {
			return nil, err
		}
	}
	p.Notes = append(p.Notes, notes...)
	inferredAll := len(p.Notes) > 0 && strings.HasPrefix(p.Notes[0], "fields inferred")
	if !inferredAll {
		p.Notes = append(p.Notes, fmt.Sprintf("columns of %s read by the fields:", files[0]))
	}
	var cols []parquet.Column
	as := map[string]parquet.As{}
	missing := &collector{} // every field whose column the table cannot supply, with its line
	var cause error         // the first of them (parquet.ErrColumn)
	for i := range r.Fields {
		f := &r.Fields[i]
		for _, from := range strings.Split(f.From, "|") {
			c, err := parquet.ColumnFor(schema, from, from, f.Type)
			if err != nil {
				missing.add(r.fromLine(i), "field %s: from %s: %s: %v", quote.Q(f.Name), quote.Q(from), quote.S(files[0]), err)
				if cause == nil {
					cause = err
				}
				continue
			}
			if prev, ok := as[from]; ok {
				if prev != c.As {
					return nil, fmt.Errorf("%w: field %q: column %q is read as %s by another field and as %s here", ErrRecipe, f.Name, from, prev, c.As)
				}
				continue
			}
			as[from] = c.As
			cols = append(cols, c)
			if !inferredAll {
				how := "as " + c.As.String()
				if inf, ok := byColumn[from]; ok {
					how += "; " + inf.Why
				}
				p.Notes = append(p.Notes, fmt.Sprintf("  %-24s %s (%s)", strconv.Quote(from), schema.Lookup(from).Type(), how))
			}
			if c.As == parquet.AsJSON && (f.Type == "tokens") && !r.has("fields", "#"+strconv.Itoa(i), "tokenizer") {
				f.Tokenizer = "none" // a list column holds ids already
			}
		}
		if inf, ok := byColumn[f.From]; ok && f.Type == "int" && len(inf.Classes) > 0 {
			if p.classes == nil {
				p.classes = map[string][]string{}
			}
			p.classes[f.Name] = inf.Classes
		}
	}
	if probs := missing.problems(); probs != nil {
		return nil, withCause{r.problemsError(probs), cause}
	}
	return parquet.NewFiles(files, cols, parquet.Options{Open: open})
}

// withCause is an error with err's message that also matches cause (errors.Is, errors.As).
type withCause struct{ err, cause error }

func (e withCause) Error() string   { return e.err.Error() }
func (e withCause) Unwrap() []error { return []error{e.err, e.cause} }

// finishParquet makes the int fields that read class labels class-label fields (their names
// go into the file, docs/FORMAT.md §14): ClassLabel columns of a Parquet source, the class
// folders of an image or audio folder, the names a recipe gives an int field (names: [...]).
// A .beton output cannot hold them: its names are written beside it (OUTPUT.classes.json)
// once the run succeeds.
func finishParquet(p *Plan) error {
	addKeys(p) // keys.go: from: path, from: __key__
	sourceClasses(p)
	if len(p.classes) == 0 {
		return nil
	}
	where := "stored in the file"
	if p.Recipe.Format == "beton" {
		where = "written to OUTPUT" + ClassesSuffix
	}
	for i, b := range p.Bindings {
		names, ok := p.classes[b.Field.Name()]
		if !ok || b.Field.Type() != mldf.TypeInt {
			continue
		}
		f, err := encoders.NewClassLabel(b.Field.Name(), names)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrRecipe, err)
		}
		p.Bindings[i].Field = f
		p.Notes = append(p.Notes, fmt.Sprintf("class names of %q (%d) are %s", b.Field.Name(), len(names), where))
	}
	if !p.WritesClasses() {
		return nil
	}
	classes, store := p.classes, p.store
	run := p.Run
	p.Run = func(ctx context.Context, cfg pipeline.Config) (pipeline.Report, error) {
		if run == nil {
			run = pipeline.Run
		}
		rep, err := run(ctx, cfg)
		if err != nil {
			return rep, err
		}
		if err := WriteClasses(ctx, store, cfg.Output+ClassesSuffix, classes); err != nil {
			// A run that fails leaves no output.
			if isURL(cfg.Output) {
				store.Remove(context.WithoutCancel(ctx), cfg.Output)
			} else {
				os.Remove(cfg.Output)
			}
			return rep, err
		}
		return rep, nil
	}
	return nil
}

// isURL reports whether name is an object in a bucket (not a plain path or a file:// URL); a
// malformed URL counts as one (objstore refuses it): a string with a scheme is never local.
func isURL(name string) bool { return objstore.IsURL(name) }

// WriteClasses writes class names by field to path atomically: a local file, or an object in
// a bucket through store (it appears whole or not at all).
func WriteClasses(ctx context.Context, store *objstore.Client, path string, classes map[string][]string) error {
	names := make([]string, 0, len(classes))
	for n := range classes {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("{")
	for i, n := range names {
		if i > 0 {
			b.WriteString(",")
		}
		k, _ := json.Marshal(n)
		b.WriteString("\n  " + string(k) + ": " + string(encoders.ClassNamesJSON(classes[n])))
	}
	b.WriteString("\n}\n")
	if isURL(path) {
		if err := store.WriteFile(ctx, path, []byte(b.String())); err != nil {
			return fmt.Errorf("class names: %w", err)
		}
		return nil
	}
	if err := atomicfile.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("class names %s: %w", path, err)
	}
	return nil
}

// maxClassesFile bounds the class-names file read back.
const maxClassesFile = 64 << 20

// ReadClasses reads the class names written beside an MLDF file or object
// (FILE.classes.json; objects through store); it returns nil, nil when there is none.
func ReadClasses(ctx context.Context, store *objstore.Client, file string) (map[string][]string, error) {
	var b []byte
	var err error
	if isURL(file) {
		var rd *objstore.Reader
		if rd, err = store.Open(ctx, file+ClassesSuffix); errors.Is(err, objstore.ErrNotFound) {
			return nil, nil
		} else if err == nil {
			b, err = io.ReadAll(io.LimitReader(rd, maxClassesFile))
			rd.Close()
		}
	} else {
		path := file + ClassesSuffix
		if l, perr := objstore.Parse(path); perr == nil {
			path = l.Key // a file:// URL
		}
		if b, err = inputfile.ReadFile(path); os.IsNotExist(err) {
			return nil, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("class names: %w", err)
	}
	var m map[string][]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("class names %s: %w", file+ClassesSuffix, err)
	}
	return m, nil
}

// PartClasses reads the class names beside the parts of a sharded run: nil when none has
// any, an error when they differ (a merged file gets one set).
func PartClasses(ctx context.Context, store *objstore.Client, parts []string) (map[string][]string, error) {
	var first map[string][]string
	var from string
	for i, p := range parts {
		c, err := ReadClasses(ctx, store, p)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			first, from = c, p
			continue
		}
		a, _ := json.Marshal(first)
		b, _ := json.Marshal(c)
		if string(a) != string(b) {
			return nil, fmt.Errorf("class names differ between %s%s and %s%s", from, ClassesSuffix, p, ClassesSuffix)
		}
	}
	return first, nil
}
