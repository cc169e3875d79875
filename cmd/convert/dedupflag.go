package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/dedup"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/recipe"
)

// parseDedup turns --dedup FIELD[,FIELD...][:MODE] into the recipe's dedup key.
func parseDedup(s string) *recipe.Dedup {
	fields, mode, _ := strings.Cut(s, ":")
	return &recipe.Dedup{Fields: strings.Split(fields, ","), Mode: mode}
}

// checkDedup checks the form of --dedup (the fields are checked against the recipe's).
func checkDedup(s string) error {
	d := parseDedup(s)
	if slices.Contains(d.Fields, "") {
		return errors.New("want FIELD[,FIELD...][:drop|report], such as image or image,label:report")
	}
	if d.Mode != "" && !slices.Contains(recipe.DedupModes, d.Mode) {
		return errors.New("the mode after ':' is drop or report")
	}
	return nil
}

// dedupSeed is an append's dedup table, seeded with the base's samples, and the base's sample
// count (the id of the first new sample).
type dedupSeed struct {
	table   *dedup.Table
	firstID int64
}

// seedAppend returns, when the append dedups (dedup: in r, or --dedup), a table holding the
// payloads of base (rd) in the dedup fields, hashed as a run hashes them: a new sample that
// duplicates a base sample is then dropped (or reported) and named by the base file and its
// sample id, as one run over the base's inputs and the new ones would. Otherwise nil.
func seedAppend(ctx context.Context, r *recipe.Recipe, rf *runFlags, rd *mldf.Reader, base string) (*dedupSeed, error) {
	d := r.Dedup
	if rf.dedup != "" {
		d = parseDedup(rf.dedup)
	}
	if d == nil {
		return nil, nil
	}
	t, err := dedup.New(dedup.Config{})
	if err != nil {
		return nil, fmt.Errorf("%w: dedup: %w", errAppend, err)
	}
	if _, err := pipeline.SeedDedupFrom(ctx, t, rd, base, d.Fields); err != nil {
		t.Close()
		return nil, fmt.Errorf("%w: %w", errAppend, err)
	}
	return &dedupSeed{table: t, firstID: int64(rd.NumSamples())}, nil
}

// apply makes the run's dedup use the seeded table (nothing without a seed or a dedup). New
// samples that all duplicate the base's append nothing: not an error.
func (s *dedupSeed) apply(cfg *pipeline.Config) {
	if s == nil || cfg.Dedup == nil {
		return
	}
	cfg.Dedup.Table, cfg.Dedup.FirstID = s.table, s.firstID
	cfg.AllowEmpty = cfg.AllowEmpty || s.firstID > 0
}

func (s *dedupSeed) close() {
	if s != nil {
		s.table.Close()
	}
}
