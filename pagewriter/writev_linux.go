package pagewriter

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// haveWritev says that pwritev works here.
const haveWritev = true

// pwritev writes bufs one after another at off in f with pwritev(2) (a gather write: the
// kernel copies from each buffer, nothing is joined in user space). It changes bufs' slices.
func pwritev(f *os.File, bufs [][]byte, off int64) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	if err := rc.Write(func(fd uintptr) bool {
		n, werr = writevAll(bufs, off, func(b [][]byte, at int64) (int, error) {
			for {
				n, err := unix.Pwritev(int(fd), b, at)
				if !errors.Is(err, unix.EINTR) {
					return max(n, 0), err
				}
			}
		})
		return true
	}); err != nil {
		return n, err
	}
	return n, werr
}
