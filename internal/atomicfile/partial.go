package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrBusy means a partial file is held by another process (a run still writing it).
var ErrBusy = errors.New("in use by another process")

// PartialName is the name of the named temporary file of a resumable write to target, with
// suffix (".partial" for the file that becomes the target, other suffixes for its companion
// files): ".BASE" + suffix beside the target. The name never matches ".BASE.tmp-*", so
// RemoveLeftovers leaves it for the next run to resume.
func PartialName(target, suffix string) string {
	dir, base := filepath.Split(target)
	return filepath.Join(dir, "."+base+suffix)
}

// OpenPartial opens the named temporary file tmp of a resumable write to target: created
// empty when it does not exist (or when fresh is set: truncated to nothing), else reopened
// as it is, for a run that continues where a killed one stopped. Unlike Create, the file
// survives a crash under its name; Commit renames it onto target as Create's file is, and
// Abort removes it. Close (of the embedded *os.File) keeps it for a later run. The file is
// locked exclusively while open: a second process gets ErrBusy.
func OpenPartial(target, tmp string, perm fs.FileMode, fresh bool) (*File, error) {
	if fi, err := os.Lstat(target); err == nil && !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0 {
		return nil, fmt.Errorf("atomic write %s: %w", target, ErrNotRegular)
	}
	f, err := OpenLocked(tmp, perm, fresh)
	if err != nil {
		return nil, err
	}
	return &File{File: f, target: target, tmp: tmp}, nil
}

// OpenLocked opens (creating it if needed) the file at path read-write, truncated when fresh,
// and takes an exclusive lock on it (ErrBusy when another process holds it). A regular file
// only: a symbolic link or anything else at path is refused.
func OpenLocked(path string, perm fs.FileMode, fresh bool) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("open %s: %w", path, ErrNotRegular)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, perm)
	if err != nil {
		return nil, err
	}
	if !tryLock(f) {
		f.Close()
		return nil, fmt.Errorf("open %s: %w", path, ErrBusy)
	}
	if fresh {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Chmod(perm); err != nil { // the umask does not apply to an output
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// Keep closes the file through closeFn without removing it: a resumable write stopped by
// an interruption keeps its partial file for the next run. After Commit or Abort it does
// nothing.
func (f *File) Keep(closeFn func() error) error {
	err := ErrDone
	f.once.Do(func() {
		err = closeFn()
		f.File.Close()
		if errors.Is(err, os.ErrClosed) {
			err = nil
		}
	})
	return err
}

// Busy reports whether the file at path exists and another process holds it locked
// (OpenLocked, Hold): a run is writing it.
func Busy(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return !tryLock(f)
}
