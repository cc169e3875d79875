//go:build unix

package jsonl

import (
	"os"

	"golang.org/x/sys/unix"
)

// canMap is whether local files are read through a mapping on this system.
const canMap = true

// openMappable opens path for mapping: a regular file of at least one byte. Anything else
// (a named pipe, a device) is not opened, and one swapped in between the check and the open
// is not waited on (O_NONBLOCK) and is refused. It returns nil for any other file.
func openMappable(path string) (*os.File, int64) {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return nil, 0
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() <= 0 {
		f.Close()
		return nil, 0
	}
	return f, st.Size()
}

// mapRange maps n bytes of f from off (a multiple of the page size) read-only.
func mapRange(f *os.File, off int64, n int) ([]byte, error) {
	return unix.Mmap(int(f.Fd()), off, n, unix.PROT_READ, unix.MAP_SHARED)
}

// unmap removes a mapping of mapRange.
func unmap(b []byte) { _ = unix.Munmap(b) }
