//go:build amd64 && !purego

#include "textflag.h"

// The UTF-8 check classifies each byte with the byte before it by three 16-entry tables
// indexed by nibbles (the previous byte's high and low nibble, this byte's high nibble);
// the AND of the three entries is non-zero where the pair is wrong, except bit 7 (two
// continuation bytes in a row), which must be set exactly where the byte two or three
// before is the lead of a three- or four-byte sequence. Error bits:
//   0x01 a lead or ASCII byte where a continuation byte is due (sequence too short)
//   0x02 a continuation byte after ASCII (too long)
//   0x04 E0 80-9F (overlong three-byte)    0x08 F4 90-BF, F5-FF (above U+10FFFF)
//   0x10 ED A0-BF (surrogate)              0x20 C0, C1 (overlong two-byte)
//   0x40 F0 80-8F (overlong four-byte), F5-FF 80-8F
//   0x80 two continuation bytes in a row
// Each table is repeated for the two 128-bit lanes.
DATA b1h<>+0x00(SB)/8, $0x0202020202020202
DATA b1h<>+0x08(SB)/8, $0x4915012180808080
DATA b1h<>+0x10(SB)/8, $0x0202020202020202
DATA b1h<>+0x18(SB)/8, $0x4915012180808080
GLOBL b1h<>(SB), RODATA|NOPTR, $32

DATA b1l<>+0x00(SB)/8, $0xcbcbcb8b8383a3e7
DATA b1l<>+0x08(SB)/8, $0xcbcbdbcbcbcbcbcb
DATA b1l<>+0x10(SB)/8, $0xcbcbcb8b8383a3e7
DATA b1l<>+0x18(SB)/8, $0xcbcbdbcbcbcbcbcb
GLOBL b1l<>(SB), RODATA|NOPTR, $32

DATA b2h<>+0x00(SB)/8, $0x0101010101010101
DATA b2h<>+0x08(SB)/8, $0x01010101babaaee6
DATA b2h<>+0x10(SB)/8, $0x0101010101010101
DATA b2h<>+0x18(SB)/8, $0x01010101babaaee6
GLOBL b2h<>(SB), RODATA|NOPTR, $32

DATA quote<>+0x00(SB)/8, $0x2222222222222222
DATA quote<>+0x08(SB)/8, $0x2222222222222222
DATA quote<>+0x10(SB)/8, $0x2222222222222222
DATA quote<>+0x18(SB)/8, $0x2222222222222222
GLOBL quote<>(SB), RODATA|NOPTR, $32

