package flacdec

//go:generate go run gen_lpc.go

// restoreLPC turns x[order:], the residual of the predictor coefs (order = len(coefs))
// with the given shift, into samples in place; x[:order] holds the warm-up samples.
//
// Products and sums are 64-bit: a 32-bit sample times a 15-bit coefficient, summed over
// up to 32 terms, stays below 2^52. On amd64 a 64-bit multiply costs what a 32-bit one
// does, so no narrower path is needed.
func restoreLPC(x, coefs []int32, shift uint) {
	if restoreLPCUnrolled(x, coefs, shift) {
		return
	}
	order := len(coefs)
	var rc [32]int64 // coefficients reversed: rc[k] multiplies x[i-order+k]
	for j, c := range coefs {
		rc[order-1-j] = int64(c)
	}
	r := rc[:order]
	for i := order; i < len(x); i++ {
		w := x[i-order : i]
		var p int64
		for k, c := range r {
			p += c * int64(w[k])
		}
		x[i] += int32(p >> shift)
	}
}

// restoreFixed turns x[order:], the residual of the fixed predictor of the given order
// (RFC 9639 section 9.2.5), into samples in place. The predictors have integer
// coefficients and no shift, so 32-bit arithmetic that wraps gives the exact result for
// every sample that fits in 32 bits.
func restoreFixed(x []int32, order int) {
	if len(x) <= order {
		return
	}
	switch order {
	case 1:
		s1 := x[0]
		for i := 1; i < len(x); i++ {
			s1 += x[i]
			x[i] = s1
		}
	case 2:
		s2, s1 := x[0], x[1]
		for i := 2; i < len(x); i++ {
			v := x[i] + 2*s1 - s2
			x[i] = v
			s2, s1 = s1, v
		}
	case 3:
		s3, s2, s1 := x[0], x[1], x[2]
		for i := 3; i < len(x); i++ {
			v := x[i] + 3*(s1-s2) + s3
			x[i] = v
			s3, s2, s1 = s2, s1, v
		}
	case 4:
		s4, s3, s2, s1 := x[0], x[1], x[2], x[3]
		for i := 4; i < len(x); i++ {
			v := x[i] + 4*(s1+s3) - 6*s2 - s4
			x[i] = v
			s4, s3, s2, s1 = s3, s2, s1, v
		}
	}
}
