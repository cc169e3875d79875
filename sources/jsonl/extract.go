package jsonl

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mldf/convert/sample"
)

// Errors a line can fail with. Sample.Err is a *LineError wrapping one of them (or ErrChanged,
// for the line being parsed when a mapped file shrank).
var (
	ErrSyntax      = errors.New("not valid JSON")
	ErrUTF8        = errors.New("invalid UTF-8")
	ErrMissing     = errors.New("required key missing")
	ErrType        = errors.New("wrong type")
	ErrValue       = errors.New("bad value")
	ErrLineTooLong = errors.New("line too long")
)

// Errors in the configuration, returned by New.
var (
	ErrColumn  = errors.New("jsonl: invalid column")
	ErrNoFiles = errors.New("jsonl: no input files")
	ErrRange   = errors.New("jsonl: file range out of bounds")
)

// LineError is a per-line failure, carried by Sample.Err: the pipeline applies the recipe's
// error policy to it.
type LineError struct {
	File string
	Line int64
	Key  string // the key path concerned, "" when the failure is about the whole line
	Err  error  // wraps one of ErrSyntax, ErrUTF8, ErrMissing, ErrType, ErrValue, ErrLineTooLong, ErrChanged
}

func (e *LineError) Error() string {
	if e.Key != "" {
		return fmt.Sprintf("%s:%d: key %q: %v", e.File, e.Line, e.Key, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// Column says which value of each line to extract, and as what.
type Column struct {
	// Name is the column name in Sample.Values; empty means Key.
	Name string
	// Key is the dotted key path: "text", "meta.lang". A segment that is a decimal number
	// also selects an array element ("messages.0.content"). Keys holding a dot cannot be
	// addressed.
	Key string
	// Kind is the value wanted:
	//   KindString  a JSON string, unescaped to UTF-8
	//   KindInt     an integer (a number with an exact int64 value; true/false give 1/0)
	//   KindFloat   any number, as float64
	//   KindJSON    any JSON value (object, array, string, number, boolean), as compact JSON
	//   KindBytes   a string holding standard base64 (padding optional), decoded
	Kind sample.Kind
	// Required makes a missing key (or a null value) an error; otherwise the column is absent
	// from Sample.Values for that line.
	Required bool
}

func (c Column) name() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Key
}

// extractor maps one line to its column values.
type extractor struct {
	cols []Column
	root *node
}

func newExtractor(cols []Column) (*extractor, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("%w: no columns", ErrColumn)
	}
	x := &extractor{cols: cols, root: &node{}}
	names := map[string]bool{}
	for ci, c := range cols {
		switch c.Kind {
		case sample.KindString, sample.KindInt, sample.KindFloat, sample.KindJSON, sample.KindBytes:
		default:
			return nil, fmt.Errorf("%w %q: unsupported kind %d", ErrColumn, c.Key, c.Kind)
		}
		if names[c.name()] {
			return nil, fmt.Errorf("%w: duplicate column name %q", ErrColumn, c.name())
		}
		names[c.name()] = true
		segs := strings.Split(c.Key, ".")
		n := x.root
		for si, sg := range segs {
			if sg == "" {
				return nil, fmt.Errorf("%w: key path %q has an empty segment", ErrColumn, c.Key)
			}
			if n.children == nil {
				n.children = map[string]*node{}
			}
			ch := n.children[sg]
			if ch == nil {
				ch = &node{path: strings.Join(segs[:si+1], ".")}
				n.children[sg] = ch
				n.keys, n.kids = append(n.keys, sg), append(n.kids, ch)
			}
			ch.sub = append(ch.sub, ci)
			n = ch
		}
		n.cols = append(n.cols, ci)
		n.decode = n.decode || c.Kind == sample.KindString
	}
	return x, nil
}

// extract appends line's values to vals, and their decoded bytes to *arena. It returns the
// key and error of the first failure (vals is then returned as it stands: the caller drops
// what this line appended).
func (x *extractor) extract(s *scanner, line []byte, arena *arena, vals []sample.Column) ([]sample.Column, string, error) {
	s.arena = arena
	err := s.scan(x.root, line, len(x.cols))
	s.arena = nil
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) && se.utf8 {
			return vals, se.key, fmt.Errorf("%w: %v", ErrUTF8, se)
		}
		return vals, "", fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	for ci, c := range x.cols {
		sp := s.spans[ci]
		if !sp.found || line[sp.start] == 'n' {
			if c.Required {
				if sp.found {
					return vals, c.Key, fmt.Errorf("%w (value is null)", ErrMissing)
				}
				return vals, c.Key, ErrMissing
			}
			continue
		}
		if sp.dec && c.Kind == sample.KindString {
			// Decoded while it was scanned.
			vals = append(vals, sample.Column{Name: c.name(), Value: sample.Value{Kind: sample.KindString, UTF8: true, Bytes: s.texts[ci]}})
			continue
		}
		if sp.plain && c.Kind == sample.KindString {
			// A string without escapes: its text is its bytes between the quotes.
			b := arena.space(sp.end - sp.start - 2)
			b = append(b, line[sp.start+1:sp.end-1]...)
			vals = append(vals, sample.Column{Name: c.name(), Value: sample.Value{Kind: sample.KindString, UTF8: true, Bytes: arena.commit(b)}})
			continue
		}
		if sp.esc && c.Kind == sample.KindString {
			// The scan recorded where the escapes are: decode without searching again.
			b, err := unescapeAt(arena.space(sp.end-sp.start-2), line, sp.start+1, sp.end-1, s.escs[sp.e0:sp.e1])
			if err != nil {
				return vals, c.Key, fmt.Errorf("%w: %v", ErrUTF8, err)
			}
			vals = append(vals, sample.Column{Name: c.name(), Value: sample.Value{Kind: sample.KindString, UTF8: true, Bytes: arena.commit(b)}})
			continue
		}
		v, err := convert(c.Kind, line[sp.start:sp.end], arena)
		if err != nil {
			return vals, c.Key, err
		}
		vals = append(vals, sample.Column{Name: c.name(), Value: v})
	}
	return vals, "", nil
}

