package jsonl

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkStrBlocks checks strBlocks on b against its contract, with utf8.Valid as the
// reference: a stop is at the first '"', '\\' or control byte with valid UTF-8 before it;
// a tail is at the end of what strBlocks looks at (the whole blocks; all of b from 35
// bytes), none of those bytes before it and the UTF-8 before it valid but for a sequence
// its end cuts; bad means invalid UTF-8 before the first such byte (or that end).
func checkStrBlocks(t *testing.T, b []byte) {
	t.Helper()
	if !hasStrBlocks {
		t.Skip("no vectorised string scan on this CPU")
	}
	blocks := len(b) &^ 31 // how far strBlocks looks: whole blocks, and the rest from 35 bytes
	if len(b) >= 35 {
		blocks = len(b)
	}
	first := blocks // the first special byte in the whole blocks
	for i, c := range b[:blocks] {
		if c == '"' || c == '\\' || c < 0x20 {
			first = i
			break
		}
	}
	off, state := strBlocks(b)
	switch state {
	case stateStop:
		if off != first || first == blocks || !utf8.Valid(b[:off]) {
			t.Fatalf("%q: stop at %d, want the first special byte (%d of %d) after valid UTF-8", b, off, first, blocks)
		}
	case stateTail:
		if off != blocks || first != blocks || !utf8.Valid(b[:backOff(b, 0, off)]) {
			t.Fatalf("%q: tail at %d, want %d without special bytes (first %d) and valid UTF-8", b, off, blocks, first)
		}
	case stateBad:
		limit := first
		if first < blocks {
			limit++ // a sequence cut by the special byte
		}
		if utf8.Valid(b[:limit]) && (first == blocks || utf8.Valid(b[:first])) {
			t.Fatalf("%q: bad UTF-8 reported, but %q is valid", b, b[:limit])
		}
	default:
		t.Fatalf("%q: state %d", b, state)
	}
}

// strPieces are the byte patterns the random strings are made of: every UTF-8 length, each
// kind of invalid sequence, and the bytes that stop a string.
var strPieces = []string{
	"a", "xyz ", "ж", "é", "漢", "😀", "\u2028", "\U0010ffff", "\ud7ff", "\ue000",
	"\xc0\xaf", "\xc1\xbf", "\xc2", "\xc2\x80", "\xdf\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xe0\xa0",
	"\xed\xa0\x80", "\xed\x9f\xbf", "\xf0\x8f\xbf\xbf", "\xf0\x90", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",
	"\xff", "\x80", "\xbf\xbf", "\"", "\\", "\\n", "\x00", "\x1f", "\x7f", " ",
}

// randStr returns a string of about n bytes made of strPieces, mostly valid text.
func randStr(r *rand.Rand, n int) []byte {
	var b []byte
	for len(b) < n {
		switch k := r.IntN(20); {
		case k < 8:
			b = append(b, "Аппетит приходит"[r.IntN(4)*2:]...)
		case k < 14:
			b = append(b, "plain ascii words "[r.IntN(10):]...)
		default:
			b = append(b, strPieces[r.IntN(len(strPieces))]...)
		}
	}
	return b
}

// TestStrBlocks checks the vectorised string scan on random strings built around every
// kind of sequence, the interesting bytes at every offset of a block and across blocks.
func TestStrBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		checkStrBlocks(t, randStr(r, r.IntN(200)))
	}
	// Each piece at every offset of two blocks, amid ASCII, Cyrillic and four-byte text.
	for _, p := range strPieces {
		for _, fill := range []string{"x", "ж", "😀"} {
			for pad := range 70 {
				pre := strings.Repeat(fill, pad)[:pad]
				pre = strings.ToValidUTF8(pre, "x")
				for _, post := range []string{"", `"`, strings.Repeat("y", 40), strings.Repeat("ы", 40) + `"`} {
					checkStrBlocks(t, []byte(pre+p+post))
				}
			}
		}
	}
}

// TestStrPaths compares the string scanner with the vectorised scan, without it, and its
// careful path, on random strings (each path must accept the same strings, ending at the
// same byte, and report the same error), and their text with encoding/json's.
func TestStrPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		b := append([]byte{'"'}, randStr(r, r.IntN(300))...)
		if r.IntN(2) == 0 {
			b = append(b, '"')
		}
		checkStr(t, b)
		vec, scalar := &scanner{b: b}, &scanner{b: b, scalar: true}
		escV, errV := vec.str()
		escS, errS := scalar.str()
		if (errV == nil) != (errS == nil) || errV != nil && errV.Error() != errS.Error() || vec.i != scalar.i || escV != escS {
			t.Fatalf("%q: vectorised path (%v, %d, %v), scalar path (%v, %d, %v)", b, errV, vec.i, escV, errS, scalar.i, escS)
		}
	}
}

// FuzzStrBlocks checks the vectorised string scan against its contract on any bytes.
func FuzzStrBlocks(f *testing.F) {
	for _, p := range strPieces {
		f.Add([]byte(strings.Repeat("ж", 15) + p + strings.Repeat("x", 40)))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkStrBlocks(t, b)
		checkStr(t, append([]byte{'"'}, b...))
	})
}
