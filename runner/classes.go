package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/recipe"
)

// ClassNames returns the class names of r's class-label fields by field name: the names the
// file holds (MLDF 1.1, docs/FORMAT.md §14), else those of the side file FILE.classes.json
// that older writers put beside it (read through store; names that do not match the field's
// arguments are left out: unknown, never wrong). file is the name r was opened from.
func ClassNames(ctx context.Context, store *objstore.Client, r *mldf.Reader, file string) (map[string][]string, error) {
	out := map[string][]string{}
	var side map[string][]string
	sideRead := false
	for k, fd := range r.Fields() {
		if _, ok := r.NumClasses(k); !ok {
			continue
		}
		names, err := r.ClassNames(k)
		if err != nil {
			return nil, err
		}
		if names == nil {
			if !sideRead {
				if side, err = ReadClasses(ctx, store, file); err != nil {
					return nil, err
				}
				sideRead = true
			}
			if n, ok := side[fd.Name]; ok && encoders.CheckClassNames(fd.Arguments, n) == nil {
				names = n
			}
		}
		if names != nil {
			out[fd.Name] = names
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// WriteClasses writes class names by field to path atomically through store (a local file,
// a file:// URL or an object in a bucket: it appears whole or not at all; with a nil
// store, a client of its own).
func WriteClasses(ctx context.Context, store *objstore.Client, path string, classes map[string][]string) error {
	names := make([]string, 0, len(classes))
	for n := range classes {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("{")
	for i, n := range names {
		if i > 0 {
			b.WriteString(",")
		}
		k, _ := json.Marshal(n)
		b.WriteString("\n  " + string(k) + ": " + string(encoders.ClassNamesJSON(classes[n])))
	}
	b.WriteString("\n}\n")
	if store == nil {
		store = objstore.New()
		defer store.Close()
	}
	if err := store.WriteFile(ctx, path, []byte(b.String())); err != nil {
		return fmt.Errorf("class names: %w", err)
	}
	return nil
}

// maxClassesFile bounds the class-names file read back.
const maxClassesFile = 64 << 20

// ReadClasses reads the class names written beside an MLDF file or object
// (FILE.classes.json, through store; with a nil store, a client of its own); it returns
// nil, nil when there is none.
func ReadClasses(ctx context.Context, store *objstore.Client, file string) (map[string][]string, error) {
	if store == nil {
		store = objstore.New()
		defer store.Close()
	}
	b, err := store.ReadFile(ctx, file+recipe.ClassesSuffix, maxClassesFile)
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("class names: %w", err)
	}
	var m map[string][]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("class names %s: %w", file+recipe.ClassesSuffix, err)
	}
	return m, nil
}

// PartClasses reads the class names beside the parts of a sharded run: nil when none has
// any, an error when they differ (a merged file gets one set).
func PartClasses(ctx context.Context, store *objstore.Client, parts []string) (map[string][]string, error) {
	var first map[string][]string
	var from string
	for i, p := range parts {
		c, err := ReadClasses(ctx, store, p)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			first, from = c, p
			continue
		}
		a, _ := json.Marshal(first)
		b, _ := json.Marshal(c)
		if string(a) != string(b) {
			return nil, fmt.Errorf("class names differ between %s%s and %s%s", from, recipe.ClassesSuffix, p, recipe.ClassesSuffix)
		}
	}
	return first, nil
}
