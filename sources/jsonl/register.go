package jsonl

import (
	"context"
	"strings"

	"github.com/mldf/convert/sources"
)

// The capabilities of the source.
var (
	_ sources.Sharder       = (*Source)(nil)
	_ sources.FirstRecorder = (*Source)(nil)
)

// The range of the max_line_bytes option (0 means DefaultMaxLineSize).
const (
	MinLineBytes = 1 << 10
	MaxLineBytes = 1 << 30
)

func init() {
	sources.Register(sources.Spec{
		Name:       "jsonl",
		Inputs:     sources.ByInputs,
		Buckets:    true,
		Records:    true,
		TypedReads: true,
		Options: []sources.Option{{Key: "max_line_bytes", Check: func(label string, v any) string {
			return sources.CheckSize(label, v, MinLineBytes, MaxLineBytes, "0 = "+sources.FormatSize(DefaultMaxLineSize))
		}}},
		Open: func(_ context.Context, cfg sources.Config) (sources.Source, error) {
			return New(cfg.Inputs, columns(cfg.Reads), Options{MaxLineSize: int(cfg.Int("max_line_bytes")), Store: cfg.Store})
		},
	})
}

// columns says which keys the source extracts, and as what: each key once (a text and a
// tokens field may read one key), each alternative of "a|b" optional.
func columns(reads []sources.Read) []Column {
	var cols []Column
	seen := map[string]bool{}
	for _, r := range reads {
		keys := strings.Split(r.From, "|")
		for _, k := range keys {
			if seen[k] {
				continue
			}
			seen[k] = true
			cols = append(cols, Column{Name: k, Key: k, Kind: r.Kind, Required: r.Required && len(keys) == 1})
		}
	}
	return cols
}
