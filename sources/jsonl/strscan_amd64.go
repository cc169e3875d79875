//go:build amd64 && !purego

package jsonl

import "golang.org/x/sys/cpu"

// hasStrBlocks reports whether strBlocks runs vectorised on this CPU.
var hasStrBlocks = cpu.X86.HasAVX2

// strBlocksAVX2 is strBlocks for n >= 32 bytes at p, on a CPU with AVX2.
//
//go:noescape
func strBlocksAVX2(p *byte, n int) (off int, state int)

// strBlocks examines b, string bytes, in blocks of 32 bytes for the first '"', '\\' or
// control byte, validating UTF-8 on the way (see strBlocksAVX2 in strscan_amd64.s). It
// returns the offset and stateStop when it found one, with every byte before it valid
// UTF-8 (no sequence cut by it); the end of the last whole block (of b, when b holds at
// least 35 bytes: the last bytes are then examined in the block ending with b) and
// stateTail when there is none, with every sequence before it valid except possibly one cut
// by the end (see backOff); stateBad when it met invalid UTF-8 first. Fewer than 32 bytes
// give 0 and stateTail.
func strBlocks(b []byte) (off, state int) {
	if len(b) < 32 {
		return 0, stateTail
	}
	return strBlocksAVX2(&b[0], len(b))
}

// strDecodeAVX2 is strDecodeBlocks for n >= 33 bytes at src, on a CPU with AVX2.
//
//go:noescape
func strDecodeAVX2(src *byte, n int, dst *byte) (p, d, state int)

// strDecodeBlocks decodes the string bytes at the start of src into dst (len(dst) >=
// len(src)) in blocks of 32 bytes, decoding one-character escapes and validating UTF-8 on the
// way, and returns where it stopped in src (p) and dst (d), and why: decDone at the closing
// quote, decTail when fewer than 33 bytes of src are left, decEscape at a backslash that is
// not a one-character escape, decBad at a control byte or invalid UTF-8 (see strDecodeAVX2
// in strscan_amd64.s). The bytes of src past its string are read, but they decide nothing
// unless the string has no closing quote within them.
func strDecodeBlocks(src, dst []byte) (p, d, state int) {
	if len(src) < 33 {
		return 0, 0, decTail
	}
	_ = dst[len(src)-1]
	return strDecodeAVX2(&src[0], len(src), &dst[0])
}
