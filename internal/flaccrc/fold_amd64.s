//go:build amd64 && !purego

#include "textflag.h"

// Reverses the 16 bytes of a register: the first byte of the message becomes the most
// significant, so bit 127 holds the highest power of x.
DATA bswap16<>+0(SB)/8, $0x08090a0b0c0d0e0f
DATA bswap16<>+8(SB)/8, $0x0001020304050607
GLOBL bswap16<>(SB), RODATA|NOPTR, $16

// func fold128(b *byte, n int, k *[2]uint64, out *[16]byte)
//
// Folds the n bytes at b (n a multiple of 16, at least 16) into a 128-bit polynomial
// congruent to them modulo the CRC polynomial: each step multiplies the running value's
// high half by k[1] = x^192 mod P and its low half by k[0] = x^128 mod P (carry-less) and
// adds the next 16 bytes. out receives the result as 16 bytes, most significant first.
TEXT ·fold128(SB), NOSPLIT, $0-32
	MOVQ  b+0(FP), SI
	MOVQ  n+8(FP), BX
	MOVQ  k+16(FP), DX
	MOVQ  out+24(FP), DI
	MOVOU bswap16<>(SB), X7
	MOVOU (DX), X6
	MOVOU (SI), X0
	PSHUFB X7, X0
	ADDQ  $16, SI
	SUBQ  $16, BX

loop:
	CMPQ      BX, $16
	JLT       done
	MOVOU     (SI), X1
	PSHUFB    X7, X1
	MOVO      X0, X2
	PCLMULQDQ $0x11, X6, X0
	PCLMULQDQ $0x00, X6, X2
	PXOR      X2, X0
	PXOR      X1, X0
	ADDQ      $16, SI
	SUBQ      $16, BX
	JMP       loop

done:
	PSHUFB X7, X0
	MOVOU  X0, (DI)
	RET
