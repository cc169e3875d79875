package scdlsrc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mldf/convert/internal/cells"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sources"
)

// Open opens the matrices a cell source type is given (source.path, or every match of
// source.inputs, each a glob) with open, and returns the source over them: each cell a
// sample. With expand, inputs are expanded as bucket listings and brace ranges are (h5ad
// files); else as local globs (10x directories, archives).
func Open(ctx context.Context, cfg sources.Config, expand bool, open func(path string) (cells.Input, error)) (*Source, error) {
	var paths []string
	switch {
	case expand:
		store := cfg.Store
		if store == nil {
			store = objstore.New()
		}
		found, err := store.Expand(ctx, cfg.Inputs) // local paths: no bucket is opened
		if err != nil {
			return nil, fmt.Errorf("source.inputs: %w", err)
		}
		for _, a := range found {
			paths = append(paths, a.URL)
		}
	case cfg.Path != "":
		paths = []string{cfg.Path}
	default:
		for _, in := range cfg.Inputs {
			m := []string{in}
			if strings.ContainsAny(in, "*?[") {
				var err error
				if m, err = filepath.Glob(in); err != nil || len(m) == 0 {
					return nil, fmt.Errorf("source.inputs: %q matches nothing", in)
				}
			}
			paths = append(paths, m...)
		}
	}
	var inputs []cells.Input
	var sizes []int64
	for _, p := range paths {
		in, err := open(p)
		if err != nil {
			for _, in := range inputs {
				in.Close()
			}
			return nil, err
		}
		inputs = append(inputs, in)
		sizes = append(sizes, pathSize(p))
	}
	return New(inputs, sizes), nil
}

// pathSize is a file's size, or the total size of a directory's files.
func pathSize(p string) int64 {
	var n int64
	filepath.WalkDir(p, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
