package objstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/mldf/convert/internal/quote"
)

// The calls in this file work on names (paths and URLs) alike, so that no caller outside
// this package asks which kind a name is: the identity of a file spelled two ways, a folder
// that is a local directory or a prefix in a bucket, and the names a file (a manifest) gives
// relative to itself.

// Key returns the identity of the file or object name names, equal for two spellings of
// one: a bucket object's is "scheme://bucket/key" (az:// and azblob:// are one store), a
// local file's is its cleaned path (a file:// URL's path; "./a" and "a" are one). It is
// lexical: no I/O, symbolic links are not resolved (see Identify). A malformed URL is an
// error naming it (ErrBadURL).
func Key(name string) (string, error) {
	l, err := Parse(name)
	if err != nil {
		return "", err
	}
	if l.IsLocal() {
		return filepath.Clean(l.Key), nil
	}
	return l.Scheme + "://" + l.Bucket + "/" + l.Key, nil
}

// Identity is what a name refers to, for telling whether two names are one file (an output
// that would overwrite an input). See Identify.
type Identity struct {
	// Key is where a write to the name lands, equal for every spelling of it: Key's for an
	// object in a bucket; for a local name, the absolute path of its directory with the
	// symbolic links of its deepest existing ancestor resolved, plus its base name.
	Key string
	// File is the local file the name refers to now, symbolic links followed (os.SameFile
	// compares two, which also catches hard links and bind mounts); nil for an object in a
	// bucket and for a local name that does not exist.
	File fs.FileInfo
	// Object is set for an object in a bucket: it is only ever equal to a name of the same
	// Key.
	Object bool
}

// Identify resolves name: for an object, its Key (no I/O); for a local name (a file:// URL's
// path; a name Parse refuses without a scheme is taken as the operating system's), where a
// rename onto it lands and the file there now (a stat). A malformed URL is an error naming
// it (ErrBadURL); so is a local name that cannot be statted for another reason than not
// existing.
func Identify(name string) (Identity, error) {
	p, local := inputPath(name)
	if !local {
		k, err := Key(name)
		if err != nil {
			return Identity{}, err
		}
		return Identity{Key: k, Object: true}, nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return Identity{}, err
	}
	dir, base := filepath.Split(abs)
	id := Identity{Key: filepath.Join(realDir(dir), base)}
	fi, err := os.Stat(p)
	switch {
	case err == nil:
		id.File = fi
	case errors.Is(err, fs.ErrNotExist):
		// A new name, or a symbolic link to a missing file: a rename replaces the link.
	default:
		return Identity{}, err
	}
	return id, nil
}

