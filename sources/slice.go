package sources

// Slice returns the half-open range [lo, hi) of inputs that slice i of n covers. Slices are
// contiguous, deterministic (they depend only on the inputs' order and sizes) and balanced by
// bytes: an input belongs to the slice in which the midpoint of its byte range falls, so every
// input is in exactly one slice and no slice is more than one input heavier than its share.
func Slice(inputs []Input, i, n int) (lo, hi int) {
	if n <= 1 {
		return 0, len(inputs)
	}
	var total int64
	for _, in := range inputs {
		total += max(in.Size, 1)
	}
	// owner is non-decreasing in k, so the slice is [first owner >= i, first owner > i).
	lo, hi = len(inputs), len(inputs)
	var start int64
	for k, in := range inputs {
		size := max(in.Size, 1)
		owner := min(int((start+size/2)*int64(n)/total), n-1)
		start += size
		if owner >= i && lo == len(inputs) {
			lo = k
		}
		if owner > i {
			hi = k
			break
		}
	}
	return lo, hi
}
