package recipe

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
	"github.com/mldf/convert/sources/audio"
	"github.com/mldf/convert/sources/imagefolder"
	"github.com/mldf/convert/sources/tarsrc"
)

// keyColumn returns the column that holds a sample's key or source path for the recipe's
// source type: "path" for image and audio folders (the file's path relative to the folder),
// "__key__" for tar shards; "" for the other sources.
func keyColumn(sourceType string) string {
	switch sourceType {
	case "images":
		return imagefolder.ColumnPath
	case "audio_folder":
		return audio.ColPath
	case "tar":
		return tarsrc.ColumnKey
	}
	return ""
}

// addKeys makes the samples carry their key (sample.Key, slash-separated) as a text column
// when a field reads the source's key column (from: path, from: __key__).
func addKeys(p *Plan) {
	col := keyColumn(p.Recipe.Source.Type)
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

// Run implements sources.Source.
func (w *withKeys) Run(ctx context.Context, emit func(sample.Sample) error) error {
	return w.Source.Run(ctx, func(s sample.Sample) error {
		if s.Key != "" {
			s.Set(w.column, sample.Value{Kind: sample.KindString, Bytes: []byte(filepath.ToSlash(s.Key))})
		}
		return emit(s)
	})
}
