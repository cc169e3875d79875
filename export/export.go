// Package export writes the samples of an MLDF file back out, as an ImageFolder tree
// (DIR/<label>/<index>.<ext>) or as WebDataset tar shards (DIR/shard-NNNNNN.tar).
// Every file appears atomically (a temporary file renamed into place), and the same input
// always exports to identical bytes.
package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mldf/convert/format/mldf"
)

// Errors. Each is wrapped with the file, and where it applies the sample and field.
var (
	// ErrField means a named field is missing or of a type the format cannot use, or the
	// format needs a field the file does not have.
	ErrField = errors.New("export: unusable field")
	// ErrValue means a stored value cannot be written in the target format (a negative label,
	// a payload whose size does not match its metadata, an unknown image mode, a bad key).
	ErrValue = errors.New("export: value cannot be exported")
	// ErrDirNotEmpty means the output directory exists and holds files; stale files of an
	// earlier export would mix with the new ones.
	ErrDirNotEmpty = errors.New("export: output directory is not empty")
	// ErrOption means an invalid option.
	ErrOption = errors.New("export: invalid option")
)

// Result says what an export wrote.
type Result struct {
	Samples int      // samples written
	Skipped int      // samples not written (folder: no image payload)
	Files   int      // files (folder) or shards (webdataset) written
	Bytes   int64    // bytes written
	Ignored []string // fields the format does not write
	Notes   []string // what the caller should tell the user (folder: why classes are numbered)
	// Members maps each exported field to the member suffix it gets in a WebDataset sample
	// ("jpg", "cls", "caption.txt"; image fields may also use "png" per sample).
	Members map[string]string
}

// where formats the location of an error.
func where(r *mldf.Reader, i, f int) string {
	if f < 0 {
		return fmt.Sprintf("%s: sample %d", r.Name(), i)
	}
	return fmt.Sprintf("%s: sample %d, field %q", r.Name(), i, r.Fields()[f].Name)
}

// prepareDir creates dir, or checks that it is empty.
func prepareDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("export: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("%w: %s holds %d entries (first %q); remove them or pick another directory",
			ErrDirNotEmpty, dir, len(entries), entries[0].Name())
	}
	return nil
}

// atomicFile is a temporary file in the target's directory that Commit renames to the target.
type atomicFile struct {
	f      *os.File
	target string
	done   bool
}

func createAtomic(target string) (*atomicFile, error) {
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return &atomicFile{f: f, target: target}, nil
}

func (a *atomicFile) Write(p []byte) (int, error) { return a.f.Write(p) }

// Commit makes the file 0644, optionally syncs it, closes it and renames it into place.
func (a *atomicFile) Commit(sync bool) error {
	err := a.f.Chmod(0o644) // CreateTemp makes 0600 files
	if err == nil && sync {
		err = a.f.Sync()
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(a.f.Name(), a.target)
	}
	if err != nil {
		os.Remove(a.f.Name())
		return fmt.Errorf("export: writing %s: %w", a.target, err)
	}
	a.done = true
	return nil
}

// Abort removes the temporary file unless Commit succeeded.
func (a *atomicFile) Abort() {
	if !a.done {
		a.f.Close()
		os.Remove(a.f.Name())
		a.done = true
	}
}

// writeFileAtomic writes b to path through a temporary file.
func writeFileAtomic(path string, b []byte) error {
	a, err := createAtomic(path)
	if err != nil {
		return err
	}
	defer a.Abort()
	if _, err := a.Write(b); err != nil {
		return fmt.Errorf("export: writing %s: %w", path, err)
	}
	return a.Commit(false)
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func isImage(t mldf.TypeID) bool { return t >= mldf.TypeImageRaw && t <= mldf.TypeImagePNG }

// pickField resolves a field by name, or, when name is "", the field called def if it
// passes ok, else the only field that passes ok.
func pickField(r *mldf.Reader, name, def, what, flag string, ok func(mldf.TypeID) bool) (int, error) {
	fields := r.Fields()
	if name != "" {
		f := r.FieldIndex(name)
		if f < 0 {
			return -1, fmt.Errorf("%s: %w: no field %q (fields: %s)", r.Name(), ErrField, name, names(fields))
		}
		if !ok(fields[f].Type) {
			return -1, fmt.Errorf("%s: %w: field %q is %s, not %s", r.Name(), ErrField, name, fields[f].Type, what)
		}
		return f, nil
	}
	if f := r.FieldIndex(def); f >= 0 && ok(fields[f].Type) {
		return f, nil
	}
	found := -1
	for k, fd := range fields {
		if ok(fd.Type) {
			if found >= 0 {
				return -1, fmt.Errorf("%s: %w: several %s fields (%q, %q); name one with %s", r.Name(), ErrField, what, fields[found].Name, fd.Name, flag)
			}
			found = k
		}
	}
	if found < 0 {
		return -1, fmt.Errorf("%s: %w: no %s field (fields: %s)", r.Name(), ErrField, what, names(fields))
	}
	return found, nil
}

func names(fields []mldf.FieldDesc) string {
	s := make([]string, len(fields))
	for k, f := range fields {
		s[k] = fmt.Sprintf("%s %s", f.Name, f.Type)
	}
	return strings.Join(s, ", ")
}

// checkCtx returns ctx's error every 256 samples.
func checkCtx(ctx context.Context, i int) error {
	if i&255 == 0 {
		return ctx.Err()
	}
	return nil
}
