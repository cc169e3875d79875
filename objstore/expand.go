package objstore

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"
)

// maxExpansion bounds how many names one pattern may expand to.
const maxExpansion = 1 << 20

// statBatch is how many literal names of one bucket are checked with one HEAD each; more
// are checked against one listing of their common prefix.
const statBatch = 32

// Expand turns input patterns (URLs or local paths) into objects, in order. Each pattern
// is brace-expanded (data-{000..127}.tar, {a,b}, {1..9..2}, {a..e}, nested), then each
// name holding a glob metacharacter (* ? [, with \ escaping) is matched against the
// directory (filepath.Glob) or the bucket listing of its literal prefix (path.Match: * does
// not cross "/"), sorted; a name that exists as written is taken literally. Other names
// must exist. A glob that matches nothing, a missing object, a directory, or an object
// named twice is an error naming the pattern or URL. Results are spelled like the patterns.
func (c *Client) Expand(ctx context.Context, patterns []string) ([]Attrs, error) {
	type entry struct {
		l       Location
		a       Attrs
		pattern string
		check   bool // literal: existence still to be checked
	}
	var out []entry
	for _, p := range patterns {
		names, err := ExpandBraces(p)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			l, err := Parse(name)
			if err != nil {
				err.(*Error).Op = "expand"
				return nil, err
			}
			if !hasMeta(l.Key) {
				out = append(out, entry{l: l, pattern: p, check: true})
				continue
			}
			matches, err := c.glob(ctx, name, l)
			if err != nil {
				return nil, err
			}
			for _, a := range matches {
				ml, _ := Parse(a.URL)
				out = append(out, entry{l: ml, a: a, pattern: p})
			}
		}
		if len(out) > maxExpansion {
			return nil, errorf("expand", p, ErrPattern, "more than %d names", maxExpansion)
		}
	}
	// Check the literal names, a bucket at a time.
	var batch []int
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		ls := make([]Location, len(batch))
		for i, k := range batch {
			ls[i] = out[k].l
		}
		as, err := c.statAll(ctx, ls)
		if err != nil {
			return err
		}
		for i, k := range batch {
			out[k].a = as[i]
		}
		batch = batch[:0]
		return nil
	}
	for i := range out {
		if !out[i].check {
			continue
		}
		if len(batch) > 0 && out[batch[0]].l.bucketID() != out[i].l.bucketID() {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		batch = append(batch, i)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	res := make([]Attrs, len(out))
	seen := make(map[string]string, len(out))
	for i, e := range out {
		id := e.l.bucketID() + "/" + e.l.Key
		if e.l.IsLocal() {
			id = filepath.Clean(e.l.Key)
		}
		if prev, dup := seen[id]; dup {
			return nil, errorf("expand", e.a.URL, ErrPattern, "named twice (by %q and %q)", prev, e.pattern)
		}
		seen[id] = e.pattern
		res[i] = e.a
	}
	return res, nil
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[`) }

// glob matches one brace-free pattern.
func (c *Client) glob(ctx context.Context, name string, l Location) ([]Attrs, error) {
	if l.IsLocal() {
		if _, err := os.Lstat(l.Key); err == nil {
			a, err := c.statLocal(name, l)
			return []Attrs{a}, err
		}
		m, err := filepath.Glob(l.Key)
		if err != nil {
			return nil, errorf("expand", name, ErrPattern, "%v", err)
		}
		if len(m) == 0 {
			return nil, errorf("expand", name, ErrPattern, "matches no file")
		}
		out := make([]Attrs, len(m))
		for i, p := range m {
			if out[i], err = c.statLocal(l.WithKey(p).String(), l.WithKey(p)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if _, err := path.Match(l.Key, ""); err != nil {
		return nil, errorf("expand", name, ErrPattern, "%v", err)
	}
	prefix := literalPrefix(l.Key)
	var exact *Attrs
	var out []Attrs
	err := c.list(ctx, name, l.WithKey(prefix), func(a Attrs) error {
		key := strings.TrimPrefix(a.URL, l.WithKey("").String())
		if key == l.Key {
			exact = &a
		}
		if ok, _ := path.Match(l.Key, key); ok {
			out = append(out, a)
			if len(out) > maxExpansion {
				return errorf("expand", name, ErrPattern, "more than %d names", maxExpansion)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if exact != nil {
		return []Attrs{*exact}, nil
	}
	if len(out) == 0 {
		return nil, errorf("expand", name, ErrPattern, "matches no object")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out, nil
}

// literalPrefix is the part of a glob before its first metacharacter or escape.
func literalPrefix(p string) string {
	if i := strings.IndexAny(p, `*?[\`); i >= 0 {
		return p[:i]
	}
	return p
}

func (c *Client) statLocal(raw string, l Location) (Attrs, error) {
	fi, err := os.Stat(l.Key)
	if err != nil {
		return Attrs{}, c.wrap(context.Background(), "expand", raw, err)
	}
	if fi.IsDir() {
		return Attrs{}, newErr("expand", raw, ErrBadURL, "is a directory")
	}
	return Attrs{URL: raw, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// statAll returns the attributes of objects of one bucket (or local paths), in order: a
// HEAD each for a few (concurrently), one listing of their common prefix for many.
func (c *Client) statAll(ctx context.Context, ls []Location) ([]Attrs, error) {
	out := make([]Attrs, len(ls))
	if ls[0].IsLocal() {
		for i, l := range ls {
			var err error
			if out[i], err = c.statLocal(l.String(), l); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if len(ls) <= statBatch {
		var g errgroup.Group
		g.SetLimit(8)
		errs := make([]error, len(ls))
		for i, l := range ls {
			g.Go(func() error {
				out[i], errs[i] = c.Stat(ctx, l.String())
				return nil
			})
		}
		g.Wait()
		for _, err := range errs { // the first error in pattern order
			if err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	want := make(map[string]int, len(ls))
	prefix := ls[0].Key
	for i, l := range ls {
		want[l.Key] = i
		prefix = commonPrefix(prefix, l.Key)
	}
	found := 0
	root := ls[0].WithKey("").String()
	err := c.list(ctx, ls[0].WithKey(prefix).String(), ls[0].WithKey(prefix), func(a Attrs) error {
		if i, ok := want[strings.TrimPrefix(a.URL, root)]; ok {
			a.URL = ls[i].String()
			out[i] = a
			found++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if found < len(ls) {
		for i, l := range ls {
			if out[i].URL == "" {
				// Stat the first missing one: its error says whether the bucket or the
				// object is missing, or whether it appeared since the listing.
				a, err := c.Stat(ctx, l.String())
				if err != nil {
					return nil, err
				}
				out[i] = a
			}
		}
	}
	return out, nil
}

func commonPrefix(a, b string) string {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return a[:i]
		}
	}
	return a[:n]
}

// ExpandBraces expands shell-style braces in p, left to right like bash: {a,b,c}
// alternatives, {000..127} numeric ranges (zero-padded to the wider endpoint when either has
// a leading zero), {0..10..2} with a step, {a..e} letter ranges, nested. A brace with no comma
// and no valid range, or an unmatched brace, stays literal.
func ExpandBraces(p string) ([]string, error) {
	out, err := expand(p, 0)
	if err != nil {
		return nil, errorf("expand", p, ErrPattern, "%v", err)
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
