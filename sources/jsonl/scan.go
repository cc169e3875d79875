package jsonl

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// maxDepth bounds the nesting of arrays and objects in one line (encoding/json's limit too):
// deeper lines are rejected instead of growing a stack without bound.
const maxDepth = 10000

// node is one step of the wanted key paths: a trie over path segments.
type node struct {
	children map[string]*node
	keys     []string // children's keys and nodes in two slices, searched without hashing
	kids     []*node  // when there are few (see child)
	path     string   // dotted path from the root, for error messages
	cols     []int    // columns whose path ends here
	sub      []int    // every column at or below this node (reset on a duplicate key)
	decode   bool     // a column here is a string: record its escapes while scanning it
}

// maxKids is the most children searched linearly; a node with more uses its map.
const maxKids = 8

// child returns the child of n under key, or nil.
func (n *node) child(key []byte) *node {
	if len(n.children) > maxKids {
		return n.children[string(key)]
	}
	for i, k := range n.keys {
		if k == string(key) {
			return n.kids[i]
		}
	}
	return nil
}

// span is where a column's value lies in the line.
type span struct {
	start, end int
	found      bool
	plain      bool // a string value without escapes: its bytes are its text
	// escs[e0:e1] of the scanner are the positions of the escapes of a string value that
	// str recorded on its one pass (valid when esc is set), so that decoding it needs no
	// second search for them.
	e0, e1 int32
	esc    bool
	// dec is set when strDecode decoded the string value while scanning it: its text is the
	// scanner's texts[column] (kept out of span, whose lines are cleared line after line, so
	// that clearing them moves no pointers).
	dec bool
}

// scanner validates one line of JSON and records the spans of the wanted values in a single
// pass. It is reused line after line by one goroutine.
type scanner struct {
	b       []byte
	i       int
	spans   []span
	stack   []byte // open containers while skipping: '{' or '['
	idx     []byte // scratch for array index keys
	keyBuf  []byte // scratch for unescaped keys
	lastKey string // deepest wanted-path key being read, for error messages
	scalar  bool   // never use strBlocks or strDecode (tests compare the paths)
	rec     bool   // str appends the position of each escape it passes to escs
	slow    bool   // str went through strSlow (which records nothing)
	escs    []int32
	// arena, when set (by extract, for one line), is where the string values of columns are
	// decoded as they are scanned (strDecode); nil leaves them to the caller.
	arena *arena
	texts [][]byte // per column, the text strDecode decoded (see span.dec)

	// The members of the top-level object as the last lines had them: the bytes `"key":` of
	// the m-th member and its node. JSONL lines mostly repeat one shape, so a member whose
	// bytes equal the remembered ones is known without scanning its key or looking it up.
	shape     []shapeKey
	shapeRoot *node // the root the shape was learned under
}

// shapeKey is one remembered top-level member: tok[:n] is `"key":` exactly as a line had it
// (a key without escapes, so its bytes are its text), child the key's node (nil: unwanted).
type shapeKey struct {
	tok    [maxShapeKey]byte
	n      int
	w0, w1 uint64 // tok's first sixteen bytes as words, the bytes past n zero
	m0, m1 uint64 // the masks of the bytes of w0 and w1 that are tok's
	child  *node
}

// match reports whether b starts with k's bytes. Keys up to sixteen bytes are compared as two
// masked words when b has sixteen bytes to read.
func (k *shapeKey) match(b []byte) bool {
	if k.n <= 16 && len(b) >= 16 {
		x0 := binary.LittleEndian.Uint64(b)
		x1 := binary.LittleEndian.Uint64(b[8:])
		return (x0^k.w0)&k.m0|(x1^k.w1)&k.m1 == 0
	}
	return len(b) >= k.n && string(b[:k.n]) == string(k.tok[:k.n])
}

const (
	maxShapeKey     = 32 // the longest `"key":` remembered
	maxShapeMembers = 32 // the most top-level members remembered
)

