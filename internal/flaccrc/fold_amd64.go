//go:build amd64 && !purego

package flaccrc

import "golang.org/x/sys/cpu"

// hasFold reports whether fold128 can run on this CPU (carry-less multiply and PSHUFB).
var hasFold = cpu.X86.HasPCLMULQDQ && cpu.X86.HasSSSE3

// foldK holds x^128 and x^192 modulo the CRC-16 polynomial, the multipliers of fold128.
var foldK = [2]uint64{xPowMod16(128), xPowMod16(192)}

//go:noescape
func fold128(b *byte, n int, k *[2]uint64, out *[16]byte)

// fold16 reduces the first multiple of 16 bytes of b (when there are at least 64) to 16
// bytes with the same CRC-16, with carry-less multiplies; it returns them and how many
// bytes of b they stand for (0: none taken).
func fold16(b []byte) ([16]byte, int) {
	var out [16]byte
	n := len(b) &^ 15
	if !hasFold || n < 64 {
		return out, 0
	}
	fold128(&b[0], n, &foldK, &out)
	return out, n
}

// xPowMod16 returns x^n modulo the CRC-16 polynomial x^16+x^15+x^2+1, as its 16 low
// coefficients.
func xPowMod16(n int) uint64 {
	r := uint32(1)
	for range n {
		r <<= 1
		if r&0x10000 != 0 {
			r ^= 0x18005
		}
	}
	return uint64(r)
}
