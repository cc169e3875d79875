// Package suggest finds the known name nearest to a mistyped one, for the "did you mean"
// hints of the command line (commands, flags) and of recipes (keys).
package suggest

import "strings"

// MaxLen bounds the names compared: a longer name (or candidate) is never matched, so the
// cost of a lookup stays small whatever the input holds.
const MaxLen = 64

// Distance is the optimal string alignment distance of a and b: the fewest insertions,
// deletions, substitutions and swaps of two adjacent bytes that turn a into b (so "feilds"
// is 1 from "fields").
func Distance(a, b string) int {
	// Three rows: the one before the previous is needed for swaps.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// limit is the largest distance accepted for a name of n bytes: 1 for up to 5 bytes,
// 2 up to 8, then 3.
func limit(n int) int {
	switch {
	case n <= 5:
		return 1
	case n <= 8:
		return 2
	}
	return 3
}

// Closest returns the candidate nearest to name (compared without regard to case), or ""
// when none is near enough to be what was meant: within a few edits for the name's length,
// or the one candidate that begins with a name of three or more bytes. Of candidates at the
// same distance the first wins, so callers pass them in a fixed order.
func Closest(name string, candidates []string) string {
	if name == "" || len(name) > MaxLen {
		return ""
	}
	lower := strings.ToLower(name)
	best, bestD := "", limit(len(name))+1
	prefixed, nPrefixed := "", 0
	for _, c := range candidates {
		if c == "" || len(c) > MaxLen {
			continue
		}
		lc := strings.ToLower(c)
		if lc == lower {
			return c
		}
		if d := Distance(lower, lc); d < bestD {
			best, bestD = c, d
		}
		if len(lower) >= 3 && strings.HasPrefix(lc, lower) {
			prefixed, nPrefixed = c, nPrefixed+1
		}
	}
	if best == "" && nPrefixed == 1 {
		return prefixed
	}
	return best
}
