package flacenc

import (
	"math"
	"math/bits"
)

// Subframe types (RFC 9639 section 9.2.1).
type kind uint8

const (
	kindConstant kind = iota
	kindVerbatim
	kindFixed
	kindLPC
)

const maxLPCOrder = 32

// subframe is the chosen coding of one channel of one frame.
type subframe struct {
	kind   kind
	bps    uint // bits per sample of data: the channel's, minus wasted, plus 1 for side
	wasted uint
	order  int
	// LPC only.
	precision uint
	shift     int
	coefs     [maxLPCOrder]int32
	// data is the channel after removing wasted bits (warm-up and verbatim
	// samples come from it); res the residual of the chosen predictor.
	data []int32
	res  []int32
	rice rice
	bits int // the whole subframe, header included

	tmp     []int32 // residual of the candidate being tried
	tmpRice rice
}

func newSubframe(blockSize int) *subframe {
	return &subframe{
		data: make([]int32, blockSize),
		res:  make([]int32, blockSize),
		tmp:  make([]int32, blockSize),
	}
}

// analyzer chooses the coding of each subframe.
type analyzer struct {
	level         Level
	maxOrder      int
	maxPartOrder  int
	precision     uint // LPC coefficient precision, bits
	precisionBest uint // highest precision tried by LevelBest
	window        []float64
	windowed      []float64
	autoc         [maxLPCOrder + 1]float64
	lpc           [maxLPCOrder][maxLPCOrder]float64 // lpc[k] holds the k+1 coefficients of order k+1
	lpcErr        [maxLPCOrder]float64
	qcoefs        [maxLPCOrder]int32
	sums          []uint64 // partition sums, scratch for rice search
}

func (a *analyzer) init(level Level, blockSize, bps int) {
	a.level = level
	a.maxPartOrder = 6
	switch level {
	case LevelFast:
		a.maxOrder = 0
		a.maxPartOrder = 4
	case LevelBest:
		a.maxOrder = 12
		a.maxPartOrder = 8
	default:
		a.maxOrder = 8
	}
	// Coefficient precision: enough to resolve the predictor for the block
	// size and sample size, as the reference encoder does.
	switch {
	case bps < 16:
		a.precision = uint(max(5, 2+bps/2))
	case bps == 16:
		switch {
		case blockSize <= 192:
			a.precision = 7
		case blockSize <= 384:
			a.precision = 8
		case blockSize <= 576:
			a.precision = 9
		case blockSize <= 1152:
			a.precision = 10
		case blockSize <= 2304:
			a.precision = 11
		case blockSize <= 4608:
			a.precision = 12
		default:
			a.precision = 13
		}
	default:
		switch {
		case blockSize <= 384:
			a.precision = 13
		case blockSize <= 1152:
			a.precision = 14
		default:
			a.precision = 15
		}
	}
	a.precisionBest = 15
	a.sums = make([]uint64, 2<<a.maxPartOrder)
	if a.maxOrder > 0 {
		a.window = tukey(blockSize, 0.5)
		a.windowed = make([]float64, blockSize)
	}
}

// tukey returns a Tukey window of n points with taper fraction p: a cosine
// rise over the first p/2 of the block, flat top, cosine fall over the last p/2.
func tukey(n int, p float64) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	m := int(p / 2 * float64(n-1))
	if m < 1 {
		return w
	}
	for i := 0; i <= m && i < n; i++ {
		v := 0.5 - 0.5*math.Cos(math.Pi*float64(i)/float64(m))
		w[i] = v
		w[n-1-i] = v
	}
	return w
}

// analyze chooses the coding of channel x (bps bits per sample) into sf.
func (a *analyzer) analyze(sf *subframe, x []int32, bps uint) {
	a.analyzeEst(sf, x, bps, -1, 0)
}

