package pagewriter

import (
	"errors"
	"math/bits"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// haveWritev says that pwritev works here.
const haveWritev = true

// pwritev writes bufs one after another at off in f with pwritev(2) (a gather write: the
// kernel copies from each buffer, nothing is joined in user space). It changes bufs' slices.
// iovs holds the *[]unix.Iovec lists of earlier calls, reused so that a write allocates no
// list of its own.
func pwritev(f *os.File, bufs [][]byte, off int64, iovs *sync.Pool) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	iov, _ := iovs.Get().(*[]unix.Iovec)
	if iov == nil {
		iov = new([]unix.Iovec)
	}
	defer iovs.Put(iov)
	var n int
	var werr error
	if err := rc.Write(func(fd uintptr) bool {
		n, werr = writevAll(bufs, off, func(b [][]byte, at int64) (int, error) {
			for {
				n, err := pwritevOnce(int(fd), b, at, iov)
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

// pwritevOnce is one pwritev(2) of bufs at off, its list of buffers built in *iov (which it
// leaves empty: no pointer to a payload is kept).
func pwritevOnce(fd int, bufs [][]byte, off int64, iov *[]unix.Iovec) (int, error) {
	v := (*iov)[:0]
	for _, b := range bufs {
		var e unix.Iovec
		if len(b) > 0 {
			e.Base = &b[0]
			e.SetLen(len(b))
		}
		v = append(v, e)
	}
	defer func() { clear(v); *iov = v[:0] }()
	if len(v) == 0 {
		return 0, nil
	}
	// The offset goes in two longs, low then high (the high one is 0 on 64-bit systems).
	n, _, errno := unix.Syscall6(unix.SYS_PWRITEV, uintptr(fd), uintptr(unsafe.Pointer(&v[0])), uintptr(len(v)),
		uintptr(off), uintptr(uint64(off)>>(bits.UintSize-1)>>1), 0)
	runtime.KeepAlive(bufs)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
