package taridx

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DecodeReplace decodes b as UTF-8 the way Python's bytes.decode('utf-8', errors='replace')
// does: each maximal subpart of an ill-formed sequence (a valid prefix of a well-formed
// sequence, or else a single byte) becomes one U+FFFD. Go's utf8.DecodeRune and
// strings.ToValidUTF8 replace differently, which would change the stems' hashes.
func DecodeReplace(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			sb.WriteByte(c)
			i++
			continue
		}
		need, lo, hi := 0, byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c == 0xE0:
			need, lo = 2, 0xA0
		case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
			need = 2
		case c == 0xED:
			need, hi = 2, 0x9F
		case c == 0xF0:
			need, lo = 3, 0x90
		case c >= 0xF1 && c <= 0xF3:
			need = 3
		case c == 0xF4:
			need, hi = 3, 0x8F
		default: // 0x80..0xC1, 0xF5..0xFF: never valid
			sb.WriteRune(utf8.RuneError)
			i++
			continue
		}
		j, ok := i+1, true
		for k := 0; k < need; k++ {
			if j >= len(b) {
				ok = false
				break
			}
			d := b[j]
			if k == 0 && (d < lo || d > hi) || k > 0 && (d < 0x80 || d > 0xBF) {
				ok = false
				break
			}
			j++
		}
		if ok {
			sb.Write(b[i:j])
		} else {
			sb.WriteRune(utf8.RuneError)
		}
		i = j
	}
	return sb.String()
}

// nameField returns the decoded name of a tar header block: bytes 0..100 cut at the first NUL.
func nameField(hdr []byte) string {
	f := hdr[:100]
	if i := bytes.IndexByte(f, 0); i >= 0 {
		f = f[:i]
	}
	return DecodeReplace(f)
}

// SplitName splits a decoded member name into the reference's stem and extension: the base
// name (text after the last '/') up to its first '.', and the rest after that dot, lower-cased
// like Python's str.lower. A name without a dot has the extension "".
func SplitName(name string) (stem, ext string) {
	base := name
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	i := strings.IndexByte(base, '.')
	if i < 0 {
		return base, ""
	}
	return base[:i], PyLower(base[i+1:])
}

// PyLower lower-cases s like Python 3's str.lower: Unicode full lower-case mapping (U+0130
// becomes "i\u0307") and the Final_Sigma rule for U+03A3. Go's case tables may follow a
// different Unicode version than the reference's Python for recently added letters.
func PyLower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var sb strings.Builder
	sb.Grow(len(s))
	for i, r := range rs {
		switch r {
		case 0x130:
			sb.WriteString("i\u0307")
		case 0x3A3:
			if finalSigma(rs, i) {
				sb.WriteRune(0x3C2)
			} else {
				sb.WriteRune(0x3C3)
			}
		default:
			sb.WriteRune(unicode.ToLower(r))
		}
	}
	return sb.String()
}

// finalSigma implements Unicode's Final_Sigma condition at rs[i]: a cased letter before it
// and none after it, skipping case-ignorable characters on both sides.
func finalSigma(rs []rune, i int) bool {
	j := i - 1
	for j >= 0 && caseIgnorable(rs[j]) {
		j--
	}
	if j < 0 || !cased(rs[j]) {
		return false
	}
	k := i + 1
	for k < len(rs) && caseIgnorable(rs[k]) {
		k++
	}
	return k == len(rs) || !cased(rs[k])
}

func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '^', '`', 0xAD, 0xB7, 0x2018, 0x2019, 0x2024, 0x2027, 0xFE13, 0xFE52,
		0xFE55, 0xFF07, 0xFF0E, 0xFF1A:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// parseSize parses a tar header's size field (bytes 124..136) the way the reference does:
// cut at the first NUL, then Python int(x or b'0', 8): ASCII whitespace around, an optional
// sign, an optional 0o prefix, octal digits with single underscores between them. It returns
// ok=false for anything else (base-256 sizes, garbage) and for negative values.
func parseSize(field []byte) (uint64, bool) {
	if i := bytes.IndexByte(field, 0); i >= 0 {
		field = field[:i]
	}
	if len(field) == 0 {
		return 0, true
	}
	isSpace := func(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }
	s := field
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	underscoreOK := false // an underscore may follow a digit, or the 0o prefix
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O') {
		s = s[2:]
		underscoreOK = true
	}
	if len(s) == 0 {
		return 0, false
	}
	var v uint64
	digits := 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '7':
			if v > (1<<64-1)>>3 {
				return 0, false
			}
			v = v<<3 | uint64(c-'0')
			digits++
			underscoreOK = true
		case c == '_' && underscoreOK:
			underscoreOK = false
		default:
			return 0, false
		}
	}
	if digits == 0 || !underscoreOK && s[len(s)-1] == '_' {
		return 0, false
	}
	if neg && v != 0 {
		return 0, false
	}
	return v, true
}