// analyzeEst is analyze with the result of fixedEstimate(x) when the caller has it
// (order >= 0).
func (a *analyzer) analyzeEst(sf *subframe, x []int32, bps uint, order int, est float64) {
	n := len(x)
	sf.data = sf.data[:n]

	// Constant block (silence, DC).
	constant := true
	var or int32
	for _, v := range x {
		or |= v
		if v != x[0] {
			constant = false
		}
	}
	if constant {
		sf.kind, sf.bps, sf.wasted, sf.order = kindConstant, bps, 0, 0
		sf.data[0] = x[0]
		sf.bits = 8 + int(bps)
		return
	}

	// Wasted bits: low bits that are zero in every sample.
	wasted := uint(bits.TrailingZeros32(uint32(or)))
	if wasted > 0 {
		for i, v := range x {
			sf.data[i] = v >> wasted
		}
	} else {
		copy(sf.data, x)
	}
	sf.wasted = wasted
	bps -= wasted
	x = sf.data
	header := 8 + int(wasted)

	// Verbatim is the fallback.
	sf.kind, sf.bps, sf.order = kindVerbatim, bps, 0
	sf.bits = header + n*int(bps)

	if order < 0 {
		order, est = fixedEstimate(x, bps)
	} else {
		// Shifting out the wasted bits leaves the best order and saves their bits.
		est = max(est-float64(n)*float64(wasted), float64(n))
	}
	if a.maxOrder > 0 && n > 2*a.maxOrder && n > 64 {
		a.tryLPC(sf, x, bps, header)
		// Code the fixed predictor only when its estimate comes near the LPC coding:
		// LPC usually wins by far more than the estimate errs.
		if sf.kind == kindLPC && a.level != LevelBest && float64(sf.bits) < fixedSkipRatio*est {
			return
		}
	}
	a.tryFixed(sf, x, bps, header, order)
}

// keep makes the candidate in sf.tmp the chosen coding if it is smaller.
func (sf *subframe) keep(bits int, k kind, order int) bool {
	if bits >= sf.bits {
		return false
	}
	sf.bits, sf.kind, sf.order = bits, k, order
	sf.res, sf.tmp = sf.tmp, sf.res
	sf.rice, sf.tmpRice = sf.tmpRice, sf.rice
	return true
}

// fixedEstimate returns the fixed predictor order with the smallest sum of absolute
// residuals over x (samples of at most bps bits) and an estimate of the bits its
// Rice-coded residual takes, from the mean folded residual and the best Rice parameter
// for it.
func fixedEstimate(x []int32, bps uint) (order int, bits float64) {
	n := len(x)
	if n <= 4 {
		return 0, float64(n) * 32
	}
	s, ok := fixedSumsNarrow(x, bps)
	if !ok {
		s = fixedSums(x)
	}
	for o := 1; o < 5; o++ {
		if s[o] < s[order] {
			order = o
		}
	}
	// Rice with parameter k codes a folded value u (mean about 2m) in k+1+u>>k bits.
	u := 2 * float64(s[order]) / float64(n-4)
	k0 := 0
	if u > 1 {
		k0 = max(0, int(math.Log2(u*math.Ln2)))
	}
	perSample := math.Inf(1)
	for k := max(0, k0-1); k <= k0+1; k++ {
		perSample = min(perSample, float64(k+1)+u/float64(uint64(1)<<k))
	}
	return order, perSample * float64(n)
}

// tryFixed codes the fixed predictor of the given order (the one fixedEstimate picked)
// and keeps it if smaller than sf's current coding.
func (a *analyzer) tryFixed(sf *subframe, x []int32, bps uint, header, order int) {
	n := len(x)
	// Decoders may restore fixed predictions in 32-bit arithmetic, where
	// order k needs bps+k bits; stay within that, as other encoders do.
	if bps > 28 {
		order = min(order, 32-int(bps))
	}
	for ; order >= 0; order-- {
		if fixedResidual(sf.tmp[:n], x, order) {
			break
		}
	}
	if order < 0 {
		return
	}
	rb := a.bestRice(&sf.tmpRice, sf.tmp[:n], order)
	sf.keep(header+order*int(bps)+rb, kindFixed, order)
}

func abs64(v int64) uint64 {
	m := v >> 63
	return uint64((v ^ m) - m)
}

