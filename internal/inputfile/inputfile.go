// Package inputfile opens the files a conversion reads so that no input can hang it: a named
// pipe, a device or a socket where a regular file is expected is refused without blocking,
// and a named pipe given as a stream input is opened and read so that cancelling the context
// stops the wait. Opening a FIFO with open(2) blocks until a writer appears, in the kernel,
// where no signal handler or context can reach it; this package never does that.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/mldf/convert/internal/quote"
)

// Errors, wrapped with the path they concern.
var (
	// ErrNotRegular means a file that must be regular (read whole, indexed, listed in a
	// folder) is a named pipe, a device, a socket or a directory.
	ErrNotRegular = errors.New("not a regular file")
	// ErrNotStream means a stream input is neither a regular file nor a named pipe.
	ErrNotStream = errors.New("not a regular file or a named pipe")
	// ErrNotDir means a folder input is not a directory.
	ErrNotDir = errors.New("not a directory")
	// ErrPathTooLong means a path is longer than MaxPath bytes (a value from a manifest,
	// say); no system call sees it.
	ErrPathTooLong = errors.New("path too long")
)

// MaxPath is the longest path opened, in bytes: Linux's PATH_MAX. Longer paths are refused
// before any system call, and quoted shortened in the error.
const MaxPath = 4096

// CheckPath returns an error wrapping ErrPathTooLong for a path longer than MaxPath bytes.
func CheckPath(path string) error {
	if len(path) > MaxPath {
		return fmt.Errorf("%w: %s (the limit is %d)", ErrPathTooLong, quote.S(path), MaxPath)
	}
	return nil
}

// TypeName names the type of a file mode for error messages: "named pipe", "directory",
// "character device", "block device", "socket", "symbolic link", "irregular file" or
// "regular file". Kind gives it with its article.
func TypeName(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "regular file"
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t&fs.ModeDir != 0:
		return "directory"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeDevice != 0:
		return "block device"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "irregular file"
}

// Kind is TypeName with its article, for "PATH is KIND": "a named pipe", "an irregular
// file".
func Kind(m fs.FileMode) string {
	n := TypeName(m)
	if n == "irregular file" {
		return "an " + n
	}
	return "a " + n
}

// CheckRegular returns an error wrapping ErrNotRegular, naming path and its type, unless m
// is a regular file's mode.
func CheckRegular(path string, m fs.FileMode) error {
	if m.IsRegular() {
		return nil
	}
	return fmt.Errorf("%w: %s is %s", ErrNotRegular, path, Kind(m))
}

// OpenRegular opens path for reading and checks that it is a regular file (after following
// symbolic links). It never blocks on a named pipe: the file is opened non-blocking and
// checked before any read.
func OpenRegular(path string) (*os.File, fs.FileInfo, error) {
	if err := CheckPath(path); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if err := CheckRegular(path, st.Mode()); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// ReadFile reads the regular file at path, like os.ReadFile, refusing anything else (see
// OpenRegular).
func ReadFile(path string) ([]byte, error) {
	return ReadFileInto(path, nil)
}

// ReadFileInto is ReadFile reading into buf's backing array when it is large enough (a
// caller that reads many files reuses one buffer); the result may share it.
func ReadFileInto(path string, buf []byte) ([]byte, error) {
	f, st, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := st.Size()
	if int64(int(size)) != size {
		return nil, fmt.Errorf("%s: %d bytes do not fit in memory", path, size)
	}
	b := buf[:0]
	if cap(b) < int(size)+1 {
		b = make([]byte, 0, int(size)+1) // +1: see EOF without growing
	}
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if len(b) == cap(b) { // the file grew since Stat
			b = append(b, 0)[:len(b)]
		}
	}
}
