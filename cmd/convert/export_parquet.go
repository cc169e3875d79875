package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mldf/convert/export"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/reader"
	"github.com/mldf/convert/recipe"
)

// exportParquet writes FILE's samples as Hugging Face-style Parquet, with the class names kept
// beside FILE (FILE.classes.json) as ClassLabel features.
func exportParquet(ctx context.Context, c *objstore.Client, r *reader.Reader, file, dir string, fileSamples int) (export.Result, error) {
	classes, err := readClasses(ctx, c, file)
	if err != nil {
		return export.Result{}, err
	}
	return export.Parquet(ctx, r, dir, export.ParquetOptions{Classes: classes, FileSamples: fileSamples})
}

// readClasses is recipe.ReadClasses for a file or an object in a bucket (FILE.classes.json
// beside it; none is no error).
func readClasses(ctx context.Context, c *objstore.Client, file string) (map[string][]string, error) {
	if _, local, err := localPath(file); err != nil || local {
		return recipe.ReadClasses(file)
	}
	name := file + recipe.ClassesSuffix
	rd, err := c.Open(ctx, name)
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("class names: %w", err)
	}
	defer rd.Close()
	b, err := io.ReadAll(io.LimitReader(rd, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("class names: %w", err)
	}
	var m map[string][]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("class names %s: %w", name, err)
	}
	return m, nil
}