// syntaxError is a scanner failure; the caller wraps it into a LineError.
type syntaxError struct {
	off  int
	utf8 bool // invalid UTF-8 rather than bad JSON
	key  string
	msg  string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at column %d", e.msg, e.off+1) }

func (s *scanner) fail(msg string) error {
	return &syntaxError{off: s.i, key: s.lastKey, msg: msg}
}

func (s *scanner) unexpected(what string) error {
	if s.i >= len(s.b) {
		return s.fail("unexpected end of line, want " + what)
	}
	c := s.b[s.i]
	if c >= 0x20 && c < 0x7f {
		return s.fail(fmt.Sprintf("invalid character %q, want %s", c, what))
	}
	return s.fail(fmt.Sprintf("invalid byte 0x%02x, want %s", c, what))
}

// scan validates line as one JSON object and fills s.spans for the columns of root.
func (s *scanner) scan(root *node, line []byte, ncols int) error {
	s.b, s.i, s.lastKey = line, 0, ""
	if cap(s.spans) < ncols {
		s.spans = make([]span, ncols)
	}
	if len(s.texts) < ncols {
		s.texts = make([][]byte, ncols)
	}
	s.spans = s.spans[:ncols]
	clear(s.spans)
	s.stack = s.stack[:0]
	s.escs = s.escs[:0]
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		if s.i < len(s.b) {
			return s.fail("line is not a JSON object (starts with " + typeName(s.b[s.i]) + ")")
		}
		return s.unexpected("'{'")
	}
	s.i++
	if s.shapeRoot != root {
		s.shape, s.shapeRoot = s.shape[:0], root
	}
	if err := s.object(root, 1); err != nil {
		return err
	}
	s.lastKey = ""
	s.ws()
	if s.i != len(s.b) {
		return s.unexpected("end of line after the object")
	}
	return nil
}

// ws skips whitespace. Its first test (no whitespace at all, the common case) is inlined.
func (s *scanner) ws() {
	if s.i < len(s.b) && s.b[s.i] > ' ' {
		return
	}
	s.wsSlow()
}

func (s *scanner) wsSlow() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// object parses the members of an object whose '{' was consumed, descending into the
// members n wants and skipping the others.
func (s *scanner) object(n *node, depth int) error {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return nil
	}
	for m := 0; ; m++ {
		if depth == 1 && m < len(s.shape) {
			// The m-th member of the last lines: when this line has the same bytes
			// `"key":` here, it is the same key (it holds no '"', '\\' or control byte,
			// and its UTF-8 was valid), whose node is known.
			if k := &s.shape[m]; k.match(s.b[s.i:]) {
				s.i += k.n
				s.ws()
				if k.child == nil && s.i < len(s.b) && s.b[s.i] == '"' {
					// An unwanted string value followed by ',' without a call to value.
					if _, err := s.str(); err != nil {
						return err
					}
					if s.i < len(s.b) && s.b[s.i] == ',' {
						s.i++
						s.ws()
						continue
					}
					if done, err := s.next('}'); err != nil || done {
						return err
					}
					continue
				}
				if done, err := s.value(k.child, depth, '}'); err != nil || done {
					return err
				}
				continue
			}
		}
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return s.unexpected("a string key")
		}
		ks := s.i + 1
		esc, err := s.str()
		if err != nil {
			return err
		}
		key := s.b[ks : s.i-1]
		if esc {
			s.keyBuf, err = unescape(s.keyBuf[:0], key)
			if err != nil {
				return &syntaxError{off: ks, utf8: true, key: s.lastKey, msg: err.Error()}
			}
			key = s.keyBuf
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return s.unexpected("':' after object key")
		}
		s.i++
		var child *node
		if n != nil {
			child = n.child(key)
		}
		if depth == 1 && !esc {
			s.learn(m, ks-1, child)
		}
		s.ws()
		if done, err := s.value(child, depth, '}'); err != nil || done {
			return err
		}
	}
}

// learn remembers s.b[start:s.i], a top-level member's `"key":` (its key free of escapes),
// as the m-th member of the shape, replacing what was there (no allocation once the shape
// has grown). Whitespace before the ':' is part of the bytes; long keys are not remembered.
func (s *scanner) learn(m, start int, child *node) {
	n := s.i - start
	if n > maxShapeKey || m > len(s.shape) || m >= maxShapeMembers {
		return
	}
	if m == len(s.shape) {
		s.shape = append(s.shape, shapeKey{})
	}
	k := &s.shape[m]
	k.tok = [maxShapeKey]byte{}
	k.n = copy(k.tok[:], s.b[start:s.i])
	k.w0 = binary.LittleEndian.Uint64(k.tok[:])
	k.w1 = binary.LittleEndian.Uint64(k.tok[8:])
	k.m0, k.m1 = ^uint64(0), ^uint64(0)
	if k.n < 16 {
		k.m1 = 1<<(8*max(k.n-8, 0)) - 1
	}
	if k.n < 8 {
		k.m0 = 1<<(8*k.n) - 1
	}
	k.child = child
}

