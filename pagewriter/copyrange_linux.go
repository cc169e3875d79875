package pagewriter

import (
	"errors"
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// CopyFileRange copies up to n bytes from src at srcOff to dst at dstOff with copy_file_range(2). It returns how many bytes it
// copied, and ok=false when the kernel or file system refuses the call (the caller then reads
// and writes the rest).
func CopyFileRange(src int, srcOff int64, dst int, dstOff int64, n int64) (done int64, ok bool, err error) {
	for done < n {
		so, do := srcOff+done, dstOff+done
		w, err := unix.CopyFileRange(src, &so, dst, &do, int(min(n-done, 1<<30)), 0)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EXDEV), errors.Is(err, unix.EOPNOTSUPP),
			errors.Is(err, unix.EINVAL), errors.Is(err, unix.EPERM), errors.Is(err, unix.EBADF):
			return done, false, nil
		case err != nil:
			return done, true, fmt.Errorf("copy_file_range at %d: %w", srcOff+done, err)
		case w == 0:
			return done, true, fmt.Errorf("copy_file_range at %d: %w", srcOff+done, io.ErrUnexpectedEOF)
		}
		done += int64(w)
	}
	return done, true, nil
}
