// One loop per predictor order so the coefficients stay in registers and
// the window slice removes bounds checks.

package flacenc

// lpcResidualOrder computes r[i] = x[i] - (sum q[j]*x[i-1-j]) >> shift for
// i >= len(q), with one unrolled loop per order up to 12. It reports false for
// orders it has no loop for.
func lpcResidualOrder(r, x, q []int32, shift int) bool {
	order := len(q)
	if len(r) < len(x) {
		return false
	}
	r = r[:len(x)]
	switch order {
	case 1:
		c0 := int64(q[0])
		for i := 1; i < len(x); i++ {
			w := x[i-1 : i+1 : i+1]
			p := c0 * int64(w[0])
			r[i] = w[1] - int32(p>>shift)
		}
	case 2:
		c0, c1 := int64(q[0]), int64(q[1])
		for i := 2; i < len(x); i++ {
			w := x[i-2 : i+1 : i+1]
			p := c0*int64(w[1]) + c1*int64(w[0])
			r[i] = w[2] - int32(p>>shift)
		}
	case 3:
		c0, c1, c2 := int64(q[0]), int64(q[1]), int64(q[2])
		for i := 3; i < len(x); i++ {
			w := x[i-3 : i+1 : i+1]
			p := c0*int64(w[2]) + c1*int64(w[1]) + c2*int64(w[0])
			r[i] = w[3] - int32(p>>shift)
		}
	case 4:
		c0, c1, c2, c3 := int64(q[0]), int64(q[1]), int64(q[2]), int64(q[3])
		for i := 4; i < len(x); i++ {
			w := x[i-4 : i+1 : i+1]
			p := c0*int64(w[3]) + c1*int64(w[2]) + c2*int64(w[1]) + c3*int64(w[0])
			r[i] = w[4] - int32(p>>shift)
		}
	case 5:
		c0, c1, c2, c3, c4 := int64(q[0]), int64(q[1]), int64(q[2]), int64(q[3]), int64(q[4])
		for i := 5; i < len(x); i++ {
			w := x[i-5 : i+1 : i+1]
			p := c0*int64(w[4]) + c1*int64(w[3]) + c2*int64(w[2]) + c3*int64(w[1]) +
				c4*int64(w[0])
			r[i] = w[5] - int32(p>>shift)
		}
	case 6:
		c0, c1, c2, c3, c4, c5 := int64(q[0]), int64(q[1]), int64(q[2]), int64(q[3]), int64(q[4]), int64(q[5])
		for i := 6; i < len(x); i++ {
			w := x[i-6 : i+1 : i+1]
			p := c0*int64(w[5]) + c1*int64(w[4]) + c2*int64(w[3]) + c3*int64(w[2]) +
				c4*int64(w[1]) + c5*int64(w[0])
			r[i] = w[6] - int32(p>>shift)
		}
	case 7:
		c0, c1, c2, c3, c4, c5, c6 := int64(q[0]), int64(q[1]), int64(q[2]), int64(q[3]), int64(q[4]), int64(q[5]), int64(q[6])
		for i := 7; i < len(x); i++ {
			w := x[i-7 : i+1 : i+1]
			p := c0*int64(w[6]) + c1*int64(w[5]) + c2*int64(w[4]) + c3*int64(w[3]) +
				c4*int64(w[2]) + c5*int64(w[1]) + c6*int64(w[0])
			r[i] = w[7] - int32(p>>shift)
		}
	case 8:
		c0, c1, c2, c3, c4, c5, c6, c7 := int64(q[0]), int64(q[1]), int64(q[2]), int64(q[3]), int64(q[4]), int64(q[5]), int64(q[6]), int64(q[7])
		for i := 8; i < len(x); i++ {
			w := x[i-8 : i+1 : i+1]
			p := c0*int64(w[7]) + c1*int64(w[6]) + c2*int64(w[5]) + c3*int64(w[4]) +
				c4*int64(w[3]) + c5*int64(w[2]) + c6*int64(w[1]) + c7*int64(w[0])
			r[i] = w[8] - int32(p>>shift)
		}
	case 9:
		c0, c1, c2, c3, c4, c5, c6, c7, c8 := int64(q[0]), int64(q[1]), int64(q[2]), int64(q[3]), int64(q[4]), int64(q[5]), int64(q[6]), int64(q[7]), int64(q[8])
		for i := 9; i < len(x); i++ {
			w := x[i-9 : i+1 : i+1]
			p := c0*int64(w[8]) + c1*int64(w[7]) + c2*int64(w[6]) + c3*int64(w[5]) +
				c4*int64(w[4]) + c5*int64(w[3]) + c6*int64(w[2]) + c7*int64(w[1]) +
				c8*int64(w[0])
			r[i] = w[9] - int32(p>>shift)
		}
	case 10:
		c0, c1, c2, c3, c4, c5, c6, c7, c8, c9 := int64(q[0]), int64(q[1]), int64(q[2]), int64(q[3]), int64(q[4]), int64(q[5]), int64(q[6]), int64(q[7]), int64(q[8]), int64(q[9])
		for i := 10; i < len(x); i++ {
			w := x[i-10 : i+1 : i+1]
			p := c0*int64(w[9]) + c1*int64(w[8]) + c2*int64(w[7]) + c3*int64(w[6]) +
				c4*int64(w[5]) + c5*int64(w[4]) + c6*int64(w[3]) + c7*int64(w[2]) +
				c8*int64(w[1]) + c9*int64(w[0])
			r[i] = w[10] - int32(p>>shift)
		}
	case 11:
		c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10 := int64(q[0]), int64(q[1]), int64(q[2]), int64(q[3]), int64(q[4]), int64(q[5]), int64(q[6]), int64(q[7]), int64(q[8]), int64(q[9]), int64(q[10])
		for i := 11; i < len(x); i++ {
			w := x[i-11 : i+1 : i+1]
			p := c0*int64(w[10]) + c1*int64(w[9]) + c2*int64(w[8]) + c3*int64(w[7]) +
				c4*int64(w[6]) + c5*int64(w[5]) + c6*int64(w[4]) + c7*int64(w[3]) +
				c8*int64(w[2]) + c9*int64(w[1]) + c10*int64(w[0])
			r[i] = w[11] - int32(p>>shift)
		}
	case 12:
		c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11 := int64(q[0]), int64(q[1]), int64(q[2]), int64(q[3]), int64(q[4]), int64(q[5]), int64(q[6]), int64(q[7]), int64(q[8]), int64(q[9]), int64(q[10]), int64(q[11])
		for i := 12; i < len(x); i++ {
			w := x[i-12 : i+1 : i+1]
			p := c0*int64(w[11]) + c1*int64(w[10]) + c2*int64(w[9]) + c3*int64(w[8]) +
				c4*int64(w[7]) + c5*int64(w[6]) + c6*int64(w[5]) + c7*int64(w[4]) +
				c8*int64(w[3]) + c9*int64(w[2]) + c10*int64(w[1]) + c11*int64(w[0])
			r[i] = w[12] - int32(p>>shift)
		}
	default:
		return false
	}
	return true
}