// array parses the elements of an array whose '[' was consumed; n's children are keyed by
// decimal element index.
func (s *scanner) array(n *node, depth int) error {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return nil
	}
	for k := 0; ; k++ {
		s.idx = strconv.AppendInt(s.idx[:0], int64(k), 10)
		if done, err := s.value(n.child(s.idx), depth, ']'); err != nil || done {
			return err
		}
	}
}

// value parses one object or array member's value (extracted when child wants it, else
// skipped) and the ',' or the closing byte after it; done reports the closing byte.
func (s *scanner) value(child *node, depth int, closing byte) (done bool, err error) {
	if child == nil && s.i < len(s.b) && s.b[s.i] == '"' {
		// An unwanted string (the most common skipped value): no trip through skip.
		if _, err := s.str(); err != nil {
			return false, err
		}
	} else if child != nil {
		outer := s.lastKey
		s.lastKey = child.path
		if err := s.wanted(child, depth); err != nil {
			return false, err
		}
		s.lastKey = outer
	} else if err := s.skip(depth); err != nil {
		return false, err
	}
	return s.next(closing)
}

// next reads the ',' or the closing byte after a member's or element's value; done reports
// the closing byte.
func (s *scanner) next(closing byte) (done bool, err error) {
	s.ws()
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
			return false, nil
		case closing:
			s.i++
			return true, nil
		}
	}
	return false, s.unexpected("',' or '" + string(closing) + "'")
}

// wanted parses a value that n wants: it records the value's span for n's columns and
// descends when deeper paths go through it. A repeated key resets what an earlier
// occurrence recorded, so the last occurrence wins (as in encoding/json and Python).
func (s *scanner) wanted(n *node, depth int) error {
	for _, c := range n.sub {
		s.spans[c] = span{}
	}
	start := s.i
	plain, rec, dec := false, false, false
	var text []byte
	e0 := len(s.escs)
	var err error
	switch {
	case s.i < len(s.b) && s.b[s.i] == '"':
		if n.decode && s.arena != nil && hasStrBlocks && !s.scalar {
			if text, dec = s.strDecode(); dec {
				break
			}
		}
		var esc bool
		s.rec, s.slow = n.decode && len(s.b) <= maxRecLine, false
		esc, err = s.str()
		plain, rec = !esc, s.rec && esc && !s.slow
		s.rec = false
	case n.children != nil && s.i < len(s.b) && s.b[s.i] == '{':
		if depth+1 > maxDepth {
			return s.fail("nesting deeper than " + strconv.Itoa(maxDepth))
		}
		s.i++
		err = s.object(n, depth+1)
	case n.children != nil && s.i < len(s.b) && s.b[s.i] == '[':
		if depth+1 > maxDepth {
			return s.fail("nesting deeper than " + strconv.Itoa(maxDepth))
		}
		s.i++
		err = s.array(n, depth+1)
	default:
		err = s.skip(depth)
	}
	if err != nil {
		return err
	}
	for _, c := range n.cols {
		s.spans[c] = span{start: start, end: s.i, found: true, plain: plain, e0: int32(e0), e1: int32(len(s.escs)), esc: rec, dec: dec}
		if dec {
			s.texts[c] = text
		}
	}
	return nil
}