DATA bslash<>+0x00(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bslash<>+0x08(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bslash<>+0x10(SB)/8, $0x5c5c5c5c5c5c5c5c
DATA bslash<>+0x18(SB)/8, $0x5c5c5c5c5c5c5c5c
GLOBL bslash<>(SB), RODATA|NOPTR, $32

DATA ctl<>+0x00(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA ctl<>+0x08(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA ctl<>+0x10(SB)/8, $0x1f1f1f1f1f1f1f1f
DATA ctl<>+0x18(SB)/8, $0x1f1f1f1f1f1f1f1f
GLOBL ctl<>(SB), RODATA|NOPTR, $32

DATA nib<>+0x00(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib<>+0x08(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib<>+0x10(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nib<>+0x18(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nib<>(SB), RODATA|NOPTR, $32

DATA c60<>+0x00(SB)/8, $0x6060606060606060
DATA c60<>+0x08(SB)/8, $0x6060606060606060
DATA c60<>+0x10(SB)/8, $0x6060606060606060
DATA c60<>+0x18(SB)/8, $0x6060606060606060
GLOBL c60<>(SB), RODATA|NOPTR, $32

DATA c70<>+0x00(SB)/8, $0x7070707070707070
DATA c70<>+0x08(SB)/8, $0x7070707070707070
DATA c70<>+0x10(SB)/8, $0x7070707070707070
DATA c70<>+0x18(SB)/8, $0x7070707070707070
GLOBL c70<>(SB), RODATA|NOPTR, $32

DATA c80<>+0x00(SB)/8, $0x8080808080808080
DATA c80<>+0x08(SB)/8, $0x8080808080808080
DATA c80<>+0x10(SB)/8, $0x8080808080808080
DATA c80<>+0x18(SB)/8, $0x8080808080808080
GLOBL c80<>(SB), RODATA|NOPTR, $32

// LOADCONSTS loads the constants of the string scans into Y8-Y14.
#define LOADCONSTS \
	VMOVDQU b1h<>(SB), Y8; \
	VMOVDQU b1l<>(SB), Y9; \
	VMOVDQU quote<>(SB), Y10; \
	VMOVDQU bslash<>(SB), Y11; \
	VMOVDQU ctl<>(SB), Y12; \
	VMOVDQU nib<>(SB), Y13; \
	VMOVDQU b2h<>(SB), Y14

// STOPS sets R9 to the mask of the '"', '\\' and control bytes of the block Y0.
#define STOPS \
	VPCMPEQB Y0, Y10, Y1; \
	VPCMPEQB Y0, Y11, Y2; \
	VPMINUB  Y0, Y12, Y3; \
	VPCMPEQB Y0, Y3, Y3; \
	VPOR     Y1, Y2, Y1; \
	VPOR     Y1, Y3, Y1; \
	VPMOVMSKB Y1, R9

// PREVIOUS sets Y2, Y3 and Y4 to the bytes one, two and three before each byte of the block
// Y0, from the block before it, Y15 (the high lane of Y15 and the low lane of Y0 in Y1).
#define PREVIOUS \
	VPERM2I128 $0x21, Y0, Y15, Y1; \
	VPALIGNR $15, Y1, Y0, Y2; \
	VPALIGNR $14, Y1, Y0, Y3; \
	VPALIGNR $13, Y1, Y0, Y4

// UTF8ERRORS sets R11 to the mask of the bytes of Y0 in error, given the bytes before them in
// Y2, Y3 and Y4 (see the tables above; clobbers Y3-Y6): the three table entries ANDed, and
// bit 7 xored with "two or three before is the lead of a longer sequence" (>= 0x80 after
// subtracting 0x60 or 0x70 with saturation).
#define UTF8ERRORS \
	VPSRLW   $4, Y2, Y5; \
	VPAND    Y13, Y5, Y5; \
	VPSHUFB  Y5, Y8, Y5; \
	VPAND    Y13, Y2, Y6; \
	VPSHUFB  Y6, Y9, Y6; \
	VPAND    Y6, Y5, Y5; \
	VPSRLW   $4, Y0, Y6; \
	VPAND    Y13, Y6, Y6; \
	VPSHUFB  Y6, Y14, Y6; \
	VPAND    Y6, Y5, Y5; \
	VPSUBUSB c60<>(SB), Y3, Y3; \
	VPSUBUSB c70<>(SB), Y4, Y4; \
	VPOR     Y3, Y4, Y3; \
	VPAND    c80<>(SB), Y3, Y3; \
	VPXOR    Y3, Y5, Y5; \
	VPXOR    Y6, Y6, Y6; \
	VPCMPEQB Y6, Y5, Y5; \
	VPMOVMSKB Y5, R11; \
	NOTL     R11

// func strBlocksAVX2(p *byte, n int) (off int, state int)
//
// The last bytes, under a block, are examined in the block that ends with b, when b holds
// at least 35 bytes.
//
// Registers: SI p, BX n, AX the offset of the block, DX the non-ASCII mask of the block
// before; Y0 the block, Y15 the block before (zero at the start: ASCII), Y8-Y14 constants.
TEXT ·strBlocksAVX2(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), BX
	XORQ AX, AX
	XORQ DX, DX
	VPXOR Y15, Y15, Y15
	LOADCONSTS

loop:
	MOVQ BX, R8
	SUBQ AX, R8
	CMPQ R8, $32
	JLT  tail
	VMOVDQU (SI)(AX*1), Y0
	STOPS  // R9: '"', '\\' and control bytes
	VPMOVMSKB Y0, R10 // bytes >= 0x80
	MOVL R10, R11
	ORL  DX, R11
	JNZ  utf8
	TESTL R9, R9
	JNZ  found      // ASCII here and before: nothing to validate
	ADDQ $32, AX
	JMP  loop

utf8:
	PREVIOUS
	UTF8ERRORS // R11: the bytes in error
	VMOVDQU  Y0, Y15
	MOVL     R10, DX
	TESTL    R9, R9
	JNZ      stop
	TESTL    R11, R11
	JNZ      bad
	ADDQ     $32, AX
	JMP      loop

stop:
	// Errors count up to and including the stopping byte (ASCII: an error there is a
	// sequence cut short by it).
	BSFL  R9, CX
	MOVQ  $2, R12
	SHLQ  CX, R12
	SUBQ  $1, R12
	ANDQ  R12, R11
	JNZ   bad
	ADDQ  CX, AX
	MOVQ  AX, off+16(FP)
	MOVQ  $0, state+24(FP)
	VZEROUPPER
	RET

found:
	BSFL  R9, CX
	ADDQ  CX, AX
	MOVQ  AX, off+16(FP)
	MOVQ  $0, state+24(FP)
	VZEROUPPER
	RET

bad:
	MOVQ  AX, off+16(FP)
	MOVQ  $2, state+24(FP)
	VZEROUPPER
	RET

tail:
	// Under 32 bytes left (R8): the last 32 bytes of b, the ones already seen masked off,
	// each byte checked against the three before it, loaded from b itself.
	TESTQ R8, R8
	JZ    end
	CMPQ  BX, $35
	JLT   end
	LEAQ  -32(SI)(BX*1), R13
	VMOVDQU (R13), Y0
	VMOVDQU -1(R13), Y2
	VMOVDQU -2(R13), Y3
	VMOVDQU -3(R13), Y4
	VPCMPEQB Y0, Y10, Y1
	VPCMPEQB Y0, Y11, Y5
	VPMINUB  Y0, Y12, Y6
	VPCMPEQB Y0, Y6, Y6
	VPOR     Y1, Y5, Y1
	VPOR     Y1, Y6, Y1
	VPMOVMSKB Y1, R9
	UTF8ERRORS // R11: the bytes in error
	MOVQ     $32, CX
	SUBQ     R8, CX
	MOVQ     $-1, R12
	SHLQ     CX, R12 // the bytes not seen yet
	ANDQ     R12, R9
	ANDQ     R12, R11
	LEAQ     -32(BX), AX
	TESTL    R9, R9
	JNZ      stop
	TESTL    R11, R11
	JNZ      bad
	MOVQ     BX, AX

end:
	MOVQ  AX, off+16(FP)
	MOVQ  $1, state+24(FP)
	VZEROUPPER
	RET

// esc maps the character after a backslash to the byte its escape stands for; zero for 'u'
// and for characters that are no escape (the caller decides).
DATA esc<>+0x22(SB)/1, $0x22 // \"
DATA esc<>+0x2f(SB)/1, $0x2f // \/
DATA esc<>+0x5c(SB)/1, $0x5c // \\
DATA esc<>+0x62(SB)/1, $0x08 // \b
DATA esc<>+0x66(SB)/1, $0x0c // \f
DATA esc<>+0x6e(SB)/1, $0x0a // \n
DATA esc<>+0x72(SB)/1, $0x0d // \r
DATA esc<>+0x74(SB)/1, $0x09 // \t
GLOBL esc<>(SB), RODATA|NOPTR, $256

// func strDecodeAVX2(src *byte, n int, dst *byte) (p int, d int, state int)
//
// Decodes string bytes from src (n readable bytes there) into dst (room for n bytes): each
// block of 32 bytes is copied whole to dst, and examined as in strBlocksAVX2 for the first
// '"', '\\' or control byte, with UTF-8 validated up to and including it. A one-character
// escape is decoded in place and the scan restarts after it (the bytes before the restart are
// ASCII, which is what a zero previous block stands for). It returns the offsets p in src and
// d in dst where it stopped, and why: decDone at the closing quote, decTail when fewer than
// 33 bytes are left (the bytes before p are whole sequences unless the end of the last block
// cut one), decEscape at a backslash that is not a one-character escape, decBad at a control
// byte or invalid UTF-8.
//
// Registers: SI src, BX n, DI dst, AX p, R14 d, DX the non-ASCII mask of the block before;
// Y0 the block, Y15 the block before, Y8-Y14 constants.
TEXT ·strDecodeAVX2(SB), NOSPLIT, $0-48
	MOVQ src+0(FP), SI
	MOVQ n+8(FP), BX
	MOVQ dst+16(FP), DI
	XORQ AX, AX
	XORQ R14, R14
	XORQ DX, DX
	VPXOR Y15, Y15, Y15
	LOADCONSTS

dloop:
	MOVQ BX, R8
	SUBQ AX, R8
	CMPQ R8, $33
	JLT  dtail
	VMOVDQU (SI)(AX*1), Y0
	VMOVDQU Y0, (DI)(R14*1)
	STOPS  // R9: '"', '\\' and control bytes
	VPMOVMSKB Y0, R10 // bytes >= 0x80
	MOVL R10, R11
	ORL  DX, R11
	JNZ  dutf8
	TESTL R9, R9
	JNZ  dstop
	ADDQ $32, AX
	ADDQ $32, R14
	JMP  dloop

dutf8:
	PREVIOUS
	UTF8ERRORS // R11: the bytes in error
	VMOVDQU  Y0, Y15
	MOVL     R10, DX
	TESTL    R9, R9
	JNZ      dstopu
	TESTL    R11, R11
	JNZ      dbad
	ADDQ     $32, AX
	ADDQ     $32, R14
	JMP      dloop

dstopu:
	// Errors up to and including the stopping byte count.
	BSFL  R9, CX
	MOVQ  $2, R12
	SHLQ  CX, R12
	SUBQ  $1, R12
	ANDQ  R12, R11
	JNZ   dbad
	JMP   dat

dstop:
	BSFL  R9, CX

dat:
	ADDQ    CX, AX
	ADDQ    CX, R14
	MOVBLZX (SI)(AX*1), R12
	CMPL    R12, $0x22
	JEQ     ddone
	CMPL    R12, $0x5c
	JNE     dbad // a control byte
	MOVBLZX 1(SI)(AX*1), R12 // readable: the block had 33 bytes
	LEAQ    esc<>(SB), R13
	MOVBLZX (R13)(R12*1), R13
	TESTL   R13, R13
	JZ      descape
	MOVB    R13, (DI)(R14*1)
	ADDQ    $2, AX
	ADDQ    $1, R14
	XORL    DX, DX
	VPXOR   Y15, Y15, Y15
	JMP     dloop

ddone:
	MOVQ  $0, R12
	JMP   dret

dtail:
	MOVQ  $1, R12
	JMP   dret

descape:
	MOVQ  $2, R12
	JMP   dret

dbad:
	MOVQ  $3, R12

dret:
	MOVQ  AX, p+24(FP)
	MOVQ  R14, d+32(FP)
	MOVQ  R12, state+40(FP)
	VZEROUPPER
	RET
