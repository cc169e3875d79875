package sources

// InputList is the inputs of a source, in order, with their sizes: what a sharded run splits
// by bytes and what the output checks compare against. A folder source may list 10^8 files,
// so the list is read in order rather than held as a slice.
type InputList interface {
	// Len returns the number of inputs.
	Len() int64
	// Each calls fn for every input in order, with its index, and stops at fn's first error.
	Each(fn func(i int64, in Input) error) error
}

// Inputs is an InputList held in memory.
type Inputs []Input

// Len implements InputList.
func (s Inputs) Len() int64 { return int64(len(s)) }

// Each implements InputList.
func (s Inputs) Each(fn func(int64, Input) error) error {
	for i, in := range s {
		if err := fn(int64(i), in); err != nil {
			return err
		}
	}
	return nil
}

// Slice returns the half-open range [lo, hi) of inputs that slice i of n covers. Slices are
// contiguous, deterministic (they depend only on the inputs' order and sizes) and balanced by
// bytes: an input belongs to the slice in which the midpoint of its byte range falls, so every
// input is in exactly one slice and no slice is more than one input heavier than its share.
func Slice(inputs []Input, i, n int) (lo, hi int) {
	l, h, _ := SliceList(Inputs(inputs), i, n)
	return int(l), int(h)
}

// SliceList is Slice over an InputList, read twice (the total, then the owners): memory does
// not depend on the number of inputs.
func SliceList(inputs InputList, i, n int) (lo, hi int64, err error) {
	count := inputs.Len()
	if n <= 1 {
		return 0, count, nil
	}
	var total int64
	if err := inputs.Each(func(_ int64, in Input) error { total += max(in.Size, 1); return nil }); err != nil {
		return 0, 0, err
	}
	// owner is non-decreasing in k, so the slice is [first owner >= i, first owner > i).
	lo, hi = count, count
	var start int64
	errDone := errStop{}
	err = inputs.Each(func(k int64, in Input) error {
		size := max(in.Size, 1)
		owner := min(int((start+size/2)*int64(n)/total), n-1)
		start += size
		if owner >= i && lo == count {
			lo = k
		}
		if owner > i {
			hi = k
			return errDone
		}
		return nil
	})
	if err != nil && err != error(errDone) {
		return 0, 0, err
	}
	return lo, hi, nil
}

// errStop ends a walk early.
type errStop struct{}

func (errStop) Error() string { return "stop" }