// skip validates one value at s.i without recording anything. It is iterative, so hostile
// nesting costs one byte of stack per level, up to maxDepth.
func (s *scanner) skip(depth int) error {
	base := len(s.stack)
	for {
		// A value is expected at s.i.
		s.ws()
		if s.i >= len(s.b) {
			return s.unexpected("a value")
		}
		closed := true
		switch c := s.b[s.i]; {
		case c == '{' || c == '[':
			if depth+len(s.stack)-base+1 > maxDepth {
				return s.fail("nesting deeper than " + strconv.Itoa(maxDepth))
			}
			s.i++
			s.ws()
			end := byte('}')
			if c == '[' {
				end = ']'
			}
			if s.i < len(s.b) && s.b[s.i] == end {
				s.i++
				break
			}
			s.stack = append(s.stack, c)
			closed = false
			if c == '{' {
				if err := s.member(); err != nil {
					return err
				}
			}
		case c == '"':
			if _, err := s.str(); err != nil {
				return err
			}
		case c == 't':
			if err := s.lit("true"); err != nil {
				return err
			}
		case c == 'f':
			if err := s.lit("false"); err != nil {
				return err
			}
		case c == 'n':
			if err := s.lit("null"); err != nil {
				return err
			}
		case c == '-' || c >= '0' && c <= '9':
			if err := s.number(); err != nil {
				return err
			}
		default:
			return s.unexpected("a value")
		}
		if !closed {
			continue
		}
		// After a complete value: close containers or move to the next element.
		for {
			if len(s.stack) == base {
				return nil
			}
			s.ws()
			if s.i >= len(s.b) {
				return s.unexpected("',' or a closing bracket")
			}
			top := s.stack[len(s.stack)-1]
			c := s.b[s.i]
			if c == ',' {
				s.i++
				if top == '{' {
					s.ws()
					if err := s.member(); err != nil {
						return err
					}
				}
				break
			}
			if top == '{' && c == '}' || top == '[' && c == ']' {
				s.i++
				s.stack = s.stack[:len(s.stack)-1]
				continue
			}
			if top == '{' {
				return s.unexpected("',' or '}'")
			}
			return s.unexpected("',' or ']'")
		}
	}
}

// member reads `"key" :` inside an object being skipped.
func (s *scanner) member() error {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return s.unexpected("a string key")
	}
	if _, err := s.str(); err != nil {
		return err
	}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return s.unexpected("':' after object key")
	}
	s.i++
	return nil
}

func (s *scanner) lit(want string) error {
	if len(s.b)-s.i < len(want) || string(s.b[s.i:s.i+len(want)]) != want {
		return s.fail("invalid literal, want " + want)
	}
	s.i += len(want)
	return nil
}

func (s *scanner) number() error {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		s.i = i
		return s.unexpected("a digit")
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			s.i = i
			return s.unexpected("a digit after '.'")
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			s.i = i
			return s.unexpected("a digit in the exponent")
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	s.i = i
	return nil
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// str validates a string starting at the '"' at s.i and leaves s.i after its closing quote.
// It reports whether the string holds escapes.
//
// The fast path finds the next '"' and the next '\\' with bytes.IndexByte (vectorised in
// the runtime), checks the plain runs between them for control characters eight bytes at a
// time and, only when a run holds a byte >= 0x80, validates it with validRun. After each
// escape one word is checked first for the next escape or the closing quote, so text dense
// with escapes (roff sources, code) costs no call per escape. Each byte is
// looked at a bounded number of times (the positions of the next quote and backslash are
// kept until passed), so the cost stays linear for any string. Anything wrong sends the
// string through strSlow, which finds and reports the first error.
func (s *scanner) str() (escaped bool, err error) {
	b := s.b
	i := s.i + 1
	// Short strings (keys, small values) end within a few words: find the first byte that
	// needs attention eight bytes at a time, as strSlow does, and return when it is the
	// closing quote. (The lowest flagged byte of these masks is exact.)
	for range 4 {
		if i+8 > len(b) {
			break
		}
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (lsb * '"')
		bs := x ^ (lsb * '\\')
		m := strMask(x, q, bs)
		if m == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(m) / 8
		if b[i] == '"' {
			s.i = i + 1
			return false, nil
		}
		break
	}
	q, bs := -1, -1 // positions of the next '"' and '\\' at or after i; -1: not searched
	for {
		// In text dense with escapes (roff, code, verse), the next escape or the closing
		// quote is often in the next eight bytes: one word finds it without a call.
		if i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			xq, xb := x^(lsb*'"'), x^(lsb*'\\')
			if m := strMask(x, xq, xb); m != 0 {
				k := i + bits.TrailingZeros64(m)/8 // the bytes before it are plain ASCII
				switch b[k] {
				case '"':
					s.i = k + 1
					return escaped, nil
				case '\\':
					if k+1 < len(b) {
						switch b[k+1] {
						case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
							if s.rec {
								s.escs = append(s.escs, int32(k))
							}
							escaped, i = true, k+2
							continue
						}
					}
				}
			}
		}
		if hasStrBlocks && !s.scalar && len(b)-i >= 32 {
			// Thirty-two bytes a step, UTF-8 validated on the way, to the next quote,
			// backslash or control byte.
			off, state := strBlocks(b[i:])
			if state == stateBad {
				return s.strSlow()
			}
			if state == stateStop {
				k := i + off
				if b[k] == '"' {
					s.i = k + 1
					return escaped, nil
				}
				if b[k] != '\\' || k+1 >= len(b) {
					return s.strSlow()
				}
				escaped = true
				n := escapeLen(b[k:])
				if n == 0 {
					return s.strSlow()
				}
				if s.rec {
					s.escs = append(s.escs, int32(k))
				}
				i = k + n
				continue
			}
			// None in the whole blocks: the rest (under 32 bytes, and a sequence the
			// blocks' end cut) is checked below.
			i = backOff(b, i, i+off)
		}
		if q < i {
			k := bytes.IndexByte(b[i:], '"')
			if k < 0 {
				return s.strSlow()
			}
			q = i + k
		}
		if bs < i {
			bs = len(b)
			if k := bytes.IndexByte(b[i:q], '\\'); k >= 0 {
				bs = i + k
			}
		}
		end := min(q, bs)
		if !plainRun(b[i:end]) {
			return s.strSlow()
		}
		if end == q {
			s.i = q + 1
			return escaped, nil
		}
		// An escape at bs.
		escaped = true
		n := escapeLen(b[bs:])
		if n == 0 {
			return s.strSlow()
		}
		if s.rec {
			s.escs = append(s.escs, int32(bs))
		}
		i = bs + n
	}
}

