//go:build !amd64 || purego

package flacenc

// lpcResidualNarrow has no vector version on this platform: the callers fall back to
// lpcResidualOrder.
func lpcResidualNarrow(r, x, q []int32, shift int) bool { return false }

// fixedSumsNarrow has no vector version on this platform: fixedEstimate sums in Go.
func fixedSumsNarrow(x []int32, bps uint) ([5]uint64, bool) { return [5]uint64{}, false }

// autocorrFrom8Vec has no vector version on this platform: autocorr9 sums in Go.
func autocorrFrom8Vec(x []float64) ([9]float64, bool) { return [9]float64{}, false }
