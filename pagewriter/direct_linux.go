package pagewriter

import (
	"errors"
	"io/fs"
	"unsafe"

	"golang.org/x/sys/unix"
)

// directAlign returns the alignment direct I/O needs on fd's file (of offsets and lengths,
// and of buffer addresses: the larger), from statx's STATX_DIOALIGN (Linux 6.1); false
// when the file system has no direct I/O or does not say.
func directAlign(fd int) (int, bool) {
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, &st); err != nil {
		return 0, false
	}
	if st.Mask&unix.STATX_DIOALIGN == 0 || st.Dio_offset_align == 0 || st.Dio_mem_align == 0 {
		return 0, false
	}
	a := max(int(st.Dio_offset_align), int(st.Dio_mem_align))
	if a&(a-1) != 0 {
		return 0, false
	}
	return a, true
}

// setDirect turns O_DIRECT on or off for fd; false when the file system refuses it.
func setDirect(fd int, on bool) bool {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return false
	}
	if on {
		fl |= unix.O_DIRECT
	} else {
		fl &^= unix.O_DIRECT
	}
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl)
	return err == nil
}

// alignPad returns how many bytes from b's start the first address aligned to n is.
func alignPad(b []byte, n int) int {
	return int(-uintptr(unsafe.Pointer(unsafe.SliceData(b))) & uintptr(n-1))
}

// writeAt writes b at off with pwrite, whole. A buffer the alignment does not suit is
// written from an aligned copy; when the file system refuses a direct write it announced
// (EINVAL), the descriptor turns buffered for good and the write is retried.
func (d *directFile) writeAt(b []byte, off int64) error {
	if alignPad(b, d.align) != 0 || len(b)%d.align != 0 {
		c := alignedBlock(int(alignUp(int64(len(b)), int64(d.align))))
		copy(c, b)
		b = c
	}
	for len(b) > 0 {
		n, err := unix.Pwrite(d.fd, b, off)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EINVAL) && d.toBuffered():
			continue
		case err != nil:
			return &fs.PathError{Op: "write", Path: d.name, Err: err}
		case n == 0:
			return &fs.PathError{Op: "write", Path: d.name, Err: unix.EIO}
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

// toBuffered turns the descriptor buffered; false when it was already (the EINVAL is
// then not direct I/O's).
func (d *directFile) toBuffered() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.buffered {
		return false
	}
	d.buffered = setDirect(d.fd, false)
	return d.buffered
}
