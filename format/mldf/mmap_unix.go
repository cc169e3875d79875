//go:build unix

package mldf

import (
	"os"

	"golang.org/x/sys/unix"
)

// mmapFile maps size bytes of f read-only. A nil slice and an error mean the caller falls
// back to ReadAt.
func mmapFile(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, unix.EINVAL
	}
	return unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
}

func munmap(b []byte) error { return unix.Munmap(b) }

// dropResident drops b's pages from the process's resident set. The file's pages stay in the
// page cache; a later access maps them again.
func dropResident(b []byte) { _ = unix.Madvise(b, unix.MADV_DONTNEED) }
