//go:build amd64 && !purego

package flacdec

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// hasRiceAsm reports whether riceAsm can run on this CPU (LZCNT, SHLX/SHRX).
var hasRiceAsm = cpu.X86.HasLZCNT && cpu.X86.HasBMI2

//go:noescape
func riceAsm(dst *int32, n int, k uint, buf *byte, end int, cache uint64, nbits uint, pos int) (int, uint64, uint, int)

// riceFastVec is riceFast in assembly where the CPU has LZCNT and BMI2: the stop bit is
// found with LZCNT (one cycle, against BSR's three or four) and every shift takes its
// count from any register, so a code costs a few cycles on the chain to the next one.
func riceFastVec(dst []int32, k uint, buf []byte, cache uint64, n uint, pos int) (int, uint64, uint, int) {
	if !hasRiceAsm || len(dst) == 0 || len(buf) < 8 {
		return riceFast(dst, k, buf, cache, n, pos)
	}
	return riceAsm(unsafe.SliceData(dst), len(dst), k&31, unsafe.SliceData(buf), len(buf)-8, cache, n, pos)
}