// strMask flags (0x80) the bytes of the word x that need a string scanner's attention: '"'
// (q, x with each byte xored with '"', is zero there), '\\' (bs likewise), a control byte, or a
// byte >= 0x80. The lowest flag is exact; above it a borrow may flag more. Since every byte
// >= 0x80 is flagged by x itself, the zero and below-0x20 tests need not mask those bytes
// out: a byte < 0x80 of q, bs or x sets its high bit minus one (or minus 0x20) exactly when
// it is zero (below 0x20), and only such a byte starts a borrow.
func strMask(x, q, bs uint64) uint64 {
	return ((q - lsb) | (bs - lsb) | (x - lsb*0x20) | x) & msb
}

// escapeLen returns the length of the valid JSON escape at the start of e (e[0] is the
// backslash): 2, or 6 for \uXXXX; 0 when it is not one (the careful path reports it).
func escapeLen(e []byte) int {
	if len(e) < 2 {
		return 0
	}
	switch e[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(e) >= 6 && isHex4(e[2:6]) {
			return 6
		}
	}
	return 0
}

// The states strBlocks returns.
const (
	stateStop = iota // at a '"', '\\' or control byte
	stateTail        // at the end of the whole blocks
	stateBad         // invalid UTF-8
)

// backOff returns j, or the start of the UTF-8 sequence that the end of b[lo:j] cuts (whose
// lead is in its last three bytes), so that the bytes before the result are whole sequences.
func backOff(b []byte, lo, j int) int {
	for k := j - 1; k >= lo && k >= j-3; k-- {
		c := b[k]
		if c < 0x80 {
			return j
		}
		if c >= 0xc0 {
			n := 2
			if c >= 0xf0 {
				n = 4
			} else if c >= 0xe0 {
				n = 3
			}
			if j-k < n {
				return k
			}
			return j
		}
	}
	return j
}

