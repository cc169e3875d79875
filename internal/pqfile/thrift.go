package pqfile

import (
	"errors"
	"fmt"
)

// ErrShort means a Thrift structure runs past the bytes given (more may be needed).
var ErrShort = errors.New("thrift: structure runs past the bytes given")

// maxThriftDepth bounds the nesting of a Thrift structure.
const maxThriftDepth = 64

// ThriftSize walks one Thrift compact-protocol struct at the start of b without decoding it
// and returns its length in bytes. It checks what a decoder would allocate for: every string
// length and every list, set and map size must fit in the bytes that remain, so decoding a
// structure that passes allocates memory in proportion to its bytes, not to the numbers it
// claims. It returns ErrShort when b ends inside the struct.
func ThriftSize(b []byte) (int, error) {
	w := thriftWalker{b: b}
	if err := w.structure(0); err != nil {
		return 0, err
	}
	return w.i, nil
}

type thriftWalker struct {
	b []byte
	i int
}

func (w *thriftWalker) byte() (byte, error) {
	if w.i >= len(w.b) {
		return 0, ErrShort
	}
	c := w.b[w.i]
	w.i++
	return c, nil
}

func (w *thriftWalker) uvarint() (uint64, error) {
	var v uint64
	for shift := 0; shift < 70; shift += 7 {
		c, err := w.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w: a varint longer than 10 bytes", ErrCorrupt)
}

// need checks that n more bytes (at least) can follow.
func (w *thriftWalker) need(n uint64) error {
	if n > uint64(len(w.b)-w.i) {
		return ErrShort
	}
	return nil
}

func (w *thriftWalker) structure(depth int) error {
	if depth > maxThriftDepth {
		return fmt.Errorf("%w: Thrift structure nested deeper than %d", ErrCorrupt, maxThriftDepth)
	}
	for {
		h, err := w.byte()
		if err != nil {
			return err
		}
		typ := h & 0x0f
		if typ == 0 {
			return nil // stop
		}
		if h>>4 == 0 { // a full field id follows
			if _, err := w.uvarint(); err != nil {
				return err
			}
		}
		if err := w.value(typ, depth); err != nil {
			return err
		}
	}
}

func (w *thriftWalker) value(typ byte, depth int) error {
	switch typ {
	case 1, 2: // boolean in a field header
		return nil
	case 3:
		_, err := w.byte()
		return err
	case 4, 5, 6:
		_, err := w.uvarint()
		return err
	case 7:
		if err := w.need(8); err != nil {
			return err
		}
		w.i += 8
		return nil
	case 8:
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		if err := w.need(n); err != nil {
			return err
		}
		w.i += int(n)
		return nil
	case 9, 10:
		h, err := w.byte()
		if err != nil {
			return err
		}
		n, elem := uint64(h>>4), h&0x0f
		if n == 15 {
			if n, err = w.uvarint(); err != nil {
				return err
			}
		}
		if err := w.need(n); err != nil { // every element takes at least one byte
			return err
		}
		for range n {
			if elem == 1 || elem == 2 { // booleans in a list take a byte each
				if _, err := w.byte(); err != nil {
					return err
				}
				continue
			}
			if err := w.value(elem, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 11:
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		kv, err := w.byte()
		if err != nil {
			return err
		}
		if err := w.need(2 * n); err != nil {
			return err
		}
		for range n {
			for _, t := range []byte{kv >> 4, kv & 0x0f} {
				if t == 1 || t == 2 {
					if _, err := w.byte(); err != nil {
						return err
					}
				} else if err := w.value(t, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	case 12:
		return w.structure(depth + 1)
	}
	return fmt.Errorf("%w: Thrift type %d", ErrCorrupt, typ)
}

// zigzag decodes a Thrift compact-protocol signed integer.
func zigzag(v uint64) int64 { return int64(v>>1) ^ -int64(v&1) }

// fieldHeader reads a struct's next field header: its type (0 at the stop) and id, the id
// given as a delta from the previous one or in full.
func (w *thriftWalker) fieldHeader(last int16) (typ byte, id int16, err error) {
	h, err := w.byte()
	if err != nil {
		return 0, 0, err
	}
	typ = h & 0x0f
	if typ == 0 {
		return 0, 0, nil
	}
	if d := h >> 4; d != 0 {
		return typ, last + int16(d), nil
	}
	v, err := w.uvarint()
	if err != nil {
		return 0, 0, err
	}
	return typ, int16(zigzag(v)), nil
}

// listHeader reads a list header: its size and element type.
func (w *thriftWalker) listHeader() (uint64, byte, error) {
	h, err := w.byte()
	if err != nil {
		return 0, 0, err
	}
	n, elem := uint64(h>>4), h&0x0f
	if n == 15 {
		if n, err = w.uvarint(); err != nil {
			return 0, 0, err
		}
	}
	return n, elem, nil
}

// footerLayout is what the raw walk of a FileMetaData finds: the schema's shape and where
// each row group's struct lies in the footer's bytes.
type footerLayout struct {
	elements int
	depth    int
	// rgList is the offset of the row groups' list header, rgStart the offset of its first
	// element; rgEnd[i] is where row group i's struct ends (its start is rgEnd[i-1], or
	// rgStart). listEnd is the offset just past the list.
	rgList, rgStart, listEnd int
	rgEnd                    []int
	rgRows                   []int64
}

// walkFooter walks a FileMetaData in the Thrift compact protocol (already checked by
// ThriftSize) and measures its schema from the raw bytes: the number of elements and the
// nesting their num_children describe, refused beyond the limits before any decoder builds
// a tree. It records where each row group lies so that a window of them can be decoded alone.
func walkFooter(b []byte, maxElements, maxDepth int) (*footerLayout, error) {
	w := thriftWalker{b: b}
	l := &footerLayout{rgList: -1}
	var last int16
	for {
		typ, id, err := w.fieldHeader(last)
		if err != nil {
			return nil, err
		}
		if typ == 0 {
			return l, nil
		}
		last = id
		switch {
		case id == 2 && typ == 9:
			if err := w.schema(l, maxElements, maxDepth); err != nil {
				return nil, err
			}
		case id == 4 && typ == 9:
			if err := w.rowGroups(l); err != nil {
				return nil, err
			}
		default:
			if err := w.value(typ, 0); err != nil {
				return nil, err
			}
		}
	}
}

// schema walks the list of schema elements, following num_children (field 5) to measure the
// depth of the tree they flatten.
func (w *thriftWalker) schema(l *footerLayout, maxElements, maxDepth int) error {
	n, elem, err := w.listHeader()
	if err != nil {
		return err
	}
	if elem != 12 {
		return fmt.Errorf("%w: the schema is a list of Thrift type %d", ErrCorrupt, elem)
	}
	if n > uint64(maxElements) {
		return fmt.Errorf("%w: the schema has %d elements, more than the limit of %d", ErrUnsupported, n, maxElements)
	}
	if err := w.need(n); err != nil {
		return err
	}
	l.elements = int(n)
	var open []int64 // children still expected by each group being walked
	for i := range int(n) {
		children, has, err := w.intField(5, 5) // num_children, i32
		if err != nil {
			return err
		}
		if children < 0 {
			return fmt.Errorf("%w: schema element %d claims %d children", ErrCorrupt, i, children)
		}
		if len(open) > 0 {
			open[len(open)-1]--
		}
		if has && (children > 0 || i == 0) {
			open = append(open, children)
			if len(open) > maxDepth {
				return fmt.Errorf("%w: schema nested deeper than %d", ErrCorrupt, maxDepth)
			}
			l.depth = max(l.depth, len(open))
		}
		for len(open) > 0 && open[len(open)-1] <= 0 {
			open = open[:len(open)-1]
		}
	}
	return nil
}

// intField walks one struct to its end and returns its integer field id of Thrift type typ
// (5 i32, 6 i64), and whether it was there; every other field is skipped.
func (w *thriftWalker) intField(id int16, typ byte) (v int64, has bool, err error) {
	var last int16
	for {
		t, fid, err := w.fieldHeader(last)
		if err != nil {
			return 0, false, err
		}
		if t == 0 {
			return v, has, nil
		}
		last = fid
		if fid == id && t == typ {
			u, err := w.uvarint()
			if err != nil {
				return 0, false, err
			}
			v, has = zigzag(u), true
			continue
		}
		if err := w.value(t, 1); err != nil {
			return 0, false, err
		}
	}
}

// rowGroups walks the list of row groups, recording where each one's struct ends and its
// num_rows (field 3).
func (w *thriftWalker) rowGroups(l *footerLayout) error {
	l.rgList = w.i
	n, elem, err := w.listHeader()
	if err != nil {
		return err
	}
	if n > 0 && elem != 12 {
		return fmt.Errorf("%w: the row groups are a list of Thrift type %d", ErrCorrupt, elem)
	}
	if err := w.need(n); err != nil {
		return err
	}
	l.rgStart = w.i
	l.rgEnd = make([]int, 0, n)
	l.rgRows = make([]int64, 0, n)
	for range n {
		rows, _, err := w.intField(3, 6) // num_rows, i64
		if err != nil {
			return err
		}
		l.rgEnd = append(l.rgEnd, w.i)
		l.rgRows = append(l.rgRows, rows)
	}
	l.listEnd = w.i
	return nil
}
