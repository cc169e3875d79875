package listing

import (
	"os"

	"golang.org/x/sys/unix"
)

// punchHole frees the disk blocks of [off, off+n) of f, keeping its size (best effort).
func punchHole(f *os.File, off, n int64) {
	_ = unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
}
