package recipe

import (
	"context"
	"fmt"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sources"
)

// Single-cell sources (sources.Spec.Cells: AnnData .h5ad files, 10x Genomics directories,
// SCDL archives) convert to an SCDL archive (format: scdl, no fields) or, one sample per
// cell, to MLDF or .beton through the usual fields (columns values, genes, cell and the obs
// columns; see sources/scdlsrc).

// buildCells resolves a single-cell source: it opens the inputs (reading only their
// headers) and plans an SCDL archive or a pipeline run over one sample per cell.
func buildCells(ctx context.Context, r *Recipe, spec *sources.Spec, store *objstore.Client) (*Plan, error) {
	src, err := spec.Open(ctx, r.sourceConfig(store))
	if err != nil {
		return nil, err
	}
	cs, ok := src.(sources.CellSource)
	if !ok {
		return nil, fmt.Errorf("%w: source %T of type %s is not a sources.CellSource", ErrRecipe, src, spec.Name)
	}
	p := &Plan{Recipe: r, Cells: cs}
	fail := func(err error) (*Plan, error) {
		cs.Close()
		return nil, err
	}
	if r.Format == "scdl" {
		p.Source, p.Inputs = cs, cs.Inputs()
		p.Slice = [2]int{0, int(p.Inputs.Len())}
		return p, nil
	}
	if err := p.slice(cs); err != nil {
		return fail(err)
	}
	for i, f := range r.Fields {
		field, err := r.buildField(i)
		if err != nil {
			return fail(fmt.Errorf("%w: field %q: %w", ErrRecipe, f.Name, err))
		}
		required := f.Required == nil || *f.Required
		p.Bindings = append(p.Bindings, Binding{Field: field, Column: f.From, Optional: !required})
	}
	if err := cellClasses(p, cs); err != nil {
		return fail(err)
	}
	return p, nil
}

// cellClasses makes the int fields that read a categorical obs column of a cell source
// (cell types, batches of an h5ad file) class-label fields whose names are the categories:
// a cell's category is stored as its index. Fields given names: keep theirs.
func cellClasses(p *Plan, src sources.CellSource) error {
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
