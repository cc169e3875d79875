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

// func fixedSums8AVX2(x *int32, n int, sums *[5][8]uint32)
//
// Adds to sums[k][lane] the absolute fixed-predictor residuals of order k (k = 0..4) of
// x[i] for i in [0, n), n a multiple of 8, lane = i mod 8: e0 = x[i], e1 = x[i]-x[i-1],
// and e(k+1)[i] = ek[i] - ek[i-1]. x[-4..-1] must be readable; the caller checks that
// every residual and every lane sum fits in 32 bits.
TEXT ·fixedSums8AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), BX
	MOVQ sums+16(FP), DI
	VMOVDQU 0(DI), Y10
	VMOVDQU 32(DI), Y11
	VMOVDQU 64(DI), Y12
	VMOVDQU 96(DI), Y13
	VMOVDQU 128(DI), Y14
	XORQ    R8, R8

loop:
	CMPQ    R8, BX
	JGE     done
	LEAQ    (SI)(R8*4), R9
	VMOVDQU (R9), Y0    // x[i]
	VMOVDQU -4(R9), Y1  // x[i-1]
	VMOVDQU -8(R9), Y2  // x[i-2]
	VMOVDQU -12(R9), Y3 // x[i-3]
	VMOVDQU -16(R9), Y4 // x[i-4]
	VPABSD  Y0, Y5
	VPADDD  Y5, Y10, Y10
	VPSUBD  Y4, Y3, Y4  // first differences, newest in Y0
	VPSUBD  Y3, Y2, Y3
	VPSUBD  Y2, Y1, Y2
	VPSUBD  Y1, Y0, Y1
	VPABSD  Y1, Y5
	VPADDD  Y5, Y11, Y11
	VPSUBD  Y4, Y3, Y4  // second differences
	VPSUBD  Y3, Y2, Y3
	VPSUBD  Y2, Y1, Y2
	VPABSD  Y2, Y5
	VPADDD  Y5, Y12, Y12
	VPSUBD  Y4, Y3, Y4  // third differences
	VPSUBD  Y3, Y2, Y3
	VPABSD  Y3, Y5
	VPADDD  Y5, Y13, Y13
	VPSUBD  Y4, Y3, Y4  // fourth difference
	VPABSD  Y4, Y5
	VPADDD  Y5, Y14, Y14
	ADDQ    $8, R8
	JMP     loop

done:
	VMOVDQU Y10, 0(DI)
	VMOVDQU Y11, 32(DI)
	VMOVDQU Y12, 64(DI)
	VMOVDQU Y13, 96(DI)
	VMOVDQU Y14, 128(DI)
	VZEROUPPER
	RET

// func autocorrFrom8AVX2(x *float64, n int, acc *[12]float64)
//
// For i in [8, n), in order: acc[3-l] += x[i]*x[i-l] for lags l = 0..3, acc[11-l] for
// l = 4..7 and acc[8] for l = 8: each lag's sum is the serial sum of the Go loop (a
// multiply rounded, then an add rounded, no fused multiply-add), one lag per lane.
TEXT ·autocorrFrom8AVX2(SB), NOSPLIT, $0-24
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), BX
	MOVQ    acc+16(FP), DI
	VMOVUPD 0(DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVSD  64(DI), X2
	MOVQ    $8, R8

acloop:
	CMPQ         R8, BX
	JGE          acdone
	LEAQ         (SI)(R8*8), R9
	VBROADCASTSD (R9), Y3
	VMOVUPD      -24(R9), Y4 // x[i-3..i]
	VMULPD       Y4, Y3, Y4
	VADDPD       Y4, Y0, Y0
	VMOVUPD      -56(R9), Y5 // x[i-7..i-4]
	VMULPD       Y5, Y3, Y5
	VADDPD       Y5, Y1, Y1
	VMOVSD       -64(R9), X6 // x[i-8]
	VMULSD       X6, X3, X6
	VADDSD       X6, X2, X2
	INCQ         R8
	JMP          acloop

acdone:
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVSD  X2, 64(DI)
	VZEROUPPER
	RET