// Same reports whether two identities are one file or object: the same Key, or the same
// existing local file.
func (a Identity) Same(b Identity) bool {
	return a.Key == b.Key || a.File != nil && b.File != nil && os.SameFile(a.File, b.File)
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

// Folder is a folder of files a source reads: a directory of this machine or the objects
// under a prefix in a bucket. FolderOf names one; List lists its files alike for both. A
// source with rules of its own for local directories (symbolic links followed and loops
// refused, os.Root) asks the folder for that capability with Dir.
type Folder struct {
	root string // as written, without a trailing "/"
	dir  string // the local directory; "" in a bucket
	loc  bool
}

// FolderOf returns the folder root names (a path, a file:// URL, or a bucket URL whose key
// is the prefix). It does no I/O; a malformed URL is a folder in no store, whose List
// fails with ErrBadURL naming it.
func FolderOf(root string) Folder {
	f := Folder{root: strings.TrimSuffix(root, "/")}
	if f.root == "" {
		f.root = root // "/" stays the file system's root
	}
	if p, ok := inputPath(root); ok {
		f.dir, f.loc = p, true
	}
	return f
}

// String returns the folder's name as written (without a trailing "/").
func (f Folder) String() string { return f.root }

// Dir returns the folder's directory on this machine and true when it is one: a caller that
// walks local directories with the file system's own rules (symbolic links, os.Root, named
// pipes refused) walks it; false for a folder in a bucket, which is listed.
func (f Folder) Dir() (string, bool) { return f.dir, f.loc }

// List lists the files under the folder (recursively), in key order, as List(root + "/").
func (f Folder) List(ctx context.Context, c *Client) iter.Seq2[Attrs, error] {
	return c.List(ctx, f.root+"/")
}

// Rel returns the name of a listed file relative to the folder ("/"-separated).
func (f Folder) Rel(name string) string { return strings.TrimPrefix(name, f.root+"/") }

// Errors of Ref: the name a file gives may not lead out of the file's bucket.
var (
	// ErrEscapes means a relative name in a file in a bucket climbs above the bucket's root.
	ErrEscapes = errors.New("a relative path climbs out of the bucket")
	// ErrOutsideBucket means a file in a bucket names something outside its bucket: a local
	// path (absolute, or a file:// URL), another bucket or store, or a URL of an unknown
	// scheme. Such a file never reaches the files of the machine reading it.
	ErrOutsideBucket = errors.New("a file in a bucket names only objects in its bucket")
)

// Ref returns what ref, written in a file (a manifest) in the folder dir, names:
//
//   - in a local folder: a bucket URL as it is, a file:// URL as its path, an absolute path
//     as it is, else ref joined to dir;
//   - in a folder in a bucket: ref joined to dir ("." and ".." resolved, never above the
//     bucket's root: ErrEscapes), or a URL of the same bucket; anything else (an absolute
//     path, file://, another bucket or scheme) is ErrOutsideBucket.
//
// A malformed URL is an error (ErrBadURL).
func Ref(dir, ref string) (string, error) {
	if d, local := inputPath(dir); local {
		if IsURL(ref) {
			if _, err := Parse(ref); err != nil {
				return "", err
			}
			return ref, nil
		}
		if p, ok := LocalPath(ref); ok && p != ref { // a file:// URL
			return p, nil
		}
		if filepath.IsAbs(ref) {
			return ref, nil
		}
		return filepath.Join(d, ref), nil
	}
	root, err := Parse(dir + "/")
	if err != nil {
		return "", err
	}
	if p, ok := LocalPath(ref); IsURL(ref) || (ok && p != ref) { // a URL, file:// too
		l, err := Parse(ref)
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrOutsideBucket, err)
		}
		if l.IsLocal() || l.Scheme != root.Scheme || l.Bucket != root.Bucket {
			return "", fmt.Errorf("%w (%s), not %s", ErrOutsideBucket, root.WithKey("").String(), quote.Q(ref))
		}
		return ref, nil
	}
	if path.IsAbs(ref) || filepath.IsAbs(ref) {
		return "", fmt.Errorf("%w (%s), not the local path %s", ErrOutsideBucket, root.WithKey("").String(), quote.Q(ref))
	}
	key := path.Join(root.Key, ref)
	if key == ".." || strings.HasPrefix(key, "../") || key == "." {
		return "", fmt.Errorf("%w: %s", ErrEscapes, quote.Q(ref))
	}
	clip := root.WithKey(key)
	if _, err := Parse(clip.String()); err != nil {
		return "", err
	}
	return clip.String(), nil
}

// Dir returns the folder name is in: a local path's directory (filepath.Dir), a URL with its
// last key segment removed (the scheme's "//" kept, which path.Dir would clean away).
func Dir(name string) string {
	if p, local := inputPath(name); local {
		return filepath.Dir(p)
	}
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return ""
}

// Target is where a command writes an output: a local file, which writers that need a file
// descriptor of their own write themselves (the page writer's unnamed temporary file,
// copy_file_range, an SCDL folder), or an object in a bucket, written with Create or
// NewUpload. TargetOf names one; Path is the capability of a local one. Small writes need
// neither: WriteFile, Create and MakeParents serve both.
type Target struct {
	name string
	path string
	loc  bool
}

// TargetOf returns the target name names. It does no I/O. A name Parse refuses (a malformed
// URL, a path that is not UTF-8) is a target in no store: writing it through the Client
// fails with ErrBadURL naming it.
func TargetOf(name string) Target {
	t := Target{name: name}
	t.path, t.loc = LocalPath(name)
	return t
}

// String returns the target's name as written.
func (t Target) String() string { return t.name }

// Path returns the local path of the target (a file:// URL's path) and true when it is a
// file of this machine; false for an object in a bucket.
func (t Target) Path() (string, bool) { return t.path, t.loc }

// IsDir reports whether name is a folder rather than a file: a local directory (symbolic
// links followed), or a prefix in a bucket with at least one object under name + "/" (one
// listing request). An archive stored as a folder (SCDL) is opened as one. A name that
// cannot be checked (a missing path, a denied listing) is an error.
func (c *Client) IsDir(ctx context.Context, name string) (bool, error) {
	if p, ok := inputPath(name); ok {
		fi, err := os.Stat(p)
		if err != nil {
			return false, err
		}
		return fi.IsDir(), nil
	}
	for _, err := range c.List(ctx, strings.TrimSuffix(name, "/")+"/") {
		return err == nil, err
	}
	return false, nil
}
