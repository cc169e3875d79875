//go:build amd64 && !purego

package flacenc

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasAVX2 reports whether residual8AVX2 can run on this CPU.
var hasAVX2 = cpu.X86.HasAVX2

//go:noescape
func residual8AVX2(r, x, q *int32, order, shift, n int)

// lpcResidualNarrow is lpcResidualOrder for predictors whose partial sums fit in 32 bits
// (the caller checks sum|q| * max|x| < 2^31): eight residuals at a time with AVX2, the
// rest in Go. It reports false when it cannot run (no AVX2, order above 32, short block).
func lpcResidualNarrow(r, x, q []int32, shift int) bool {
	order := len(q)
	if !hasAVX2 || order < 1 || order > 32 || len(r) < len(x) || len(x) < order+8 || shift < 0 || shift > 31 {
		return false
	}
	n := (len(x) - order) &^ 7
	residual8AVX2(unsafe.SliceData(r[order:]), unsafe.SliceData(x[order:]), unsafe.SliceData(q), order, shift, n)
	residualTail(r, x, q, shift, order+n)
	return true
}
