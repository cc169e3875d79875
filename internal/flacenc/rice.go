package flacenc

import (
	"encoding/binary"
	"math/bits"
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

	bestBits := 1 << 62
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

// writeCodes writes the Rice codes of res with parameter k. The bit writer's state stays
// in locals for the loop: through the pointer, every code would load and store it.
func (w *bitWriter) writeCodes(res []int32, k uint) {
	acc, n, buf := w.acc, w.n, w.buf
	mask := uint64(1)<<k - 1
	one := uint64(1) << k
	for _, v := range res {
		u := fold(v)
		q := uint(u >> k)
		if q+k >= 32 { // a long code: the general path
			w.acc, w.n, w.buf = acc, n, buf
			w.writeUnary(q)
			w.writeBits(u&mask, k)
			acc, n, buf = w.acc, w.n, w.buf
			continue
		}
		nb := (q + k + 1) & 63
		acc = acc<<nb | one | u&mask
		n += nb
		if n >= 32 {
			n -= 32
			buf = binary.BigEndian.AppendUint32(buf, uint32(acc>>(n&63)))
		}
	}
	w.acc, w.n, w.buf = acc, n, buf
}