var kindNames = map[sample.Kind]string{
	sample.KindString: "string", sample.KindInt: "integer", sample.KindFloat: "number",
	sample.KindJSON: "JSON value", sample.KindBytes: "base64 string",
}

// convert turns one validated JSON value into a Value of the wanted kind.
func convert(kind sample.Kind, raw []byte, arena *arena) (sample.Value, error) {
	c := raw[0]
	wrong := func() (sample.Value, error) {
		return sample.Value{}, fmt.Errorf("%w: want %s, got %s", ErrType, kindNames[kind], typeName(c))
	}
	switch kind {
	case sample.KindString, sample.KindBytes:
		if c != '"' {
			return wrong()
		}
		if kind == sample.KindString {
			b, err := unescape(arena.space(len(raw)), raw[1:len(raw)-1])
			if err != nil {
				return sample.Value{}, fmt.Errorf("%w: %v", ErrUTF8, err)
			}
			return sample.Value{Kind: sample.KindString, UTF8: true, Bytes: arena.commit(b)}, nil
		}
		b, err := unescape(arena.tmp[:0], raw[1:len(raw)-1])
		if err != nil {
			return sample.Value{}, fmt.Errorf("%w: %v", ErrUTF8, err)
		}
		arena.tmp = b
		enc := base64.StdEncoding
		if len(b)%4 != 0 {
			enc = base64.RawStdEncoding
		}
		out := arena.space(enc.DecodedLen(len(b)))[:enc.DecodedLen(len(b))]
		n, err := enc.Decode(out, b)
		if err != nil {
			return sample.Value{}, fmt.Errorf("%w: not base64: %v", ErrValue, err)
		}
		return sample.Value{Kind: sample.KindBytes, Bytes: arena.commit(out[:n])}, nil
	case sample.KindInt:
		switch c {
		case 't':
			return sample.Value{Kind: sample.KindInt, Int: 1}, nil
		case 'f':
			return sample.Value{Kind: sample.KindInt, Int: 0}, nil
		}
		if typeName(c) != "number" {
			return wrong()
		}
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return sample.Value{Kind: sample.KindInt, Int: n}, nil
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
			return sample.Value{}, fmt.Errorf("%w: %s is not an int64", ErrValue, raw)
		}
		return sample.Value{Kind: sample.KindInt, Int: int64(f)}, nil
	case sample.KindFloat:
		if typeName(c) != "number" {
			return wrong()
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return sample.Value{}, fmt.Errorf("%w: %s is out of float64 range", ErrValue, raw)
		}
		return sample.Value{Kind: sample.KindFloat, Float: f}, nil
	case sample.KindJSON:
		b := arena.commit(compact(arena.space(len(raw)), raw))
		return sample.Value{Kind: sample.KindJSON, Bytes: b}, nil
	}
	return wrong()
}

// compact appends the validated JSON value raw to dst without insignificant whitespace,
// copying the runs between whitespace in bulk.
func compact(dst, raw []byte) []byte {
	run := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			for i++; raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case ' ', '\t', '\r', '\n':
			dst = append(dst, raw[run:i]...)
			run = i + 1
		}
	}
	return append(dst, raw[run:]...)
}

// arenaBlock is the allocation unit of an arena.
const arenaBlock = 256 << 10

// arena hands out the memory of the extracted values of one chunk in blocks, so a chunk's
// values cost a few allocations instead of one each, and no block is ever copied. Blocks are
// at most arenaBlock bytes (or one larger value), so a value kept alive longer than its
// chunk pins little besides itself.
//
// With reuse set, the blocks come from *reuse in order, and the new ones of arenaBlock bytes
// are added to it: a chunk parsed into the memory of an earlier one allocates nothing once
// there are enough blocks. A value longer than a block gets a block of its own, not kept.
type arena struct {
	buf   []byte
	block int    // size of the next block; 0 means arenaBlock
	tmp   []byte // scratch for a value being decoded in two steps (base64)
	reuse *[][]byte
	next  int // the next block of *reuse to use
}

// space returns an empty slice with room for n bytes, for a value being built.
func (a *arena) space(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		switch {
		case a.reuse != nil && n <= arenaBlock:
			if a.next == len(*a.reuse) {
				*a.reuse = append(*a.reuse, make([]byte, 0, arenaBlock))
			}
			a.buf = (*a.reuse)[a.next][:0]
			a.next++
		default:
			if a.block <= 0 || a.reuse != nil {
				a.block = arenaBlock
			}
			a.buf = make([]byte, 0, max(n, a.block))
			a.block = arenaBlock
		}
	}
	return a.buf[len(a.buf):len(a.buf)]
}

// commit keeps b, built in the slice space returned, and returns it with its capacity cut.
func (a *arena) commit(b []byte) []byte {
	start := len(a.buf)
	a.buf = a.buf[:start+len(b)]
	return a.buf[start : start+len(b) : start+len(b)]
}
