package recipe

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// addKeys makes the samples carry their key (sample.Key, slash-separated) as a text column
// when a field reads the source's key column (sources.Spec.KeyColumn: from: path for image
// and audio folders, from: __key__ for tar shards).
func addKeys(p *Plan, spec *sources.Spec) {
	col := spec.KeyColumn
	if col == "" {
		return
	}
	for _, f := range p.Recipe.Fields {
		for _, from := range strings.Split(f.From, "|") {
			if from == col {
				p.Source = &withKeys{Source: p.Source, column: col}
				return
			}
		}
	}
}

// withKeys adds the column of each sample's key.
type withKeys struct {
	sources.Source
	column string
}

// Unwrap implements sources.Wrapper.
func (w *withKeys) Unwrap() sources.Source { return w.Source }

// Run implements sources.Source.
func (w *withKeys) Run(ctx context.Context, emit func(sample.Sample) error) error {
	return w.Source.Run(ctx, func(s sample.Sample) error { return emit(w.add(s)) })
}

// add sets the key column of s.
func (w *withKeys) add(s sample.Sample) sample.Sample {
	if s.Key != "" {
		s.Set(w.column, sample.Value{Kind: sample.KindString, Bytes: []byte(filepath.ToSlash(s.Key))})
	}
	return s
}

// Resume implements sources.Resumer: the source wrapped, resumed (a resumed run continues
// by the wrapped source's place).
func (w *withKeys) Resume(samples int64, token []byte) (sources.Source, error) {
	src, err := sources.ResumeInner(w.Source, samples, token)
	if err != nil {
		return nil, err
	}
	return &withKeys{Source: src, column: w.column}, nil
}

// RunPositioned implements sources.PositionedRunner.
func (w *withKeys) RunPositioned(ctx context.Context, emit func(sample.Sample, func() []byte) error) error {
	return sources.RunPositioned(ctx, w.Source, func(s sample.Sample, after func() []byte) error {
		return emit(w.add(s), after)
	})
}
