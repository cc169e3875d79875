// Package quote shortens untrusted values (keys, paths, member names, JSON excerpts) before
// they are quoted in error messages. A value longer than MaxBytes keeps its first MaxBytes
// bytes, cut at a UTF-8 boundary, and gains a note of its full length, so that one hostile
// 50 MB key cannot make a 100 MB error message.
package quote

import (
	"strconv"
	"unicode/utf8"
)

// MaxBytes is how many bytes of a value an error message quotes.
const MaxBytes = 256

// Q returns s quoted as by %q, shortened to its first MaxBytes bytes plus a note of its full
// length when longer: "abc…" (52428800 bytes). Short values are exactly strconv.Quote(s).
// The result is at most about 4 × MaxBytes + 32 bytes (every byte escaped as \xNN).
func Q(s string) string {
	if len(s) <= MaxBytes {
		return strconv.Quote(s)
	}
	return strconv.Quote(prefix(s)) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// S returns s unquoted (for paths and origins printed as they are), shortened like Q: its
// first MaxBytes bytes, then "…(N bytes)".
func S(s string) string {
	if len(s) <= MaxBytes {
		return s
	}
	return prefix(s) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// B is Q for a byte slice.
func B(b []byte) string {
	if len(b) <= MaxBytes {
		return strconv.Quote(string(b))
	}
	return strconv.Quote(prefix(string(b[:MaxBytes+1]))) + "…(" + strconv.Itoa(len(b)) + " bytes)"
}

// prefix returns the first MaxBytes bytes of s (len(s) > MaxBytes), backing off to a rune
// boundary when the cut would split a valid UTF-8 sequence.
func prefix(s string) string {
	n := MaxBytes
	for i := 0; i < utf8.UTFMax && n > 0; i++ {
		if utf8.RuneStart(s[n]) {
			break
		}
		n--
	}
	if !utf8.RuneStart(s[n]) { // not UTF-8 there anyway: cut at the byte
		n = MaxBytes
	}
	return s[:n]
}
