package main

import (
	"context"

	"github.com/mldf/convert/export"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/reader"
	"github.com/mldf/convert/recipe"
)

// exportParquet writes FILE's samples as Hugging Face-style Parquet, with the class names kept
// beside FILE (FILE.classes.json) as ClassLabel features.
func exportParquet(ctx context.Context, c *objstore.Client, r *reader.Reader, file, dir string, fileSamples int) (export.Result, error) {
	classes, err := recipe.ReadClasses(ctx, c, file)
	if err != nil {
		return export.Result{}, err
	}
	return export.Parquet(ctx, r, dir, export.ParquetOptions{Classes: classes, FileSamples: fileSamples})
}