// Residuals must fit in a signed 32-bit integer (RFC 9639 section 9.2.7);
// predictors whose residual reaches the most negative value are also
// rejected, to stay clear of decoders that negate it.
const maxResidual = math.MaxInt32

// fixedResidual computes the residual of the fixed predictor of the given
// order into r (r[:order] is left unset) and reports whether it fits.
func fixedResidual(r, x []int32, order int) bool {
	var lo, hi int64
	switch order {
	case 0:
		copy(r, x)
		return true
	case 1:
		for i := 1; i < len(x); i++ {
			v := int64(x[i]) - int64(x[i-1])
			lo, hi = min(lo, v), max(hi, v)
			r[i] = int32(v)
		}
	case 2:
		for i := 2; i < len(x); i++ {
			v := int64(x[i]) - 2*int64(x[i-1]) + int64(x[i-2])
			lo, hi = min(lo, v), max(hi, v)
			r[i] = int32(v)
		}
	case 3:
		for i := 3; i < len(x); i++ {
			v := int64(x[i]) - 3*int64(x[i-1]) + 3*int64(x[i-2]) - int64(x[i-3])
			lo, hi = min(lo, v), max(hi, v)
			r[i] = int32(v)
		}
	case 4:
		for i := 4; i < len(x); i++ {
			v := int64(x[i]) - 4*int64(x[i-1]) + 6*int64(x[i-2]) - 4*int64(x[i-3]) + int64(x[i-4])
			lo, hi = min(lo, v), max(hi, v)
			r[i] = int32(v)
		}
	}
	return lo >= -maxResidual && hi <= maxResidual
}

// fixedSkipRatio: the fixed predictor is not coded when the LPC coding already takes less
// than this fraction of the fixed predictor's estimated size.
const fixedSkipRatio = 0.9

// write writes the subframe (RFC 9639 section 9.2).
func (sf *subframe) write(w *bitWriter) {
	var typ uint64
	switch sf.kind {
	case kindConstant:
		typ = 0
	case kindVerbatim:
		typ = 1
	case kindFixed:
		typ = 8 | uint64(sf.order)
	case kindLPC:
		typ = 32 | uint64(sf.order-1)
	}
	if sf.wasted > 0 {
		w.writeBits(typ<<1|1, 8)
		w.writeUnary(sf.wasted - 1)
	} else {
		w.writeBits(typ<<1, 8)
	}
	switch sf.kind {
	case kindConstant:
		w.writeSigned(int64(sf.data[0]), sf.bps)
		return
	case kindVerbatim:
		for _, v := range sf.data {
			w.writeSigned(int64(v), sf.bps)
		}
		return
	}
	for _, v := range sf.data[:sf.order] {
		w.writeSigned(int64(v), sf.bps)
	}
	if sf.kind == kindLPC {
		w.writeBits(uint64(sf.precision-1), 4)
		w.writeBits(uint64(sf.shift), 5)
		for _, c := range sf.coefs[:sf.order] {
			w.writeSigned(int64(c), sf.precision)
		}
	}
	sf.rice.write(w, sf.res[:len(sf.data)], sf.order)
}

// fixedSums returns, for k = 0..4, the sum of |residual| of the fixed predictor of order k
// over x[4:] (len(x) > 4).
func fixedSums(x []int32) [5]uint64 {
	var s0, s1, s2, s3, s4 uint64
	p1 := int64(x[3]) - int64(x[2])
	p2 := p1 - (int64(x[2]) - int64(x[1]))
	p3 := p2 - ((int64(x[2]) - int64(x[1])) - (int64(x[1]) - int64(x[0])))
	prev0 := int64(x[3])
	for _, v := range x[4:] {
		e0 := int64(v)
		e1 := e0 - prev0
		e2 := e1 - p1
		e3 := e2 - p2
		e4 := e3 - p3
		s0 += abs64(e0)
		s1 += abs64(e1)
		s2 += abs64(e2)
		s3 += abs64(e3)
		s4 += abs64(e4)
		prev0, p1, p2, p3 = e0, e1, e2, e3
	}
	return [5]uint64{s0, s1, s2, s3, s4}
}
