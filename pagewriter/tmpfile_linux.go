package pagewriter

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// openUnnamed creates a file without a name in dir (O_TMPFILE). It fails where the kernel
// or the file system lacks O_TMPFILE, or where /proc is not there to link the file later.
func openUnnamed(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, "(unnamed)"))
	if _, err := os.Stat(procPath(f)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// linkUnnamed gives an O_TMPFILE file the name path (which must not exist).
func linkUnnamed(f *os.File, path string) error {
	err := unix.Linkat(unix.AT_FDCWD, procPath(f), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		return &os.LinkError{Op: "link", Old: procPath(f), New: path, Err: err}
	}
	return nil
}

func procPath(f *os.File) string { return fmt.Sprintf("/proc/self/fd/%d", f.Fd()) }
