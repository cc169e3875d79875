//go:build amd64 && !purego

#include "textflag.h"

// func riceAsm(dst *int32, n int, k uint, buf *byte, end int, cache uint64, nbits uint, pos int) (int, uint64, uint, int)
//
// riceFast (frame.go) with LZCNT and SHLX/SHRX; end is len(buf)-8, the last position a
// refill may load 8 bytes from. Registers: DI dst, BX n, R13 i, R9 k, R14 k+1, SI buf,
// R8 end, R10 cache, R11 nbits, R12 pos.
TEXT ·riceAsm(SB), NOSPLIT, $0-96
	MOVQ dst+0(FP), DI
	MOVQ n+8(FP), BX
	MOVQ k+16(FP), R9
	MOVQ buf+24(FP), SI
	MOVQ end+32(FP), R8
	MOVQ cache+40(FP), R10
	MOVQ nbits+48(FP), R11
	MOVQ pos+56(FP), R12
	LEAQ 1(R9), R14
	XORQ R13, R13

loop:
	CMPQ R13, BX
	JGE  done
	CMPQ R11, $32
	JAE  decode
	CMPQ R12, R8
	JG   decode
	// cache |= bigendian(buf[pos:pos+8]) >> nbits; pos += (63-nbits)/8; nbits += 8*that
	MOVQ   (SI)(R12*1), AX
	BSWAPQ AX
	SHRXQ  R11, AX, AX
	ORQ    AX, R10
	MOVQ   $63, AX
	SUBQ   R11, AX
	SHRQ   $3, AX
	ADDQ   AX, R12
	LEAQ   (R11)(AX*8), R11

decode:
	LZCNTQ R10, AX         // quotient q (64 for an empty cache)
	LEAQ   (AX)(R14*1), CX // used = q + 1 + k
	CMPQ   CX, R11
	JA     done            // the code is not wholly in the cache
	MOVQ   $64, DX
	SUBQ   CX, DX
	SHRXQ  DX, R10, DX     // 1<<k | low
	DECQ   AX
	SHLXQ  R9, AX, AX      // (q-1)<<k
	ADDL   AX, DX          // q<<k | low, 32-bit
	SHLXQ  CX, R10, R10
	SUBQ   CX, R11
	MOVL   DX, AX
	SHRL   $1, AX
	ANDL   $1, DX
	NEGL   DX
	XORL   DX, AX
	MOVL   AX, (DI)(R13*4)
	INCQ   R13
	JMP    loop

done:
	MOVQ R13, ret+64(FP)
	MOVQ R10, ret1+72(FP)
	MOVQ R11, ret2+80(FP)
	MOVQ R12, ret3+88(FP)
	RET
