//go:build unix

package jsonl

import (
	"os"

	"golang.org/x/sys/unix"
)

// canMap is whether local files are read through a mapping on this system.
const canMap = true

// mapRange maps n bytes of f from off (a multiple of the page size) read-only.
func mapRange(f *os.File, off int64, n int) ([]byte, error) {
	return unix.Mmap(int(f.Fd()), off, n, unix.PROT_READ, unix.MAP_SHARED)
}

// unmap removes a mapping of mapRange.
func unmap(b []byte) { _ = unix.Munmap(b) }
