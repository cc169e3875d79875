// Package outpath checks the paths a command is about to write, before any work starts: each
// must be a new name or a regular file, and none may be an input, the recipe, or another output.
//
// Paths are compared two ways, so that no spelling gets past it: by where a rename onto the
// path lands (the directory with its symbolic links resolved, plus the base name), and, for
// files that exist, by device and inode (os.SameFile), which catches symbolic links, hard
// links, "./x" against "x" and bind mounts alike. Bucket URLs (s3://, gs://, az://) are
// compared by store, bucket and key (az:// and azblob:// are one store); file:// URLs are
// the local paths they name.
package outpath

import (
	"errors"
	"fmt"
	"iter"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/objstore"
)

// Errors returned by Set's methods, wrapped with the paths concerned.
var (
	// ErrNotRegular is a path that names an existing directory, device, pipe or socket.
	ErrNotRegular = errors.New("not a regular file or a new name")
	// ErrAlias is an output that is the same file as an input, the recipe or another output.
	ErrAlias = errors.New("would be overwritten")
)

// A file is one resolved name: what objstore.Identify says it refers to.
type file struct {
	role, name string
	id         objstore.Identity
}

// Set holds the outputs of one command. The zero value is an empty set.
type Set struct {
	outs     []file
	identify func(string) (objstore.Identity, error) // objstore.Identify; tests count the calls
}

// Add resolves an output path and adds it to the set. role names it in errors ("output",
// "report", "rejects"...). It refuses a path that names an existing directory, device, pipe or
// socket (directly or through a symbolic link), and a path that is an output already added.
// An empty name is ignored.
func (s *Set) Add(role, name string) error {
	if name == "" {
		return nil
	}
	f, err := resolve(role, name)
	if err != nil {
		return err
	}
	if f.id.File != nil && !f.id.File.Mode().IsRegular() {
		return fmt.Errorf("%s %s: %w (it is %s)", role, name, ErrNotRegular, inputfile.Kind(f.id.File.Mode()))
	}
	for _, o := range s.outs {
		if o.id.Same(f.id) {
			return fmt.Errorf("%s %s is also the %s (%s): one %w by the other; give them different paths",
				role, name, o.role, o.name, ErrAlias)
		}
	}
	s.outs = append(s.outs, f)
	return nil
}

// AddDir adds an output directory (a command that writes files into it): it must be a new
// name or an existing directory. Files are checked against it with Check only when they are
// the directory itself.
func (s *Set) AddDir(role, name string) error {
	f, err := resolve(role, name)
	if err != nil {
		return err
	}
	if f.id.File != nil && !f.id.File.IsDir() {
		return fmt.Errorf("%s %s: not a directory or a new name (it is %s)", role, name, inputfile.Kind(f.id.File.Mode()))
	}
	s.outs = append(s.outs, f)
	return nil
}

// Check refuses when the file at name (an input, the recipe: a file that is read) is one of
// the outputs. role names it in errors. A name that does not exist is no output's.
func (s *Set) Check(role, name string) error {
	if !s.anyExists() && len(s.objects()) == 0 {
		return nil // no output exists yet, and none is an object: no input can be one
	}
	identify := s.identify
	if identify == nil {
		identify = objstore.Identify
	}
	id, err := identify(name)
	if err != nil {
		return nil // the command reports an unreadable input or a malformed URL itself, where it reads it
	}
	for _, o := range s.outs {
		if o.id.Same(id) {
			return aliasErr(o, role, name)
		}
	}
	return nil
}

// CheckInputs is Check for many inputs with their sizes, as the sources list them (10^6 files
// and more): it resolves only the inputs whose size is that of an existing output file (an
// input exists, and a file has one size) or whose key (objstore.Key, no I/O) is that of an
// output in a bucket. It keeps nothing per input.
func (s *Set) CheckInputs(role string, inputs iter.Seq2[string, int64]) error {
	sizes := map[int64]bool{}
	for _, o := range s.outs {
		if o.id.File != nil && o.id.File.Mode().IsRegular() {
			sizes[o.id.File.Size()] = true
		}
	}
	objects := s.objects()
	if len(sizes) == 0 && len(objects) == 0 {
		return nil
	}
	for name, size := range inputs {
		if !sizes[size] {
			if len(objects) == 0 {
				continue
			}
			if k, err := objstore.Key(name); err != nil || !objects[k] {
				continue
			}
		}
		if err := s.Check(role, name); err != nil {
			return err
		}
	}
	return nil
}

func (s *Set) anyExists() bool {
	for _, o := range s.outs {
		if o.id.File != nil {
			return true
		}
	}
	return false
}

// objects returns the keys of the outputs that are objects in a bucket.
func (s *Set) objects() map[string]bool {
	var m map[string]bool
	for _, o := range s.outs {
		if o.id.Object {
			if m == nil {
				m = map[string]bool{}
			}
			m[o.id.Key] = true
		}
	}
	return m
}

func aliasErr(o file, role, name string) error {
	return fmt.Errorf("%s %s is the %s %s: it %w; choose another %s path", o.role, o.name, role, name, ErrAlias, o.role)
}

// resolve finds where name lands and what it names now (objstore.Identify).
func resolve(role, name string) (file, error) {
	id, err := objstore.Identify(name)
	if errors.Is(err, objstore.ErrBadURL) {
		return file{}, fmt.Errorf("%s: %w", role, err)
	}
	if err != nil {
		return file{}, fmt.Errorf("%s %s: %w", role, name, err)
	}
	return file{role: role, name: name, id: id}, nil
}
