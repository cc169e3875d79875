package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Hold takes a shared flock on f (a temporary file or directory), held while f is open: a
// process cleaning leftovers (RemoveLeftovers) then knows it is in use.
func Hold(f *os.File) { _ = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) }

// tryLock reports whether f is not locked by anyone (taking an exclusive lock, released when
// f is closed).
func tryLock(f *os.File) bool { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil }

// OpenUnnamed creates a file without a name in dir (O_TMPFILE), read-write, mode 0600: a
// process killed before it is linked (Commit) leaves nothing behind. The page writer's
// scratch files use it as they are, never linked. It fails where the kernel or the file
// system lacks O_TMPFILE, or where /proc is not there to link the file at Commit.
func OpenUnnamed(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
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
