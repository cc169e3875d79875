package flacdec

import (
	"encoding/binary"
	"math/rand"
	"testing"
)

// TestPack16Vec checks the vector packing of 16-bit samples for the MD5 (AVX2 on amd64)
// against the bytes and range check of the Go loop, with samples in range, at its edges
// and beyond it (whose low bits must still be packed exactly, and the OR report them).
func TestPack16Vec(t *testing.T) {
	if n, _ := pack16Vec(make([]byte, 64), make([]int32, 32), 1<<15); n == 0 {
		t.Skip("no vector packing on this platform or CPU: hash packs in Go")
	}
	rng := rand.New(rand.NewSource(9))
	const off = 1 << 15
	for _, n := range []int{16, 17, 31, 32, 100, 4096} {
		for _, kind := range []string{"in range", "edges", "beyond"} {
			s := make([]int32, n)
			for i := range s {
				switch kind {
				case "in range":
					s[i] = int32(rng.Intn(1<<16) - 1<<15)
				case "edges":
					s[i] = []int32{-1 << 15, 1<<15 - 1, 0, -1}[rng.Intn(4)]
				default:
					s[i] = int32(rng.Uint32())
				}
			}
			buf := make([]byte, 2*n+8)
			got, or := pack16Vec(buf, s, off)
			if got != n&^15 {
				t.Fatalf("n %d: took %d samples, want %d", n, got, n&^15)
			}
			var want uint32
			for i, v := range s[:got] {
				want |= uint32(v) + off
				if b := binary.LittleEndian.Uint16(buf[2*i:]); b != uint16(v) {
					t.Fatalf("n %d %s: sample %d (%d) packed as %#x", n, kind, i, v, b)
				}
			}
			if or != want {
				t.Fatalf("n %d %s: OR %#x, want %#x", n, kind, or, want)
			}
			if inRange := or>>16 == 0; inRange != (kind != "beyond") {
				t.Fatalf("n %d %s: in range = %v", n, kind, inRange)
			}
		}
	}
	if n, _ := pack16Vec(make([]byte, 30), make([]int32, 16), off); n != 0 {
		t.Error("pack16Vec wrote past a short buffer")
	}
}
