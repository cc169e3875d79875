//go:build !linux

package pagewriter

// CopyFileRange is not available here: the caller reads and writes.
func CopyFileRange(src int, srcOff int64, dst int, dstOff int64, n int64) (int64, bool, error) {
	return 0, false, nil
}
