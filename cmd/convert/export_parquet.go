package main

import (
	"context"

	"github.com/mldf/convert/export"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/recipe"
)

// exportParquet writes FILE's samples as Hugging Face-style Parquet, with the class names of
// its class-label fields (held in the file, or beside an older one in FILE.classes.json) as
// ClassLabel features and the key field (--key, default a text field called path, key or
// __key__) as the path of image and audio values.
func exportParquet(ctx context.Context, c *objstore.Client, r *mldf.Reader, file, dir, key string, fileSamples int) (export.Result, error) {
	classes, err := recipe.ClassNames(ctx, c, r, file)
	if err != nil {
		return export.Result{}, err
	}
	return export.Parquet(ctx, r, dir, export.ParquetOptions{Classes: classes, FileSamples: fileSamples, Key: key})
}

// exportFolder writes FILE's images as an image folder whose class folders are the label
// field's class names when it has them (held in the file, or in FILE.classes.json).
func exportFolder(ctx context.Context, c *objstore.Client, r *mldf.Reader, file, dir string, o export.FolderOptions) (export.Result, error) {
	classes, err := recipe.ClassNames(ctx, c, r, file)
	if err != nil {
		return export.Result{}, err
	}
	o.Classes = classes
	return export.Folder(ctx, r, dir, o)
}
