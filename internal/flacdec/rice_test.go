package flacdec

import (
	"math/rand"
	"testing"
)

// TestRiceFastVec checks the assembly Rice decoder (amd64 with LZCNT and BMI2) against
// riceFast: the same values, the same count decoded and the same reader state at every
// stop, for every parameter 0-26, over random bits and codes with quotients around the
// cache's width, ending anywhere in the buffer.
func TestRiceFastVec(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	for k := uint(0); k <= 26; k++ {
		for trial := range 40 {
			buf := make([]byte, 8+rng.Intn(600))
			switch trial % 4 {
			case 0: // random bits
				rng.Read(buf)
			case 1: // sparse one bits: long quotients, some beyond the cache
				for i := range buf {
					if rng.Intn(12) == 0 {
						buf[i] = 1 << rng.Intn(8)
					}
				}
			case 2: // dense one bits: short quotients
				for i := range buf {
					buf[i] = byte(rng.Intn(256)) | 0x91
				}
			default: // all ones then all zeros
				for i := range buf[:len(buf)/2] {
					buf[i] = 0xff
				}
			}
			pos := rng.Intn(len(buf) - 7)
			var r0, r1 bitReader
			r0.reset(buf, pos)
			r0.refill()
			r0.read(uint(rng.Intn(9)))
			r1 = r0
			n := 1 + rng.Intn(300)
			want, got := make([]int32, n), make([]int32, n)
			for step := 0; ; step++ {
				i0, c0, n0, p0 := riceFast(want, k, buf, r0.cache, r0.n, r0.pos)
				i1, c1, n1, p1 := riceFastVec(got, k, buf, r1.cache, r1.n, r1.pos)
				if i0 != i1 || c0 != c1 || n0 != n1 || p0 != p1 {
					t.Fatalf("k %d trial %d step %d: vec (%d %#x %d %d), Go (%d %#x %d %d)",
						k, trial, step, i1, c1, n1, p1, i0, c0, n0, p0)
				}
				for j := range i0 {
					if want[j] != got[j] {
						t.Fatalf("k %d trial %d step %d: value %d: vec %d, Go %d", k, trial, step, j, got[j], want[j])
					}
				}
				if i0 == len(want) {
					break
				}
				// Continue past the code that stopped both, as rice does.
				r0.cache, r0.n, r0.pos = c0, n0, p0
				r1.cache, r1.n, r1.pos = c1, n1, p1
				v0, ok0 := r0.riceOne(k)
				v1, ok1 := r1.riceOne(k)
				if v0 != v1 || ok0 != ok1 || r0.cache != r1.cache || r0.n != r1.n || r0.pos != r1.pos || r0.over != r1.over {
					t.Fatalf("k %d trial %d step %d: riceOne differs", k, trial, step)
				}
				if !ok0 || r0.overrun() {
					break
				}
				want, got = want[i0+1:], got[i0+1:]
				if len(want) == 0 {
					break
				}
			}
		}
	}
}
