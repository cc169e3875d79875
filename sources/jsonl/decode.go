package jsonl

import "unicode/utf8"

// The reasons strDecodeBlocks stops.
const (
	decDone   = iota // at the closing quote
	decTail          // fewer than 33 bytes left to read
	decEscape        // at a backslash that is not a one-character escape (\u, or no escape)
	decBad           // at a control byte or invalid UTF-8
)

// decodeSlack is how far past the end of its line a string may be read ahead when the line's
// buffer goes on: the blocks of 32 bytes that hold a string's end need not stop short of it.
const decodeSlack = 64

// strDecode scans the string value at s.i (its opening quote) and decodes its text into the
// arena in the same pass: one pass over the bytes copies them, decodes their escapes and
// validates their UTF-8, instead of str's scan and the decoding copy after it. It returns the
// committed text and true with s.i past the closing quote. It returns false, with s.i and the
// arena as they were, for anything it leaves to str and unescape (which report the error, or
// decode what is rare): a control byte, invalid UTF-8, a bad escape, a surrogate not in a
// pair, a string not closed within the line.
//
// The blocks read past the line's end into what its slice's capacity holds (the newline
// after it, the rest of its read buffer or mapping), up to decodeSlack bytes: what lies past
// the line decides nothing, since the newline after it (or the end of the line, checked here)
// stops every string.
func (s *scanner) strDecode() ([]byte, bool) {
	b := s.b
	start := s.i + 1
	src := b[start:cap(b)]
	src = src[:min(len(src), len(b)-start+decodeSlack)]
	dst := s.arena.space(len(src))[:len(src)]
	i, d := 0, 0 // offsets in src and dst
	for {
		p, n, state := strDecodeBlocks(src[i:], dst[d:])
		i, d = i+p, d+n
		switch state {
		case decDone:
			if start+i >= len(b) {
				return nil, false // the quote lies past the line
			}
			s.i = start + i + 1
			return s.arena.commit(dst[:d]), true
		case decEscape:
			r, n, ok := uEscape(b, start+i)
			if !ok {
				return nil, false
			}
			d += utf8.EncodeRune(dst[d:], r)
			i += n
			continue
		case decBad:
			return nil, false
		}
		// Under 33 bytes left: the rest byte by byte, from the start of a sequence the last
		// block's end may have cut.
		j := start + i
		if j > len(b) {
			return nil, false
		}
		if k := backOff(b, start, j); k < j {
			d -= j - k
			j = k
		}
		for {
			if j >= len(b) {
				return nil, false
			}
			c := b[j]
			switch {
			case c == '"':
				s.i = j + 1
				return s.arena.commit(dst[:d]), true
			case c == '\\':
				if j+1 < len(b) {
					if e := escByte(b[j+1]); e != 0 {
						dst[d] = e
						d, j = d+1, j+2
						continue
					}
				}
				r, n, ok := uEscape(b, j)
				if !ok {
					return nil, false
				}
				d += utf8.EncodeRune(dst[d:], r)
				j += n
			case c < 0x20:
				return nil, false
			case c < utf8.RuneSelf:
				dst[d] = c
				d, j = d+1, j+1
			default:
				r, n := utf8.DecodeRune(b[j:])
				if r == utf8.RuneError && n == 1 {
					return nil, false
				}
				d += copy(dst[d:], b[j:j+n])
				j += n
			}
		}
	}
}

// escByte is the byte the one-character escape \c stands for, or 0 when \c is not one.
func escByte(c byte) byte {
	switch c {
	case '"', '\\', '/':
		return c
	case 'b', 'f', 'n', 'r', 't':
		return escaped(c)
	}
	return 0
}

// uEscape decodes the \u escape at b[k] (a backslash), with the low half after it when it is
// the high half of a surrogate pair. It returns the rune and the bytes the escape took, or
// false when b[k:] is no valid \u escape or holds half a surrogate pair alone.
func uEscape(b []byte, k int) (rune, int, bool) {
	if k+6 > len(b) || b[k+1] != 'u' || !isHex4(b[k+2:k+6]) {
		return 0, 0, false
	}
	r := hex4(b[k+2:])
	if r < 0xD800 || r >= 0xE000 {
		return r, 6, true
	}
	if r >= 0xDC00 || k+12 > len(b) || b[k+6] != '\\' || b[k+7] != 'u' || !isHex4(b[k+8:k+12]) {
		return 0, 0, false
	}
	r2 := hex4(b[k+8:])
	if r2 < 0xDC00 || r2 >= 0xE000 {
		return 0, 0, false
	}
	return (r-0xD800)<<10 + (r2 - 0xDC00) + 0x10000, 12, true
}
