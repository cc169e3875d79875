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
	"io/fs"
	"iter"
	"os"
	"path/filepath"

	"github.com/mldf/convert/objstore"
)

// Errors returned by Set's methods, wrapped with the paths concerned.
var (
	// ErrNotRegular is a path that names an existing directory, device, pipe or socket.
	ErrNotRegular = errors.New("not a regular file or a new name")
	// ErrAlias is an output that is the same file as an input, the recipe or another output.
	ErrAlias = errors.New("would be overwritten")
)

// A file is one resolved path.
type file struct {
	role, name string
	loc        string      // real directory + base name: where a rename onto name lands
	fi         os.FileInfo // the file name refers to, symbolic links followed; nil when new
	object     bool        // loc is a bucket object ("s3://bucket/key"), not a local path
}

// Set holds the outputs of one command. The zero value is an empty set.
type Set struct {
	outs []file
	stat func(string) (os.FileInfo, error) // os.Stat; tests count the calls
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
	if f.fi != nil && !f.fi.Mode().IsRegular() {
		return fmt.Errorf("%s %s: %w (it is %s)", role, name, ErrNotRegular, kind(f.fi.Mode()))
	}
	for _, o := range s.outs {
		if same(o, f) {
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
	if f.fi != nil && !f.fi.IsDir() {
		return fmt.Errorf("%s %s: not a directory or a new name (it is %s)", role, name, kind(f.fi.Mode()))
	}
	s.outs = append(s.outs, f)
	return nil
}

// Check refuses when the file at name (an input, the recipe: a file that is read) is one of
// the outputs. role names it in errors. A name that does not exist is no output's.
func (s *Set) Check(role, name string) error {
	if objstore.IsURL(name) {
		obj, err := objectName(name)
		if err != nil {
			return nil // the command reports a malformed input URL itself, where it reads it
		}
		for _, o := range s.outs {
			if o.object && o.loc == obj {
				return aliasErr(o, role, name)
			}
		}
		return nil
	}
	name = localName(name)
	if !s.anyExists() {
		return nil
	}
	stat := s.stat
	if stat == nil {
		stat = os.Stat
	}
	fi, err := stat(name)
	if err != nil {
		return nil // the command reports an unreadable input itself, where it reads it
	}
	for _, o := range s.outs {
		if o.fi != nil && os.SameFile(o.fi, fi) {
			return aliasErr(o, role, name)
		}
	}
	return nil
}

// CheckInputs is Check for many inputs with their sizes, as the sources list them (10^6 files
// and more): it stats only the inputs whose size is that of an existing output file, since
// only an existing file can be an input, and a file has one size. It keeps nothing per input.
func (s *Set) CheckInputs(role string, inputs iter.Seq2[string, int64]) error {
	sizes := map[int64]bool{}
	for _, o := range s.outs {
		if o.fi != nil && o.fi.Mode().IsRegular() {
			sizes[o.fi.Size()] = true
		}
	}
	objects := s.anyObject()
	if len(sizes) == 0 && !objects {
		return nil
	}
	for name, size := range inputs {
		if !sizes[size] && !(objects && objstore.IsURL(name)) {
			continue
		}
		if err := s.Check(role, name); err != nil {
			return err
		}
	}
	return nil
}

func (s *Set) anyExists() bool {
	for _, o := range s.outs {
		if o.fi != nil {
			return true
		}
	}
	return false
}

func (s *Set) anyObject() bool {
	for _, o := range s.outs {
		if o.object {
			return true
		}
	}
	return false
}

// objectName returns the canonical name of a bucket URL ("s3://bucket/key"; az:// is
// azblob://); a malformed URL is an error naming it (objstore.ErrBadURL). Only for names
// objstore.IsURL reports as URLs.
func objectName(name string) (string, error) {
	l, err := objstore.Parse(name)
	if err != nil {
		return "", err
	}
	return l.Scheme + "://" + l.Bucket + "/" + l.Key, nil
}

// localName turns a file:// URL into the path it names; other names are returned as they are.
func localName(name string) string {
	if l, err := objstore.Parse(name); err == nil && l.IsLocal() {
		return l.Key
	}
	return name
}

func aliasErr(o file, role, name string) error {
	return fmt.Errorf("%s %s is the %s %s: it %w; choose another %s path", o.role, o.name, role, name, ErrAlias, o.role)
}

// same reports whether two outputs are one file: the same rename location, or the same
// existing file.
func same(a, b file) bool {
	if a.loc == b.loc {
		return true
	}
	return a.fi != nil && b.fi != nil && os.SameFile(a.fi, b.fi)
}

// resolve finds where name lands and what it names now.
func resolve(role, name string) (file, error) {
	f := file{role: role, name: name}
	if objstore.IsURL(name) { // a string with a scheme is never a local path
		obj, err := objectName(name)
		if err != nil {
			return f, fmt.Errorf("%s: %w", role, err)
		}
		f.loc, f.object = obj, true
		return f, nil
	}
	name = localName(name)
	abs, err := filepath.Abs(name)
	if err != nil {
		return f, fmt.Errorf("%s %s: %w", role, name, err)
	}
	dir, base := filepath.Split(abs)
	f.loc = filepath.Join(realDir(dir), base)
	fi, err := os.Stat(name)
	switch {
	case err == nil:
		f.fi = fi
	case errors.Is(err, fs.ErrNotExist):
		// A new name, or a symbolic link to a missing file: a rename replaces the link.
	default:
		return f, fmt.Errorf("%s %s: %w", role, name, err)
	}
	return f, nil
}

// realDir resolves the symbolic links of the deepest existing ancestor of dir and appends the
// parts that do not exist yet (a run creates them).
func realDir(dir string) string {
	d, rest := filepath.Clean(dir), ""
	for {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return filepath.Join(d, rest)
		}
		rest = filepath.Join(filepath.Base(d), rest)
		d = parent
	}
}

// kind names a file mode for messages.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsRegular():
		return "a regular file"
	}
	return "not a regular file (" + m.Type().String() + ")"
}
