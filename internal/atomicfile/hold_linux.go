package atomicfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// Hold takes a shared flock on f (a temporary file or directory), held while f is open: a
// process cleaning leftovers (RemoveLeftovers) then knows it is in use.
func Hold(f *os.File) { _ = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) }

// tryLock reports whether f is not locked by anyone (taking an exclusive lock, released when
// f is closed).
func tryLock(f *os.File) bool { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil }
