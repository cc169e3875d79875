package atomicfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// hold takes the shared lock the page writer's leftover clean-up respects, held until f is
// closed.
func hold(f *os.File) { _ = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) }
