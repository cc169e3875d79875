package scdl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/objstore"
)

// Every file of an archive (a member) is opened through openMember: resolved inside the
// archive directory (os.Root: no "..", no absolute path, no symbolic link that leads out of
// it), refused when it is a symbolic link itself or anything but a regular file (a named
// pipe, a device, a directory), and opened non-blocking so that a named pipe cannot hang
// open(2). The archive directory itself may be a symbolic link: the user named it.
//
// An archive in a bucket (a prefix: s3://b/x.scdl/header.sch, ...) is read through objstore
// with ranged requests: a member is the object at the prefix plus its relative path, which
// may not climb out of the prefix ("..", an absolute path); a feature index directory is the
// objects listed under its prefix.

// archive is where an archive's members are read: a local directory (store nil) or a prefix
// in a bucket, read through store under ctx.
type archive struct {
	dir   string // the directory, or the bucket URL of the prefix (no trailing "/")
	store *objstore.Client
	ctx   context.Context
}

// memberFile is an open member: a local file or an object in a bucket.
type memberFile interface {
	io.ReaderAt
	io.Closer
}

// open opens the member rel for reading and returns its size (openMember's rules locally).
func (a archive) open(rel string) (memberFile, int64, error) {
	if a.store == nil {
		f, st, err := openMember(a.dir, rel)
		if err != nil {
			return nil, 0, err
		}
		return f, st.Size(), nil
	}
	url, err := a.url(rel)
	if err != nil {
		return nil, 0, err
	}
	ra, err := a.store.OpenReaderAt(a.ctx, url)
	if err != nil {
		if errors.Is(err, objstore.ErrNotFound) {
			return nil, 0, fmt.Errorf("%s: %s: %w", a.dir, rel, fs.ErrNotExist)
		}
		return nil, 0, fmt.Errorf("%s: %s: %w", a.dir, rel, err)
	}
	return ra, ra.Size(), nil
}

// url is the object of member rel in a bucket; a path that would leave the prefix is an
// ErrMember, as locally.
func (a archive) url(rel string) (string, error) {
	clean := path.Clean(rel)
	if rel == "" || path.IsAbs(rel) || clean == ".." || strings.HasPrefix(clean, "../") || clean != rel {
		return "", fmt.Errorf("%s: %w: %s leads out of the archive (a symbolic link or \"..\")", a.dir, ErrMember, rel)
	}
	return a.dir + "/" + rel, nil
}

// read reads a small member whole (readMember's rules).
func (a archive) read(rel string, limit int64) ([]byte, error) {
	f, size, err := a.open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > limit {
		return nil, fmt.Errorf("%s: %w", a.dir, ruleErr("file size", rel, "%d bytes, more than the %d this reader accepts", size, limit))
	}
	b, err := io.ReadAll(io.NewSectionReader(f, 0, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", a.dir, rel, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w", a.dir, ruleErr("file size", rel, "more than the %d bytes this reader accepts", limit))
	}
	return b, nil
}

// exists reports whether rel exists in the archive: locally as any kind of file (a dangling
// symbolic link included); in a bucket as an object or a prefix with objects under it.
func (a archive) exists(rel string) bool {
	if a.store == nil {
		return memberExists(a.dir, rel)
	}
	url, err := a.url(rel)
	if err != nil {
		return false
	}
	if _, err := a.store.Stat(a.ctx, url); err == nil {
		return true
	}
	for _, err := range a.store.List(a.ctx, url+"/") {
		return err == nil
	}
	return false
}

// list returns the names of the files directly in the folder rel (its subfolders are not
// listed): locally through os.Root (rel must be a directory inside the archive), in a bucket
// the objects under the prefix rel + "/".
func (a archive) list(rel string) ([]string, error) {
	if a.store == nil {
		return listMembers(a.dir, rel)
	}
	url, err := a.url(rel)
	if err != nil {
		return nil, err
	}
	var names []string
	for o, err := range a.store.List(a.ctx, url+"/") {
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", a.dir, rel, err)
		}
		if name := strings.TrimPrefix(o.URL, url+"/"); !strings.Contains(name, "/") {
			names = append(names, name)
		}
	}
	if names == nil {
		if _, err := a.store.Stat(a.ctx, url); err == nil {
			return nil, fmt.Errorf("%s: %w: %s is an object, not a directory", a.dir, ErrMember, rel)
		}
		return nil, fmt.Errorf("%s: %s: %w", a.dir, rel, fs.ErrNotExist)
	}
	return names, nil
}

// listMembers returns the names in the directory rel of the local archive dir.
func listMembers(dir, rel string) ([]string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	st, err := root.Lstat(rel)
	if err != nil {
		return nil, memberErr(dir, rel, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: %w: %s is %s, not a directory", dir, ErrMember, rel, inputfile.Kind(st.Mode()))
	}
	d, err := root.Open(rel)
	if err != nil {
		return nil, memberErr(dir, rel, err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", dir, rel, err)
	}
	return names, nil
}

// Limits on the side files read whole (docs/SCDL.md §8). Their sizes are checked before
// anything is read.
const (
	// MaxSmallFile bounds metadata.json, version.json and dtypes.json: a few dozen bytes
	// in any archive BioNeMo writes.
	MaxSmallFile = 1 << 20
	// MaxIndexFile bounds a feature index's labels.json and cumulative_sum_index.npy: one
	// label and one int64 per block, and an archive has one block per input.
	MaxIndexFile = 64 << 20
	// MaxCellValues bounds the stored values of one cell (a cell has at most one value per
	// gene; 2^24 is many times the largest gene panel). A cell is read whole into memory.
	MaxCellValues = 1 << 24
)

// ErrMember means an archive member is not a regular file inside the archive: a symbolic
// link, a named pipe, a device, a directory, or a path that leads out of the archive.
var ErrMember = errors.New("archive member is not a regular file inside the archive")

// openMember opens the member rel (a '/'-separated path relative to the archive dir) for
// reading. Errors name the archive and the member.
func openMember(dir, rel string) (*os.File, fs.FileInfo, error) {
	where := filepath.Join(dir, filepath.FromSlash(rel))
	if err := inputfile.CheckPath(where); err != nil {
		return nil, nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	lst, err := root.Lstat(rel)
	if err != nil {
		return nil, nil, memberErr(dir, rel, err)
	}
	if !lst.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: %w: %s is %s", dir, ErrMember, rel, inputfile.Kind(lst.Mode()))
	}
	// The mode is checked again on the open file: the member may have been replaced since.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, memberErr(dir, rel, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %s: %w", dir, rel, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w: %s is %s", dir, ErrMember, rel, inputfile.Kind(st.Mode()))
	}
	return f, st, nil
}

// memberErr describes an error of os.Root: a path leading out of the archive is an
// ErrMember, anything else (a missing file) keeps its error.
func memberErr(dir, rel string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil && pe.Err.Error() == "path escapes from parent" {
		return fmt.Errorf("%s: %w: %s leads out of the archive (a symbolic link or \"..\")", dir, ErrMember, rel)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %s: %w", dir, rel, fs.ErrNotExist)
	}
	return fmt.Errorf("%s: %s: %w", dir, rel, err)
}

// memberExists reports whether rel exists in the archive (as any kind of file, a dangling
// symbolic link included), without following it.
func memberExists(dir, rel string) bool {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return false
	}
	defer root.Close()
	_, err = root.Lstat(rel)
	return err == nil
}