// plainRun reports whether b, a run of string bytes free of '"' and '\\', holds no control
// character and is valid UTF-8. ASCII is checked sixteen bytes a step; from the first byte
// >= 0x80 or < 0x20 on, the rest goes to validRun.
func plainRun(b []byte) bool {
	i := 0
	for ; i+16 <= len(b); i += 16 {
		x := binary.LittleEndian.Uint64(b[i:])
		y := binary.LittleEndian.Uint64(b[i+8:])
		// A byte < 0x20 sets its high bit in (x - 0x20…) &^ x, a byte >= 0x80 in x.
		if ((x-lsb*0x20)&^x|x|(y-lsb*0x20)&^y|y)&msb != 0 {
			return validRun(b[i:])
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c >= utf8.RuneSelf {
			return validRun(b[i:])
		}
	}
	return true
}

// validRun reports whether b, string bytes free of '"' and '\\', holds no control character
// and is valid UTF-8, in one pass of eight bytes a word (utf8.Valid takes a byte at a time
// past the first non-ASCII one, and text in Cyrillic, Greek, Hebrew or Arabic has one every
// other byte). Two-byte sequences are checked with bit masks: a continuation byte
// (10xxxxxx) must stand exactly after a lead C2-DF, which is the lead mask shifted by a byte
// (carried across words). A word holding the lead of a longer sequence (CJK, emoji,
// typographic quotes) is validated rune by rune to its end.
func validRun(b []byte) bool {
	i := 0
	var carry uint64 // 0x80 when b[i-1] is a two-byte lead: b[i] must continue it
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:])
		if (x-lsb*0x20)&^x&msb != 0 {
			return false // a control character (only below a true one can a borrow flag)
		}
		if x&msb|carry == 0 {
			i += 8
			continue
		}
		cont := x &^ (x << 1) & msb  // 10xxxxxx
		lead := x & (x << 1) & msb   // 11xxxxxx
		long := lead & (x << 2)      // 111xxxxx: the lead of three or four bytes
		t := x & (lsb * 0x1e)        // C0 and C1 (overlong) have t == 0; t is even,
		over := (t - lsb) &^ t & msb // so no borrow reaches a flag
		if long != 0 {
			end := i + 8
			if carry != 0 {
				i--
			}
			for i < end {
				if b[i] < utf8.RuneSelf {
					if b[i] < 0x20 {
						return false
					}
					i++
					continue
				}
				r, n := utf8.DecodeRune(b[i:])
				if r == utf8.RuneError && n == 1 {
					return false
				}
				i += n
			}
			carry = 0
			continue
		}
		if lead&over != 0 || cont != lead<<8|carry {
			return false
		}
		carry = lead >> 56
		i += 8
	}
	if carry != 0 {
		i--
	}
	for i < len(b) {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 {
				return false
			}
			i++
			continue
		}
		if c >= 0xc2 && c <= 0xdf && i+1 < len(b) && b[i+1]&0xc0 == 0x80 {
			i += 2 // a two-byte sequence, the most common in the tail
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return false
		}
		i += n
	}
	return true
}

// strSlow is str's careful path: eight bytes are checked at a time for the bytes that need
// attention ('"', '\\', control characters, bytes >= 0x80, whose UTF-8 sequence is
// validated where it stands), and the first problem is reported with its column.
func (s *scanner) strSlow() (escaped bool, err error) {
	s.slow = true
	b := s.b
	i := s.i + 1
	for {
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			q := x ^ (lsb * '"')
			bs := x ^ (lsb * '\\')
			m := ((q - lsb) &^ q) | ((bs - lsb) &^ bs) | ((x - lsb*0x20) &^ x) | x
			m &= msb
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8
			if b[i] < utf8.RuneSelf {
				break
			}
			n, err := s.rune(i)
			if err != nil {
				return false, err
			}
			i += n
		}
		if i >= len(b) {
			s.i = i
			return false, s.fail("unterminated string")
		}
		c := b[i]
		switch {
		case c == '"':
			s.i = i + 1
			return escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				s.i = i + 1
				return false, s.fail("unterminated escape")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex4(b[i+2:i+6]) {
					s.i = i
					return false, s.fail(`invalid \u escape`)
				}
				i += 6
			default:
				s.i = i
				return false, s.fail("invalid escape")
			}
		case c < 0x20:
			s.i = i
			return false, s.fail(fmt.Sprintf("control character 0x%02x in a string", c))
		case c >= utf8.RuneSelf:
			n, err := s.rune(i)
			if err != nil {
				return false, err
			}
			i += n
		default:
			i++
		}
	}
}

