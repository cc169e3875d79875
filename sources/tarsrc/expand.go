package tarsrc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxExpansion bounds how many paths one pattern may expand to.
const maxExpansion = 1 << 20

// Expand turns shard patterns into paths, in order: each pattern is brace-expanded
// (data-{000..127}.tar, {a,b}, {1..9..2}, {a..e}, nested braces), then each result holding
// a glob metacharacter (* ? [) is matched with filepath.Glob (sorted); other results must
// name existing files. A glob that matches nothing, a missing file, a directory, or a path
// listed twice is an error.
func Expand(patterns []string) ([]string, error) {
	var out []string
	seen := make(map[string]string)
	for _, p := range patterns {
		expanded, err := ExpandBraces(p)
		if err != nil {
			return nil, err
		}
		for _, e := range expanded {
			var paths []string
			if strings.ContainsAny(e, "*?[") {
				m, err := filepath.Glob(e)
				if err != nil {
					return nil, fmt.Errorf("%w: %q: %v", ErrPattern, e, err)
				}
				if len(m) == 0 {
					return nil, fmt.Errorf("%w: %q matches no file", ErrPattern, e)
				}
				paths = m
			} else {
				paths = []string{e}
			}
			for _, path := range paths {
				st, err := os.Stat(path)
				if err != nil {
					return nil, fmt.Errorf("tarsrc: shard %w", err)
				}
				if st.IsDir() {
					return nil, fmt.Errorf("%w: %s is a directory", ErrPattern, path)
				}
				clean := filepath.Clean(path)
				if prev, dup := seen[clean]; dup {
					return nil, fmt.Errorf("%w: shard %s listed twice (by %q and %q)", ErrPattern, path, prev, p)
				}
				seen[clean] = p
				out = append(out, path)
			}
		}
	}
	return out, nil
}

// ExpandBraces expands shell-style braces in p, left to right like bash: {a,b,c}
// alternatives, {000..127} numeric ranges (zero-padded to the wider endpoint when either has
// a leading zero), {0..10..2} with a step, {a..e} letter ranges, nested. A brace with no comma
// and no valid range, or an unmatched brace, stays literal.
func ExpandBraces(p string) ([]string, error) {
	out, err := expand(p, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrPattern, p, err)
	}
	return out, nil
}

func expand(p string, from int) ([]string, error) {
	for i := from; i < len(p); i++ {
		if p[i] != '{' {
			continue
		}
		end, commas := matchBrace(p, i)
		if end < 0 {
			return []string{p}, nil // unmatched: the rest is literal
		}
		body := p[i+1 : end]
		var alts []string
		if len(commas) > 0 {
			last := i + 1
			for _, c := range commas {
				alts = append(alts, p[last:c])
				last = c + 1
			}
			alts = append(alts, p[last:end])
		} else {
			var err error
			if alts, err = rangeAlts(body); err != nil {
				return nil, err
			}
			if alts == nil { // literal braces: keep them, expand what follows
				continue
			}
		}
		rest, err := expand(p[end+1:], 0)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, a := range alts {
			// Expand inside the alternative first, then the rest of the pattern.
			inner, err := expand(a, 0)
			if err != nil {
				return nil, err
			}
			for _, in := range inner {
				for _, r := range rest {
					out = append(out, p[:i]+in+r)
					if len(out) > maxExpansion {
						return nil, fmt.Errorf("more than %d paths", maxExpansion)
					}
				}
			}
		}
		return out, nil
	}
	return []string{p}, nil
}

// matchBrace returns the index of the '}' closing the '{' at i and the positions of its
// top-level commas, or -1.
func matchBrace(p string, i int) (int, []int) {
	depth := 0
	var commas []int
	for j := i; j < len(p); j++ {
		switch p[j] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j, commas
			}
		case ',':
			if depth == 1 {
				commas = append(commas, j)
			}
		}
	}
	return -1, nil
}

// rangeAlts expands "a..b" or "a..b..step"; it returns nil, nil when body is not a range.
func rangeAlts(body string) ([]string, error) {
	parts := strings.Split(body, "..")
	if len(parts) != 2 && len(parts) != 3 {
		return nil, nil
	}
	step := int64(1)
	if len(parts) == 3 {
		s, err := strconv.ParseInt(parts[2], 10, 64)
		if err != nil {
			return nil, nil
		}
		if s < 0 {
			s = -s
		}
		if s != 0 {
			step = s
		}
	}
	a, errA := strconv.ParseInt(parts[0], 10, 64)
	b, errB := strconv.ParseInt(parts[1], 10, 64)
	if errA == nil && errB == nil {
		width := 0
		if padded(parts[0]) || padded(parts[1]) {
			width = max(len(parts[0]), len(parts[1]))
		}
		n := (max(a, b)-min(a, b))/step + 1
		if n > maxExpansion || n < 0 {
			return nil, fmt.Errorf("range {%s} has more than %d values", body, maxExpansion)
		}
		out := make([]string, 0, n)
		for k := int64(0); k < n; k++ {
			v := a + k*step
			if b < a {
				v = a - k*step
			}
			s := strconv.FormatInt(v, 10)
			if width > 0 {
				neg := v < 0
				if neg {
					s = s[1:]
				}
				w := width
				if neg {
					w--
				}
				if len(s) < w {
					s = strings.Repeat("0", w-len(s)) + s
				}
				if neg {
					s = "-" + s
				}
			}
			out = append(out, s)
		}
		return out, nil
	}
	if len(parts[0]) == 1 && len(parts[1]) == 1 && isLetter(parts[0][0]) && isLetter(parts[1][0]) {
		x, y := int64(parts[0][0]), int64(parts[1][0])
		var out []string
		for k := int64(0); k <= (max(x, y)-min(x, y))/step; k++ {
			v := x + k*step
			if y < x {
				v = x - k*step
			}
			out = append(out, string(rune(v)))
		}
		return out, nil
	}
	return nil, nil
}

func padded(s string) bool {
	s = strings.TrimPrefix(s, "-")
	return len(s) > 1 && s[0] == '0'
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
