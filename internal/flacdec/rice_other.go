//go:build !amd64 || purego

package flacdec

// riceFastVec has no assembly version on this platform: it is riceFast.
func riceFastVec(dst []int32, k uint, buf []byte, cache uint64, n uint, pos int) (int, uint64, uint, int) {
	return riceFast(dst, k, buf, cache, n, pos)
}
