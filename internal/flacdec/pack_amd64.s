//go:build amd64 && !purego

#include "textflag.h"

// func pack16AVX2(dst *byte, s *int32, n int, off uint32) uint32
//
// Writes the low 16 bits of s[0..n) to dst as little-endian pairs of bytes (n a multiple
// of 16) and returns the OR of every s[i]+off (32-bit, wrapping): the range check of hash.
TEXT ·pack16AVX2(SB), NOSPLIT, $0-36
	MOVQ         dst+0(FP), DI
	MOVQ         s+8(FP), SI
	MOVQ         n+16(FP), BX
	MOVL         off+24(FP), AX
	MOVQ         AX, X7
	VPBROADCASTD X7, Y7
	VPXOR        Y6, Y6, Y6
	VPCMPEQD     Y8, Y8, Y8
	VPSRLD       $16, Y8, Y8 // 0x0000ffff in every lane
	XORQ         R8, R8

loop:
	CMPQ      R8, BX
	JGE       done
	VMOVDQU   (SI)(R8*4), Y0
	VMOVDQU   32(SI)(R8*4), Y1
	VPADDD    Y7, Y0, Y2
	VPOR      Y2, Y6, Y6
	VPADDD    Y7, Y1, Y3
	VPOR      Y3, Y6, Y6
	VPAND     Y8, Y0, Y0
	VPAND     Y8, Y1, Y1
	VPACKUSDW Y1, Y0, Y0 // s0-3 s8-11 | s4-7 s12-15 (exact: every value is below 2^16)
	VPERMQ    $0xd8, Y0, Y0
	VMOVDQU   Y0, (DI)(R8*2)
	ADDQ      $16, R8
	JMP       loop

done:
	VEXTRACTI128 $1, Y6, X0
	VPOR         X0, X6, X6
	VPSHUFD      $0x4e, X6, X0
	VPOR         X0, X6, X6
	VPSHUFD      $0xb1, X6, X0
	VPOR         X0, X6, X6
	VMOVD        X6, AX
	MOVL         AX, ret+32(FP)
	VZEROUPPER
	RET
