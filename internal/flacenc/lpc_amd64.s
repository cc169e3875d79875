//go:build amd64 && !purego

#include "textflag.h"

// func residual8AVX2(r, x, q *int32, order, shift, n int)
//
// For i in [0, n), n a multiple of 8: r[i] = x[i] - (sum_{j<order} q[j]*x[i-1-j]) >> shift,
// eight samples at a time in 32-bit lanes. x[-order..-1] must be readable; the caller
// checks that every partial sum fits in 32 bits, which makes the result exact.
TEXT ·residual8AVX2(SB), NOSPLIT, $0-48
	MOVQ r+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ q+16(FP), DX
	MOVQ order+24(FP), CX
	MOVQ shift+32(FP), AX
	MOVQ n+40(FP), BX
	MOVQ AX, X4
	XORQ R8, R8

block:
	CMPQ R8, BX
	JGE  done
	VPXOR Y0, Y0, Y0
	VPXOR Y5, Y5, Y5
	LEAQ -4(SI)(R8*4), R9  // &x[i-1]
	MOVQ DX, R10           // &q[0]
	MOVQ CX, R11           // coefficients left
	CMPQ R11, $2
	JLT  one

pair: // two coefficients per step, into two accumulators
	VPBROADCASTD (R10), Y1
	VPMULLD      (R9), Y1, Y2
	VPADDD       Y2, Y0, Y0
	VPBROADCASTD 4(R10), Y1
	VPMULLD      -4(R9), Y1, Y3
	VPADDD       Y3, Y5, Y5
	ADDQ         $8, R10
	SUBQ         $8, R9
	SUBQ         $2, R11
	CMPQ         R11, $2
	JGE          pair

one:
	TESTQ        R11, R11
	JZ           sum
	VPBROADCASTD (R10), Y1
	VPMULLD      (R9), Y1, Y2
	VPADDD       Y2, Y0, Y0

sum:
	VPADDD  Y5, Y0, Y0
	VPSRAD  X4, Y0, Y0
	VMOVDQU (SI)(R8*4), Y3
	VPSUBD  Y0, Y3, Y3
	VMOVDQU Y3, (DI)(R8*4)
	ADDQ    $8, R8
	JMP     block

done:
	VZEROUPPER
	RET
