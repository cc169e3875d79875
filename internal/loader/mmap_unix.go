//go:build unix

package loader

import (
	"os"

	"golang.org/x/sys/unix"
)

// mmapFile maps f's size bytes read-only; an error means the caller reads with ReadAt.
func mmapFile(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, unix.EINVAL
	}
	return unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
}

func munmap(b []byte) error { return unix.Munmap(b) }
