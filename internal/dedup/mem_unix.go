//go:build unix

package dedup

import "golang.org/x/sys/unix"

// unlinkEarly: an open file outlives its name, so the temporary files have none.
const unlinkEarly = true

// allocBytes returns n zeroed bytes outside the Go heap (an anonymous mapping): the table's
// fixed parts do not raise the garbage collector's heap goal, so the process's memory is the
// run's plus the table's cap, not the run's plus twice the cap.
// Huge pages are asked for (where the kernel has them on request): the filter and the
// memtable are read at random, a TLB miss per access with small pages.
func allocBytes(n int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err == nil && n >= 2<<20 {
		adviseHuge(b)
	}
	return b, err
}

func freeBytes(b []byte) {
	if b != nil {
		_ = unix.Munmap(b)
	}
}
