package dedup

import "encoding/binary"

// filter is a split-block Bloom filter: blocks of eight 32-bit words, a key setting one bit in
// each word of one block (a single cache line per test), the block chosen by the hash's high
// word, the bits by its low word. It answers "certainly new" or "maybe seen"; at 16 bits a
// key or more, fewer than one new key in a thousand is a "maybe".
type filter struct {
	b      []byte // len = 32 * blocks
	blocks uint64
}

const blockSize = 32

// salts spread one 32-bit key over the eight words (odd constants, as split-block filters use).
var salts = [8]uint32{0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31}

func (f *filter) block(h Hash) []byte {
	i := ((h.Hi >> 32) * f.blocks) >> 32
	return f.b[i*blockSize : i*blockSize+blockSize : i*blockSize+blockSize]
}

// add sets h's bits and reports whether they were all set before (h maybe seen). The block's
// eight 32-bit words are handled two at a time, as four 64-bit words.
func (f *filter) add(h Hash) bool {
	b := f.block(h)
	x := uint32(h.Lo)
	all := true
	for j := 0; j < 8; j += 2 {
		m := uint64(1)<<((x*salts[j])>>27) | uint64(1)<<(32+(x*salts[j+1])>>27)
		w := binary.LittleEndian.Uint64(b[4*j:])
		all = all && w&m == m
		binary.LittleEndian.PutUint64(b[4*j:], w|m)
	}
	return all
}
