//go:build !cgo

package imagefield

// Without cgo the resampler's passes are the Go ones.

func passH(src []byte, sw, sh, sstride, c int, dst []byte, dw, dstride int, t *taps) {
	resampleH(src, sw, sh, sstride, c, dst, dw, dstride, t)
}

func passV(src []byte, rowLen, sstride int, dst []byte, dh, dstride int, t *taps) {
	resampleV(src, rowLen, sstride, dst, dh, dstride, t)
}

// cTaps is empty: there are no C passes.
type cTaps struct{}

// prepare has nothing to lay out without the C passes.
func (t *taps) prepare() { t.cTaps = cTaps{} }
