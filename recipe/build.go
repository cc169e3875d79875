package recipe

import (
	"context"
	"fmt"
	"strings"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// Plan is a validated recipe resolved into a source and field encoders, ready to run (by
// package run). It is data: the recipe does not run it.
type Plan struct {
	Recipe   *Recipe
	Source   sources.Source
	Bindings []Binding
	// Inputs are the files the source reads (all of them, before sharding), in order: a
	// list read in order (a folder source's may hold 10^8 files).
	Inputs sources.InputList
	// Slice is the [lo, hi) range of Inputs this run converts (all of them unless sharded).
	Slice [2]int
	// Cells is the source of a single-cell source type (all its inputs, before sharding):
	// the matrices an SCDL archive is written from, closed once the run ends. nil for the
	// other types.
	Cells sources.CellSource
	// Notes say what Build inferred (the fields of a Parquet schema), for validate to print.
	Notes []string
	// Pack is the packing stage the run puts Source through, nil without a packed field.
	Pack *PackStage
	// AllowEmpty is the run's allow_empty: the recipe's, or a shard whose slice holds no
	// input (more shards than inputs).
	AllowEmpty bool

	classes map[string][]string // class names of class-label fields, by field name
}

// PackStage is the packing stage of a plan with a packed text field: the run puts the
// source through it (pipeline.Pack), which tokenizes the documents in Column with Field
// and cuts the stream into the rows the field encodes.
type PackStage struct {
	Field  encoders.Packer
	Column string
}

// Binding maps a source column to an output field (pipeline.Binding).
type Binding struct {
	Field  encoders.Field
	Column string
	// Optional: a sample without the column stores the field's empty value instead of
	// being rejected.
	Optional bool
}

// Classes returns the class names of the plan's class-label fields, by field name (nil when
// there are none). The map is the plan's: do not modify it.
func (p *Plan) Classes() map[string][]string { return p.classes }

// Build resolves a validated recipe (Defaults and Validate called) into a Plan. It opens the
// source (walking folders, expanding globs) but reads no sample. It is BuildWith with a
// background context and an objstore client of its own.
func Build(r *Recipe) (*Plan, error) {
	return BuildWith(context.Background(), r, nil)
}

// BuildWith is Build with the objstore client that lists and reads the inputs named by URL
// (s3://, gs://, az://, azblob://, file://; nil: a new client) and the context of those
// listings. Every input is checked here, before any work: a glob matching nothing, a
// missing object, bucket or folder, or denied access is one error naming its URL.
func BuildWith(ctx context.Context, r *Recipe, store *objstore.Client) (*Plan, error) {
	spec, ok := sources.Lookup(r.Source.Type)
	if !ok {
		return nil, fmt.Errorf("%w: source type %q", ErrRecipe, r.Source.Type)
	}
	if store == nil {
		store = objstore.New()
	}
	if spec.Cells {
		return buildCells(ctx, r, spec, store) // cells.go
	}
	p := &Plan{Recipe: r}
	var src sources.Source
	var err error
	if spec.Table != nil {
		src, err = buildTable(ctx, r, p, spec, store) // table.go
	} else {
		src, err = spec.Open(ctx, r.sourceConfig(store))
	}
	if err != nil {
		return nil, err
	}
	if err := checkInputs(ctx, r, src); err != nil { // columns.go
		return nil, err
	}
	if err := p.slice(src); err != nil {
		return nil, err
	}
	var alts []string
	for _, f := range r.Fields {
		if strings.Contains(f.From, "|") {
			alts = append(alts, f.From)
		}
	}
	if len(alts) > 0 {
		p.Source = &alternatives{Source: p.Source, columns: alts}
	}
	for i, f := range r.Fields {
		field, err := r.buildField(i)
		if err != nil {
			return nil, fmt.Errorf("%w: field %q: %w", ErrRecipe, f.Name, err)
		}
		if packed, ok := field.(encoders.Packer); ok {
			// Packed rows are cut across documents: the run puts the source through the
			// packing stage, whose samples are the rows the field encodes.
			p.Pack = &PackStage{Field: packed, Column: f.From}
			f.From = packed.PackLayout().Column
		}
		required := f.Required == nil || *f.Required
		p.Bindings = append(p.Bindings, Binding{Field: field, Column: f.From, Optional: !required})
	}
	addKeys(p, spec) // keys.go: from: path, from: __key__
	if err := finishClasses(p); err != nil {
		return nil, err
	}
	return p, nil
}

// slice sets the plan's inputs and the slice of them a sharded run converts, and cuts src
// to it (every source is a sources.Sharder).
func (p *Plan) slice(src sources.Source) error {
	l, ok := src.(sources.Lister)
	if !ok {
		return fmt.Errorf("%w: source %T does not list its inputs", ErrRecipe, src)
	}
	r := p.Recipe
	p.Inputs, p.Source = l.Inputs(), src
	p.Slice = [2]int{0, int(p.Inputs.Len())}
	if r.Shards > 1 {
		lo, hi, err := sources.SliceList(p.Inputs, r.Shard, r.Shards)
		if err != nil {
			return fmt.Errorf("slice %d of %d: %w", r.Shard, r.Shards, err)
		}
		p.Slice = [2]int{int(lo), int(hi)}
		s, ok := src.(sources.Sharder)
		if !ok {
			return fmt.Errorf("%w: source %T cannot be sharded", ErrRecipe, src)
		}
		if p.Source, err = s.Range(int(lo), int(hi)); err != nil {
			return err
		}
	}
	p.AllowEmpty = r.AllowEmpty || (r.Shards > 1 && p.Slice[0] == p.Slice[1])
	return nil
}

// alternatives gives every column written "a|b|c" the value of the first of a, b, c that a
// sample has (WebDataset shards mixing .jpg and .png members, JSONL with optional keys).
type alternatives struct {
	sources.Source
	columns []string
}

// Unwrap implements sources.Wrapper.
func (a *alternatives) Unwrap() sources.Source { return a.Source }

// Run implements sources.Source.
func (a *alternatives) Run(ctx context.Context, emit func(sample.Sample) error) error {
	return a.Source.Run(ctx, func(s sample.Sample) error { return emit(a.pick(s)) })
}

// pick sets the alternatives' columns of s.
func (a *alternatives) pick(s sample.Sample) sample.Sample {
	for _, alt := range a.columns {
		for _, c := range strings.Split(alt, "|") {
			if v, ok := s.Get(c); ok {
				s.Set(alt, v)
				break
			}
		}
	}
	return s
}

// Resume implements sources.Resumer: the source wrapped, resumed.
func (a *alternatives) Resume(samples int64, token []byte) (sources.Source, error) {
	src, err := sources.ResumeInner(a.Source, samples, token)
	if err != nil {
		return nil, err
	}
	return &alternatives{Source: src, columns: a.columns}, nil
}

// RunPositioned implements sources.PositionedRunner.
func (a *alternatives) RunPositioned(ctx context.Context, emit func(sample.Sample, func() []byte) error) error {
	return sources.RunPositioned(ctx, a.Source, func(s sample.Sample, after func() []byte) error {
		return emit(a.pick(s), after)
	})
}
