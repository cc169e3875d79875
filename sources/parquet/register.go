package parquet

import (
	"context"
	"fmt"

	"github.com/mldf/convert/sources"
)

func init() {
	sources.Register(sources.Spec{
		Name:    "parquet",
		Inputs:  sources.ByInputs,
		Buckets: true,
		Records: true,
		Table:   openTable,
	})
}

// table is the sources.Table of a list of Parquet files: the first file's schema decides.
type table struct {
	files  []string
	open   Opener
	schema *Schema
	meta   map[string]string
	cols   []Column
	seen   map[string]bool
}

var _ sources.Table = (*table)(nil)

func openTable(ctx context.Context, cfg sources.Config) (sources.Table, error) {
	files, err := Expand(ctx, cfg.Store, cfg.Inputs)
	if err != nil {
		return nil, sources.InputsError{Err: err}
	}
	open := StoreOpener(ctx, cfg.Store)
	schema, meta, err := ReadSchema(files[0], open)
	if err != nil {
		return nil, err
	}
	return &table{files: files, open: open, schema: schema, meta: meta, seen: map[string]bool{}}, nil
}

// File implements sources.Table.
func (t *table) File() string { return t.files[0] }

// Infer implements sources.Table: Hugging Face features, else Parquet types.
func (t *table) Infer() ([]sources.Inferred, []string, error) {
	fields, notes, err := Infer(t.schema, t.meta)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", t.files[0], err)
	}
	out := make([]sources.Inferred, len(fields))
	for i, f := range fields {
		out[i] = sources.Inferred{Name: f.Name, Type: f.Type, From: f.From, DType: f.DType, Shape: f.Shape, Why: f.Why, Classes: f.Classes}
	}
	return out, notes, nil
}

// Column implements sources.Table: a column, a struct member by dotted path, or a Hugging
// Face Image/Audio struct (read as its bytes).
func (t *table) Column(from, fieldType string) (sources.ColumnInfo, error) {
	c, err := ColumnFor(t.schema, from, from, fieldType)
	if err != nil {
		return sources.ColumnInfo{}, err
	}
	if !t.seen[from] {
		t.seen[from] = true
		t.cols = append(t.cols, c)
	}
	return sources.ColumnInfo{As: c.As.String(), Type: t.schema.Describe(t.schema.Lookup(from)), IDs: c.As == AsJSON}, nil
}

// Open implements sources.Table.
func (t *table) Open() (sources.Source, error) {
	return NewFiles(t.files, t.cols, Options{Open: t.open})
}
