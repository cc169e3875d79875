package flacenc

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
)

const (
	maxPartitionOrder = 8
	maxRiceParam      = 30 // 31 is the escape code of the 5-bit parameter method
)

// rice is a partitioned Rice coding of a residual (RFC 9639 section 9.2.7).
type rice struct {
	partOrder int
	wide      bool // 5-bit parameters (coding method 1)
	params    [1 << maxPartitionOrder]uint8
}

// fold maps a signed residual to the unsigned value Rice codes: 0, -1, 1, -2,
// 2 ... become 0, 1, 2, 3, 4 ...
func fold(v int32) uint64 {
	return uint64(uint32(v<<1 ^ v>>31))
}

// riceParam returns the parameter that minimises the estimated size of cnt
// folded values summing to sum, and that size in bits.
func riceParam(sum uint64, cnt int) (k uint, size int) {
	if cnt == 0 {
		return 0, 0
	}
	c := uint64(cnt)
	m := sum / c
	kc := bits.Len64(m) // log2(mean) rounded up, roughly
	best, bestK := uint64(1<<63), uint(0)
	for kk := max(kc-2, 0); kk <= min(kc, maxRiceParam); kk++ {
		// Each value costs k+1 bits plus its quotient; the quotient sum is
		// estimated assuming the low k bits are uniformly distributed.
		low := c * (uint64(1)<<kk - 1) / 2
		q := uint64(0)
		if sum > low {
			q = (sum - low) >> kk
		}
		if b := c*uint64(kk+1) + q; b < best {
			best, bestK = b, uint(kk)
		}
	}
	return bestK, int(min(best, 1<<40))
}

// bestRice chooses the partition order and parameters for the residual
// res[order:] of a block of len(res) samples, stores them in r and returns the
// estimated size of the coded residual in bits.
func (a *analyzer) bestRice(r *rice, res []int32, order int) int {
	n := len(res)
	top := a.maxPartOrder
	for top > 0 && (n&(1<<top-1) != 0 || n>>top <= order) {
		top--
	}
	parts := 1 << top
	size := n >> top
	sums := a.sums[:parts]
	for p := range parts {
		start, end := p*size, (p+1)*size
		if p == 0 {
			start = order
		}
		var s uint64
		for _, v := range res[start:end] {
			s += fold(v)
		}
		sums[p] = s
	}

	bestBits := math.MaxInt
	var params [1 << maxPartitionOrder]uint8
	for po := top; po >= 0; po-- {
		parts := 1 << po
		size := n >> po
		total := 2 + 4
		wide := false
		for p := range parts {
			cnt := size
			if p == 0 {
				cnt -= order
			}
			k, b := riceParam(sums[p], cnt)
			params[p] = uint8(k)
			if k > 14 {
				wide = true
			}
			total += b
		}
		if wide {
			total += 5 * parts
		} else {
			total += 4 * parts
		}
		if total < bestBits {
			bestBits = total
			r.partOrder, r.wide = po, wide
			copy(r.params[:parts], params[:parts])
		}
		// Merge neighbouring partitions for the next lower order.
		for p := range parts / 2 {
			sums[p] = sums[2*p] + sums[2*p+1]
		}
	}
	return bestBits
}

// write writes the coded residual res[order:].
func (r *rice) write(w *bitWriter, res []int32, order int) {
	pbits := uint(4)
	if r.wide {
		w.writeBits(1, 2)
		pbits = 5
	} else {
		w.writeBits(0, 2)
	}
	w.writeBits(uint64(r.partOrder), 4)
	parts := 1 << r.partOrder
	size := len(res) >> r.partOrder
	for p := range parts {
		k := uint(r.params[p])
		w.writeBits(uint64(k), pbits)
		start, end := p*size, (p+1)*size
		if p == 0 {
			start = order
		}
		w.writeCodes(res[start:end], k)
	}
}

// writeCodes writes the Rice codes of res with parameter k: runs of short codes through
// pairCodes, the others one at a time.
func (w *bitWriter) writeCodes(res []int32, k uint) {
	mask := uint64(1)<<k - 1
	for len(res) >= 2 {
		w.flushBytes()
		// A pair takes at most 32 bits and fewer than 8 are pending: each store
		// advances at most 4 bytes and writes 8.
		b := slices.Grow(w.buf, 2*len(res)+8)
		var i, j int
		i, j, w.acc, w.n = pairCodes(res, k, b[:cap(b)], len(b), w.acc, w.n)
		w.buf = b[:j]
		res = res[i:]
		if len(res) >= 2 { // a pair longer than 32 bits
			w.writeCode(fold(res[0]), k, mask)
			w.writeCode(fold(res[1]), k, mask)
			res = res[2:]
		}
	}
	if len(res) == 1 {
		w.writeCode(fold(res[0]), k, mask)
	}
}

// pairCodes writes the Rice codes of res (parameter k) two at a time into b from byte j,
// with acc holding n < 8 pending bits, until a pair would take more than 32 bits or fewer
// than two codes remain; it returns how many it wrote, the new end of b and the pending
// bits. Two codes are one code of their summed length (the first shifted above the
// second). After each pair the pending bits are stored eight bytes at a time and the
// writer advances by the whole bytes among them: no branch on how many bits are pending,
// which a predictor cannot guess; the bytes past the last whole one are rewritten by the
// next store. It calls nothing, so the state stays in registers.
func pairCodes(res []int32, k uint, b []byte, j int, acc uint64, n uint) (int, int, uint64, uint) {
	kk := k & 63
	mask := uint64(1)<<kk - 1
	one := uint64(1) << kk
	k2 := uint64(2*k + 2) // the stop bits and low bits of two codes
	i := 0
	for ; i+1 < len(res); i += 2 {
		u1, u2 := fold(res[i]), fold(res[i+1])
		q1, q2 := u1>>kk, u2>>kk // below 2^32 each
		if q1+q2+k2 > 32 || len(b)-j < 8 {
			break // a long pair (the capacity covers every short one)
		}
		nb2 := uint(q2) + k + 1
		nb := uint(q1+q2+k2) & 63
		acc = acc<<nb | (one|u1&mask)<<(nb2&63) | one | u2&mask
		n += nb
		binary.BigEndian.PutUint64(b[j:], acc<<((64-n)&63))
		j += int(n >> 3)
		n &= 7
	}
	return i, j, acc, n
}

// writeCode writes the Rice code of the folded value u with parameter k (mask = 1<<k - 1).
func (w *bitWriter) writeCode(u uint64, k uint, mask uint64) {
	if q := uint(u >> k); q+k < 32 {
		w.writeBits(1<<k|u&mask, q+k+1)
	} else {
		w.writeUnary(q)
		w.writeBits(u&mask, k)
	}
}
