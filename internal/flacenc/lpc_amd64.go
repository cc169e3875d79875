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

//go:noescape
func fixedSums8AVX2(x *int32, n int, sums *[5][8]uint32)

// fixedSumsNarrow is fixedSums for samples of at most bps bits, bps <= 27 (so that every
// fixed residual, at most 2^(bps+3) in magnitude, fits in 32 bits): eight samples at a
// time with AVX2, in runs short enough that no 32-bit lane sum overflows, the rest in Go.
// It reports false when it cannot run (no AVX2, wider samples, short block).
func fixedSumsNarrow(x []int32, bps uint) ([5]uint64, bool) {
	var s [5]uint64
	if !hasAVX2 || bps < 1 || bps > 27 || len(x) < 4+8 {
		return s, false
	}
	n := (len(x) - 4) &^ 7
	run := int((1<<32-1)>>(bps+3)) * 8 // samples per call: every lane sum stays below 2^32
	for start := 0; start < n; start += run {
		var lanes [5][8]uint32
		fixedSums8AVX2(&x[4+start], min(run, n-start), &lanes)
		for k := range lanes {
			for _, v := range lanes[k] {
				s[k] += uint64(v)
			}
		}
	}
	fixedSumsTail(x, 4+n, &s)
	return s, true
}

//go:noescape
func autocorrFrom8AVX2(x *float64, n int, acc *[12]float64)

// autocorrFrom8Vec is autocorrFrom8 with AVX2, one lag per lane (the same serial sum per
// lag, so the same result to the bit). It reports false without AVX2 or when len(x) <= 8.
func autocorrFrom8Vec(x []float64) ([9]float64, bool) {
	var s [9]float64
	if !hasAVX2 || len(x) <= 8 {
		return s, false
	}
	var acc [12]float64
	autocorrFrom8AVX2(&x[0], len(x), &acc)
	for l := range 4 {
		s[l], s[4+l] = acc[3-l], acc[7-l]
	}
	s[8] = acc[8]
	return s, true
}

// fixedSumsTail adds to s the absolute fixed residuals of orders 0..4 of x[i] for i >= from
// (from >= 4).
func fixedSumsTail(x []int32, from int, s *[5]uint64) {
	for i := from; i < len(x); i++ {
		w := x[i-4 : i+1 : i+1]
		a, b, c, d, e := int64(w[4]), int64(w[3]), int64(w[2]), int64(w[1]), int64(w[0])
		e1, f1, g1, h1 := a-b, b-c, c-d, d-e
		e2, f2, g2 := e1-f1, f1-g1, g1-h1
		e3, f3 := e2-f2, f2-g2
		s[0] += abs64(a)
		s[1] += abs64(e1)
		s[2] += abs64(e2)
		s[3] += abs64(e3)
		s[4] += abs64(e3 - f3)
	}
}
