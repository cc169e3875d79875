package scdl

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/mldf/convert/internal/inputfile"
)

// Every file of an archive (a member) is opened through openMember: resolved inside the
// archive directory (os.Root: no "..", no absolute path, no symbolic link that leads out of
// it), refused when it is a symbolic link itself or anything but a regular file (a named
// pipe, a device, a directory), and opened non-blocking so that a named pipe cannot hang
// open(2). The archive directory itself may be a symbolic link: the user named it.

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
		return nil, nil, fmt.Errorf("%s: %w: %s is a %s", dir, ErrMember, rel, inputfile.TypeName(lst.Mode()))
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
		return nil, nil, fmt.Errorf("%s: %w: %s is a %s", dir, ErrMember, rel, inputfile.TypeName(st.Mode()))
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

// readMember reads a small member whole, refusing it unless it is a regular file of at most
// limit bytes (checked before reading, and again while reading: the file may grow).
func readMember(dir, rel string, limit int64) ([]byte, error) {
	f, st, err := openMember(dir, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %w", dir, ruleErr("file size", rel, "%d bytes, more than the %d this reader accepts", st.Size(), limit))
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", dir, rel, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: %w", dir, ruleErr("file size", rel, "more than the %d bytes this reader accepts", limit))
	}
	return b, nil
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
