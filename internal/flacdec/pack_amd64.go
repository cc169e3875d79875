//go:build amd64 && !purego

package flacdec

import "golang.org/x/sys/cpu"

// hasAVX2 reports whether pack16AVX2 can run on this CPU.
var hasAVX2 = cpu.X86.HasAVX2

//go:noescape
func pack16AVX2(dst *byte, s *int32, n int, off uint32) uint32

// pack16Vec is pack16 with AVX2 for the first multiple of 16 samples: it writes their
// low 16 bits to buf as little-endian bytes and returns how many samples it took and
// the OR of every s[i]+off. buf must hold 2*len(s) bytes.
func pack16Vec(buf []byte, s []int32, off uint32) (int, uint32) {
	n := len(s) &^ 15
	if !hasAVX2 || n == 0 || len(buf) < 2*n {
		return 0, 0
	}
	return n, pack16AVX2(&buf[0], &s[0], n, off)
}
