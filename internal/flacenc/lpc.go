package flacenc

import "math"

//go:generate go run gen_lpc.go

// tryLPC fits linear predictors to the Tukey-windowed block by the
// autocorrelation method (Levinson-Durbin recursion), quantizes them and codes
// the order(s) the level asks for, keeping the result if it beats sf's current
// choice.
func (a *analyzer) tryLPC(sf *subframe, x []int32, bps uint, header int) {
	n := len(x)
	maxOrder := a.maxOrder
	w := a.window
	if len(w) != n {
		w = tukey(n, 0.5) // short last block
	}
	xw := a.windowed[:n]
	for i, v := range x {
		xw[i] = float64(v) * w[i]
	}
	autocorr(a.autoc[:maxOrder+1], xw)
	orders := levinson(&a.lpc, &a.lpcErr, a.autoc[:maxOrder+1])
	if orders == 0 {
		return
	}

	if a.level == LevelBest {
		for order := 1; order <= orders; order++ {
			a.codeLPC(sf, x, bps, header, order, a.precision)
		}
		if sf.kind == kindLPC {
			order := sf.order
			for prec := a.precision + 1; prec <= a.precisionBest; prec++ {
				a.codeLPC(sf, x, bps, header, order, prec)
			}
		}
		return
	}
	a.codeLPC(sf, x, bps, header, a.estimateOrder(orders, n), a.precision)
}

// estimateOrder returns the order whose prediction error promises the
// smallest block: residual bits from the error energy plus coefficient bits.
func (a *analyzer) estimateOrder(orders, n int) int {
	best, bestBits := 1, math.Inf(1)
	for k := range orders {
		order := k + 1
		e := a.lpcErr[k]
		perSample := 0.0
		if e > 0 {
			perSample = max(0, 0.5*math.Log2(e/float64(n)))
		}
		b := perSample*float64(n-order) + float64(order)*float64(a.precision)
		if b < bestBits {
			best, bestBits = order, b
		}
	}
	return best
}

// codeLPC quantizes the order-th predictor to prec bits, computes its
// residual and keeps it in sf if smaller.
func (a *analyzer) codeLPC(sf *subframe, x []int32, bps uint, header, order int, prec uint) {
	q := a.qcoefs[:order]
	shift, ok := quantize(a.lpc[order-1][:order], prec, q)
	if !ok {
		return
	}
	if !lpcResidual(sf.tmp[:len(x)], x, q, shift, bps) {
		return
	}
	rb := a.bestRice(&sf.tmpRice, sf.tmp[:len(x)], order)
	size := header + order*int(bps) + 4 + 5 + order*int(prec) + rb
	if sf.keep(size, kindLPC, order) {
		sf.precision, sf.shift = prec, shift
		copy(sf.coefs[:order], q)
	}
}

// autocorr computes r[lag] = sum x[i]*x[i-lag] for lag < len(r).
func autocorr(r []float64, x []float64) {
	if len(r) == 9 && len(x) > 8 {
		autocorr9(r, x)
		return
	}
	for lag := range r {
		var s0, s1, s2, s3 float64
		i := lag
		for ; i+3 < len(x); i += 4 {
			s0 += x[i] * x[i-lag]
			s1 += x[i+1] * x[i+1-lag]
			s2 += x[i+2] * x[i+2-lag]
			s3 += x[i+3] * x[i+3-lag]
		}
		for ; i < len(x); i++ {
			s0 += x[i] * x[i-lag]
		}
		r[lag] = (s0 + s1) + (s2 + s3)
	}
}

// autocorr9 is autocorr for lags 0..8 in two passes, lags 0..4 then 5..8: each keeps its
// accumulators in registers (nine at once do not fit and would be spilled, which chains
// every addition through memory), and a window sliding along x puts every tap at a
// constant offset.
func autocorr9(r []float64, x []float64) {
	var s [9]float64
	// Lags whose window starts before x[0] are summed separately.
	for i := range 8 {
		for lag := 0; lag <= i; lag++ {
			s[lag] += x[i] * x[i-lag]
		}
	}
	m, ok := autocorrFrom8Vec(x)
	if !ok {
		m = autocorrFrom8(x)
	}
	for lag := range r[:9] {
		r[lag] = s[lag] + m[lag]
	}
}

// autocorrFrom8 returns, for lags 0..8, the sum over i >= 8 of x[i]*x[i-lag], each lag's
// terms added in order of i (len(x) > 8).
func autocorrFrom8(x []float64) [9]float64 {
	var s0, s1, s2, s3, s4 float64
	for xs := x[4:]; len(xs) > 4; xs = xs[1:] {
		w := xs[:5:5]
		v := w[4]
		s0 += v * v
		s1 += v * w[3]
		s2 += v * w[2]
		s3 += v * w[1]
		s4 += v * w[0]
	}
	var s5, s6, s7, s8 float64
	for xs := x; len(xs) > 8; xs = xs[1:] {
		w := xs[:9:9]
		v := w[8]
		s5 += v * w[3]
		s6 += v * w[2]
		s7 += v * w[1]
		s8 += v * w[0]
	}
	return [9]float64{s0, s1, s2, s3, s4, s5, s6, s7, s8}
}