// rune validates the UTF-8 sequence starting at b[i] (a byte >= 0x80 inside a string) and
// returns its length.
func (s *scanner) rune(i int) (int, error) {
	r, n := utf8.DecodeRune(s.b[i:])
	if r == utf8.RuneError && n == 1 {
		return 0, &syntaxError{off: i, utf8: true, key: s.lastKey, msg: "invalid UTF-8 in a string"}
	}
	return n, nil
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// unescape appends the UTF-8 text of the validated string body raw (without its quotes) to
// dst. An unpaired UTF-16 surrogate (\ud800 alone) cannot be UTF-8 and is an error.
//
// After an escape the next one is often within a word (roff sources, code, verse): one word
// is copied whole and searched for a backslash before bytes.IndexByte is called.
func unescape(dst, raw []byte) ([]byte, error) {
	for len(raw) > 0 {
		k := -1
		if n := len(dst); len(raw) >= 8 && cap(dst)-n >= 8 {
			x := binary.LittleEndian.Uint64(raw)
			binary.LittleEndian.PutUint64(dst[n:n+8], x)
			xb := x ^ (lsb * '\\')
			if m := (xb - lsb) &^ xb & msb; m != 0 {
				k = bits.TrailingZeros64(m) / 8 // the lowest flag is exact
				dst = dst[:n+k]
			} else {
				dst, raw = dst[:n+8], raw[8:]
			}
		}
		if k < 0 {
			if k = bytes.IndexByte(raw, '\\'); k < 0 {
				return append(dst, raw...), nil
			}
			dst = append(dst, raw[:k]...)
		}
		raw = raw[k:]
		switch raw[1] {
		case 'u':
			r := hex4(raw[2:])
			raw = raw[6:]
			if r >= 0xD800 && r < 0xDC00 {
				if len(raw) >= 6 && raw[0] == '\\' && raw[1] == 'u' {
					if r2 := hex4(raw[2:]); r2 >= 0xDC00 && r2 < 0xE000 {
						raw = raw[6:]
						dst = utf8.AppendRune(dst, (r-0xD800)<<10+(r2-0xDC00)+0x10000)
						continue
					}
				}
				return dst, errSurrogate(r)
			}
			if r >= 0xDC00 && r < 0xE000 {
				return dst, errSurrogate(r)
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			dst = append(dst, escaped(raw[1]))
		}
		raw = raw[2:]
	}
	return dst, nil
}

// escaped is the byte a one-character escape \c stands for (c is one of the valid escape
// characters other than u).
func escaped(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // '"', '\\', '/'
}

// errSurrogate is the error of a \u escape of half a surrogate pair without its other half.
func errSurrogate(r rune) error {
	return fmt.Errorf(`unpaired surrogate \u%04x (not representable in UTF-8)`, r)
}

// maxRecLine is the longest line whose escape positions are recorded (they are int32); the
// strings of longer lines are decoded by unescape.
const maxRecLine = 1<<31 - 1

// unescapeAt is unescape for the validated string body b[start:end] whose escapes stand at
// escs (in order, each a valid escape): the runs between them are copied without searching
// for backslashes again. Runs of up to eight bytes are copied as one word when dst and b have
// the room.
func unescapeAt(dst, b []byte, start, end int, escs []int32) ([]byte, error) {
	prev := start
	for j := 0; j < len(escs); j++ {
		p := int(escs[j])
		if n, r := len(dst), p-prev; r <= 8 && cap(dst)-n >= 8 && prev+8 <= len(b) {
			binary.LittleEndian.PutUint64(dst[n:n+8], binary.LittleEndian.Uint64(b[prev:]))
			dst = dst[:n+r]
		} else {
			dst = append(dst, b[prev:p]...)
		}
		c := b[p+1]
		prev = p + 2
		switch c {
		case 'u':
			r := hex4(b[p+2:])
			prev = p + 6
			if r >= 0xD800 && r < 0xDC00 {
				if j+1 < len(escs) && int(escs[j+1]) == p+6 && b[p+7] == 'u' {
					if r2 := hex4(b[p+8:]); r2 >= 0xDC00 && r2 < 0xE000 {
						j++
						prev = p + 12
						dst = utf8.AppendRune(dst, (r-0xD800)<<10+(r2-0xDC00)+0x10000)
						continue
					}
				}
				return dst, errSurrogate(r)
			}
			if r >= 0xDC00 && r < 0xE000 {
				return dst, errSurrogate(r)
			}
			dst = utf8.AppendRune(dst, r)
		default:
			dst = append(dst, escaped(c))
		}
	}
	return append(dst, b[prev:end]...), nil
}

// typeName names the JSON type of the value starting with byte c.
func typeName(c byte) string {
	switch {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "number"
	}
	return "invalid JSON"
}
