//go:build !cgo

package imgdec

// passes runs the two resampling passes (see goPasses).
func (r *resampler) passes(src plane, y0, y1, outW, outH int, flip, planar bool, dst []byte) {
	r.goPasses(src, y0, y1, outW, outH, flip, planar, dst)
}
