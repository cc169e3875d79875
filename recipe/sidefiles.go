package recipe

import (
	"context"
	"fmt"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sources"
	"github.com/mldf/convert/sources/audio"
	"github.com/mldf/convert/sources/imagefolder"
	"github.com/mldf/convert/sources/scdlsrc"
)

// WritesClasses reports whether the run writes a class-names file (OUTPUT.classes.json) beside
// its output: a .beton output with class-label fields (an MLDF file holds its class names
// itself, docs/FORMAT.md §14). The file is written only beside a local output; the command
// refuses a bucket output for such a plan before any work.
func (p *Plan) WritesClasses() bool { return len(p.classes) > 0 && p.Recipe.Format == "beton" }

// sourceClasses adds to p.classes the class names the source or the recipe knows: the class
// folders of an image or audio folder (for the int fields that read its label column) and the
// names a recipe gives an int field. A Parquet source's ClassLabel names are already there.
func sourceClasses(p *Plan) {
	col, names := classesOf(p.Source)
	for i, f := range p.Recipe.Fields {
		if f.Type != "int" || i >= len(p.Bindings) {
			continue
		}
		var n []string
		switch {
		case len(f.Names) > 0:
			n = f.Names
		case len(names) > 0 && p.Bindings[i].Column == col:
			n = names
		default:
			continue
		}
		if p.classes == nil {
			p.classes = map[string][]string{}
		}
		p.classes[f.Name] = n
	}
}

// classesOf returns the label column of a folder source and its class names (label i is
// names[i]), looking through the recipe's own wrappers; "", nil for other sources.
func classesOf(src sources.Source) (string, []string) {
	for {
		switch s := src.(type) {
		case *alternatives:
			src = s.Source
			continue
		case *withKeys:
			src = s.Source
			continue
		case *unknownMembers:
			src = s.Source
			continue
		case *imagefolder.Source:
			return imagefolder.ColumnLabel, s.Classes()
		case *audio.Folder:
			return audio.ColLabel, s.Classes()
		case interface{ Classes() []string }: // a folder source cut to a shard
			return "label", s.Classes()
		}
		return "", nil
	}
}

// ClassNames returns the class names of r's class-label fields by field name: the names the
// file holds (MLDF 1.1, docs/FORMAT.md §14), else those of the side file FILE.classes.json
// that older writers put beside it (read through store; names that do not match the field's
// arguments are left out: unknown, never wrong). file is the name r was opened from.
func ClassNames(ctx context.Context, store *objstore.Client, r *mldf.Reader, file string) (map[string][]string, error) {
	out := map[string][]string{}
	var side map[string][]string
	sideRead := false
	for k, fd := range r.Fields() {
		if _, ok := r.NumClasses(k); !ok {
			continue
		}
		names, err := r.ClassNames(k)
		if err != nil {
			return nil, err
		}
		if names == nil {
			if !sideRead {
				if side, err = ReadClasses(ctx, store, file); err != nil {
					return nil, err
				}
				sideRead = true
			}
			if n, ok := side[fd.Name]; ok && encoders.CheckClassNames(fd.Arguments, n) == nil {
				names = n
			}
		}
		if names != nil {
			out[fd.Name] = names
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// cellClasses makes the int fields that read a categorical obs column of a cell source
// (cell types, batches of an h5ad file) class-label fields whose names are the categories:
// a cell's category is stored as its index. Fields given names: keep theirs.
func cellClasses(p *Plan, src *scdlsrc.Source) error {
	for i, f := range p.Recipe.Fields {
		if f.Type != "int" || len(f.Names) > 0 || i >= len(p.Bindings) {
			continue
		}
		names := src.ClassNames(f.From)
		if names == nil {
			continue
		}
		cl, err := encoders.NewClassLabel(f.Name, names)
		if err != nil {
			return fmt.Errorf("%w: field %q: the categories of obs column %q: %w", ErrRecipe, f.Name, f.From, err)
		}
		p.Bindings[i].Field = cl
		p.Notes = append(p.Notes, fmt.Sprintf("class names of %q (%d) are the categories of obs column %q, stored in the file", f.Name, len(names), f.From))
	}
	return nil
}
