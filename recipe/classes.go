package recipe

import (
	"fmt"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sources"
)

// ClassesSuffix names the file beside an output that holds the class names of its class-label
// fields: OUTPUT.classes.json, {"field": ["name0", "name1", ...]} (docs/fields/int.md).
const ClassesSuffix = ".classes.json"

// WritesClasses reports whether the run writes a class-names file (OUTPUT.classes.json) beside
// its output: a .beton output with class-label fields (an MLDF file holds its class names
// itself, docs/FORMAT.md §14). The file is written only beside a local output; the command
// refuses a bucket output for such a plan before any work.
func (p *Plan) WritesClasses() bool { return len(p.classes) > 0 && p.Recipe.Format == "beton" }

// sourceClasses adds to p.classes the class names the source or the recipe knows: the class
// folders of an image or audio folder (for the int fields that read its label column) and the
// names a recipe gives an int field. A Parquet source's ClassLabel names are already there.
func sourceClasses(p *Plan) {
	col, names := "", []string(nil)
	if c, ok := sources.Unwrapped[sources.Classer](p.Source); ok {
		col, names = sources.LabelColumn, c.Classes()
	}
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

// finishClasses makes the int fields that read class labels class-label fields (their names
// go into the file, docs/FORMAT.md §14): ClassLabel columns of a Parquet source, the class
// folders of an image or audio folder, the names a recipe gives an int field (names: [...]).
// A .beton output cannot hold them: its names are written beside it (OUTPUT.classes.json)
// once the run succeeds.
func finishClasses(p *Plan) error {
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
	return nil
}
