//go:build !linux

package pagewriter

// copyFileRange is not available here: the caller reads and writes.
func copyFileRange(src int, srcOff int64, dst int, dstOff int64, n int64) (int64, bool, error) {
	return 0, false, nil
}