// levinson solves the normal equations for every order up to len(r)-1 with
// the Levinson-Durbin recursion. lpc[k][:k+1] receives the coefficients of
// order k+1 in the predictor x[i] ~ sum lpc[k][j]*x[i-1-j], and errs[k] its
// prediction error energy. It returns the number of orders computed, which
// is smaller when the recursion becomes unstable.
func levinson(lpc *[maxLPCOrder][maxLPCOrder]float64, errs *[maxLPCOrder]float64, r []float64) int {
	if len(r) < 2 || r[0] <= 0 {
		return 0
	}
	var a [maxLPCOrder]float64
	e := r[0]
	for m := 1; m < len(r); m++ {
		acc := r[m]
		for j := 0; j < m-1; j++ {
			acc -= a[j] * r[m-1-j]
		}
		k := acc / e
		if math.IsNaN(k) || math.IsInf(k, 0) || math.Abs(k) >= 1 {
			return m - 1
		}
		// a_new[j] = a[j] - k*a[m-2-j] for j < m-1; a_new[m-1] = k.
		for j := 0; j < (m-1)/2; j++ {
			aj, am := a[j], a[m-2-j]
			a[j] = aj - k*am
			a[m-2-j] = am - k*aj
		}
		if (m-1)%2 == 1 {
			j := (m - 1) / 2
			a[j] -= k * a[j]
		}
		a[m-1] = k
		e *= 1 - k*k
		copy(lpc[m-1][:m], a[:m])
		errs[m-1] = e
	}
	return len(r) - 1
}

// quantize converts the predictor lp to integers of prec bits and a shift,
// carrying each rounding error to the next coefficient. It reports false
// when the coefficients need a negative shift, which FLAC forbids.
func quantize(lp []float64, prec uint, q []int32) (shift int, ok bool) {
	cmax := 0.0
	for _, c := range lp {
		cmax = max(cmax, math.Abs(c))
	}
	if cmax == 0 || math.IsNaN(cmax) || math.IsInf(cmax, 0) {
		return 0, false
	}
	_, exp := math.Frexp(cmax) // cmax = f * 2^exp, 0.5 <= f < 1
	shift = int(prec) - 1 - exp
	if shift > 15 {
		shift = 15
	}
	if shift < 0 {
		return 0, false
	}
	qmax := float64(int32(1)<<(prec-1) - 1)
	qmin := -qmax - 1
	scale := math.Ldexp(1, shift)
	carry := 0.0
	for i, c := range lp {
		carry += c * scale
		v := math.Round(carry)
		v = min(max(v, qmin), qmax)
		carry -= v
		q[i] = int32(v)
	}
	return shift, true
}

// lpcResidual computes the residual of the quantized predictor q with shift
// into r (r[:len(q)] is left unset) and reports whether every value fits.
func lpcResidual(r, x []int32, q []int32, shift int, bps uint) bool {
	order := len(q)
	// Bound the prediction: |x| < 2^(bps-1), so |pred>>shift| is below
	// 2^(bps-1) * sum|q| / 2^shift. Check values only when that can overflow.
	var sumq int64
	for _, c := range q {
		sumq += int64(max(c, -c))
	}
	check := bps >= 32 || (int64(1)<<(bps-1))*(1+(sumq>>shift)+1) > maxResidual
	// Predictions whose partial sums stay below 2^31 in magnitude can be computed in
	// 32-bit lanes, eight at a time.
	narrow := bps < 32 && sumq<<(bps-1) < 1<<31 && lpcResidualNarrow(r, x, q, shift)
	if !narrow && !lpcResidualOrder(r, x, q, shift) {
		residualTail(r, x, q, shift, order)
	}
	if !check {
		return true
	}
	for i := order; i < len(x); i++ {
		var p int64
		for j, c := range q {
			p += int64(c) * int64(x[i-1-j])
		}
		v := int64(x[i]) - p>>shift
		if v < -maxResidual || v > maxResidual {
			return false
		}
	}
	return true
}

// residualTail computes r[i] = x[i] - (sum q[j]*x[i-1-j]) >> shift for i >= from, in
// 64-bit arithmetic (from >= len(q)).
func residualTail(r, x, q []int32, shift, from int) {
	for i := from; i < len(x); i++ {
		var p int64
		for j, c := range q {
			p += int64(c) * int64(x[i-1-j])
		}
		r[i] = x[i] - int32(p>>shift)
	}
}
