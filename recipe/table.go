package recipe

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sources"
)

// buildTable resolves a source whose columns a schema declares (sources.Spec.Table: Parquet).
// The first file's schema decides: with no fields in the recipe, every column is mapped by
// the table's Infer and the mapping is recorded in p.Notes; each field's column is checked
// against the schema, every missing one reported with its line. Class names of class-label
// columns go with the int fields that read them.
func buildTable(ctx context.Context, r *Recipe, p *Plan, spec *sources.Spec, store *objstore.Client) (sources.Source, error) {
	t, err := spec.Table(ctx, r.sourceConfig(store))
	if ie := (sources.InputsError{}); errors.As(err, &ie) {
		return nil, fmt.Errorf("%w: %w", ErrRecipe, err)
	} else if err != nil {
		return nil, err
	}
	file := t.File()
	inferred, notes, err := t.Infer()
	if err != nil {
		return nil, err
	}
	byColumn := map[string]sources.Inferred{}
	for _, f := range inferred {
		byColumn[f.From] = f
	}
	if len(r.Fields) == 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("fields inferred from the schema of %s:", file))
		for _, f := range inferred {
			rf := Field{Name: f.Name, Type: f.Type, From: f.From, DType: f.DType, Shape: f.Shape}
			switch f.Type {
			case "image":
				// JPEG and PNG bytes kept as they are (a PNG that needs a change stays PNG);
				// FFCV .beton and MDS image columns hold one format, so they get smart's JPEG.
				rf.Mode = "smart"
				rf.KeepPNG = r.Format == "" || r.Format == "mldf"
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
		p.Notes = append(p.Notes, fmt.Sprintf("columns of %s read by the fields:", file))
	}
	as := map[string]string{}
	missing := &collector{} // every field whose column the table cannot supply, with its line
	var cause error         // the first of them (an error of the table, e.g. parquet.ErrColumn)
	for i := range r.Fields {
		f := &r.Fields[i]
		for _, from := range strings.Split(f.From, "|") {
			c, err := t.Column(from, f.Type)
			if err != nil {
				missing.add(r.fromLine(i), "field %s: from %s: %s: %v", quote.Q(f.Name), quote.Q(from), quote.S(file), err)
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
			if !inferredAll {
				how := "as " + c.As
				if inf, ok := byColumn[from]; ok {
					how += "; " + inf.Why
				}
				p.Notes = append(p.Notes, fmt.Sprintf("  %-24s %s (%s)", strconv.Quote(from), c.Type, how))
			}
			if c.IDs && f.Type == "tokens" && !r.has("fields", "#"+strconv.Itoa(i), "tokenizer") {
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
	return t.Open()
}

// withCause is an error with err's message that also matches cause (errors.Is, errors.As).
type withCause struct{ err, cause error }

func (e withCause) Error() string   { return e.err.Error() }
func (e withCause) Unwrap() []error { return []error{e.err, e.cause} }
