package parquet

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/parquet-go/parquet-go/format"

	"github.com/mldf/convert/format/mldf"
)

func validJSON(b []byte) bool { return json.Valid(b) }

// leafData is one leaf column's values for a batch of rows: entries, and where each row's
// entries start (rows[i] .. rows[i+1], the last row ending at len(ents)).
type leafData struct {
	ents []entry
	rows []int
}

func (d *leafData) rowRange(i int) (int, int) {
	end := len(d.ents)
	if i+1 < len(d.rows) {
		end = d.rows[i+1]
	}
	return d.rows[i], end
}

// errLevels reports levels that do not fit the schema.
func errLevels(n *Node) error {
	return fmt.Errorf("%w: the repetition and definition levels of %q do not fit its schema", ErrCorrupt, n.Path)
}

// walker assembles one row of a nested column from its leaves' entries (the record assembly
// of the Dremel paper): each leaf has a cursor; a missing subtree holds exactly one entry in
// every leaf below it.
type walker struct {
	data  []*leafData // by leaf index
	pos   []int
	end   []int
	arena []byte
}

func (w *walker) start(n *Node, row int) {
	for l := n.firstLeaf; l < n.endLeaf; l++ {
		w.pos[l], w.end[l] = w.data[l].rowRange(row)
	}
}

// done checks that every leaf of n was consumed exactly.
func (w *walker) done(n *Node) error {
	for l := n.firstLeaf; l < n.endLeaf; l++ {
		if w.pos[l] != w.end[l] {
			return errLevels(n)
		}
	}
	return nil
}

func (w *walker) peek(n *Node) (*entry, error) {
	l := n.firstLeaf
	if w.pos[l] >= w.end[l] {
		return nil, errLevels(n)
	}
	return &w.data[l].ents[w.pos[l]], nil
}

// more reports whether the next entry of n's first leaf repeats at n's level.
func (w *walker) more(n *Node) bool {
	l := n.firstLeaf
	return w.pos[l] < w.end[l] && int(w.data[l].ents[w.pos[l]].rep) == n.maxRep
}

func (w *walker) skip(n *Node) error {
	for l := n.firstLeaf; l < n.endLeaf; l++ {
		if w.pos[l] >= w.end[l] {
			return errLevels(n)
		}
		w.pos[l]++
	}
	return nil
}

// maxJSON bounds one assembled JSON value.
const maxJSON = 1 << 30

// value appends node n at the cursors as JSON.
func (w *walker) value(n *Node, out []byte) ([]byte, error) {
	if len(out) > maxJSON {
		return out, fmt.Errorf("%w: the JSON of %q exceeds %d bytes", ErrValue, n.Path, maxJSON)
	}
	if n.Repeated() { // a repeated field outside a LIST group: a JSON array
		return w.list(n, n, out)
	}
	e, err := w.peek(n)
	if err != nil {
		return out, err
	}
	if int(e.def) < n.maxDef {
		if !n.Optional() {
			return out, errLevels(n)
		}
		return append(out, "null"...), w.skip(n)
	}
	return w.present(n, out)
}

// present appends n, known to be defined at the cursors.
func (w *walker) present(n *Node, out []byte) ([]byte, error) {
	switch {
	case n.leaf:
		e, err := w.peek(n)
		if err != nil {
			return out, err
		}
		if e.null {
			return out, errLevels(n)
		}
		w.pos[n.leafIndex]++
		return appendJSONScalar(out, n, e, w.arena)
	case n.isMap() && !n.Repeated():
		if kv := mapEntries(n); kv != nil {
			return w.mapValue(kv, out)
		}
	case n.isList() && !n.Repeated():
		if rep, elem := listElement(n); rep != nil {
			return w.list(rep, elem, out)
		}
	}
	out = append(out, '{')
	for i, c := range n.Children {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendJSONString(out, []byte(c.Name))
		out = append(out, ':')
		var err error
		if out, err = w.value(c, out); err != nil {
			return out, err
		}
	}
	return append(out, '}'), nil
}

// listElement returns the repeated child of a LIST group and the node each element is
// (the backward-compatibility rules of the LIST spec), or nil when n is not a valid list.
func listElement(n *Node) (rep, elem *Node) {
	if n.Repeated() {
		return n, n
	}
	if len(n.Children) != 1 || !n.Children[0].Repeated() {
		return nil, nil
	}
	rep = n.Children[0]
	if rep.leaf || len(rep.Children) != 1 || rep.Name == "array" || rep.Name == n.Name+"_tuple" {
		return rep, rep
	}
	return rep, rep.Children[0]
}

// mapEntries returns the repeated key-value group of a MAP, or nil.
func mapEntries(n *Node) *Node {
	if len(n.Children) != 1 || !n.Children[0].Repeated() || n.Children[0].leaf || len(n.Children[0].Children) == 0 {
		return nil
	}
	return n.Children[0]
}

// list appends the repetitions of rep at the cursors as a JSON array of elem.
func (w *walker) list(rep, elem *Node, out []byte) ([]byte, error) {
	out = append(out, '[')
	e, err := w.peek(rep)
	if err != nil {
		return out, err
	}
	if int(e.def) < rep.maxDef { // no element
		return append(out, ']'), w.skip(rep)
	}
	for i := 0; ; i++ {
		if i > 0 {
			out = append(out, ',')
		}
		if elem == rep {
			out, err = w.present(rep, out)
		} else {
			out, err = w.value(elem, out)
		}
		if err != nil {
			return out, err
		}
		if !w.more(rep) {
			break
		}
		if len(out) > maxJSON {
			return out, fmt.Errorf("%w: the JSON of %q exceeds %d bytes", ErrValue, rep.Path, maxJSON)
		}
	}
	return append(out, ']'), nil
}

// mapValue appends a map as a JSON object when its keys are text, else as [key, value] pairs.
func (w *walker) mapValue(kv *Node, out []byte) ([]byte, error) {
	key := kv.Children[0]
	var val *Node
	if len(kv.Children) > 1 {
		val = kv.Children[1]
	}
	object := key.leaf && isStringNode(key)
	open, close := byte('['), byte(']')
	if object {
		open, close = '{', '}'
	}
	out = append(out, open)
	e, err := w.peek(kv)
	if err != nil {
		return out, err
	}
	if int(e.def) < kv.maxDef {
		return append(out, close), w.skip(kv)
	}
	for i := 0; ; i++ {
		if i > 0 {
			out = append(out, ',')
		}
		if !object {
			out = append(out, '[')
		}
		if out, err = w.value(key, out); err != nil {
			return out, err
		}
		if object {
			out = append(out, ':')
		} else {
			out = append(out, ',')
		}
		if val == nil {
			out = append(out, "null"...)
		} else if out, err = w.value(val, out); err != nil {
			return out, err
		}
		for _, extra := range kv.Children[min(2, len(kv.Children)):] { // malformed: consume
			if _, err = w.value(extra, nil); err != nil {
				return out, err
			}
		}
		if !object {
			out = append(out, ']')
		}
		if !w.more(kv) {
			break
		}
	}
	return append(out, close), nil
}

// npyType returns the numpy descr of a numeric leaf, or "".
func npyType(n *Node) string {
	if !n.leaf {
		return ""
	}
	if _, dec := decimalScale(n); dec {
		return ""
	}
	switch n.phys {
	case format.Boolean:
		return "|b1"
	case format.Float:
		return "<f4"
	case format.Double:
		return "<f8"
	case format.Int32, format.Int64:
		width := 32
		if n.phys == format.Int64 {
			width = 64
		}
		kind := "i"
		if u := unsignedWidth(n); u > 0 {
			kind, width = "u", u
		} else if t, ok := n.logical.(*format.IntType); ok {
			width = int(t.BitWidth)
		}
		if width != 8 && width != 16 && width != 32 && width != 64 {
			return ""
		}
		if width == 8 {
			return "|" + kind + "1"
		}
		return "<" + kind + strconv.Itoa(width/8)
	}
	if isFloat16(n) {
		return "<f2"
	}
	return ""
}

// npyLeaf returns the numeric leaf of a column of (nested) lists of numbers and the number
// of list levels, or an error saying why it is not one.
func npyLeaf(n *Node) (*Node, int, error) {
	dims := 0
	cur := n
	for !cur.leaf {
		rep, elem := listElement(cur)
		if rep == nil || !cur.isList() {
			return nil, 0, fmt.Errorf("%w: %q is %s, not a list of numbers", ErrColumn, n.Path, n.Type())
		}
		dims++
		if elem == rep && !rep.leaf {
			return nil, 0, fmt.Errorf("%w: %q is a list of structs, not of numbers", ErrColumn, n.Path)
		}
		cur = elem
		if cur.leaf && cur.Repeated() && cur != rep {
			return nil, 0, fmt.Errorf("%w: %q is not a list of numbers", ErrColumn, n.Path)
		}
		if cur.leaf {
			break
		}
	}
	if n.leaf && n.Repeated() {
		dims = 1
	}
	if dims == 0 {
		return nil, 0, fmt.Errorf("%w: %q is %s, not a list of numbers", ErrColumn, n.Path, n.Type())
	}
	if npyType(cur) == "" {
		return nil, 0, fmt.Errorf("%w: %q is a list of %s, not of numbers", ErrColumn, n.Path, cur.Type())
	}
	return cur, dims, nil
}

// npy assembles one row of a list column as a .npy file (C order), or returns nil for a null
// list. Lists nested d deep must be rectangular.
func (w *walker) npy(n, leaf *Node, dims int) ([]byte, error) {
	l := leaf.leafIndex
	ents := w.data[l].ents[w.pos[l]:w.end[l]]
	w.pos[l] = w.end[l]
	if len(ents) == 0 {
		return nil, errLevels(n)
	}
	if n.Optional() && int(ents[0].def) < n.maxDef {
		if len(ents) != 1 {
			return nil, errLevels(n)
		}
		return nil, nil // null list: no value
	}
	descr := npyType(leaf)
	base := leaf.maxRep - dims // the repetition level of the row
	shape := make([]int, dims)
	known := make([]bool, dims)
	cnt := make([]int, dims+1) // cnt[k]: elements so far in the open list of level k (1-based)
	closeLevel := func(k int) error {
		if !known[k-1] {
			shape[k-1], known[k-1] = cnt[k], true
		} else if shape[k-1] != cnt[k] {
			return fmt.Errorf("%w: %q is a ragged array (lengths %d and %d at depth %d), not an ndarray", ErrValue, n.Path, shape[k-1], cnt[k], k)
		}
		return nil
	}
	var data []byte
	if len(ents) == 1 && ents[0].def < uint8(leaf.maxDef) {
		// One entry that is not a value: an empty outer list, or a list holding a null.
		if dims == 1 && isEmptyList(n, leaf, ents[0].def) {
			return npyFile(descr, []int{0}, nil), nil
		}
		return nil, fmt.Errorf("%w: %q holds a null or an empty inner list; an ndarray needs numbers", ErrValue, n.Path)
	}
	for i := range ents {
		e := &ents[i]
		if e.null || e.def != uint8(leaf.maxDef) {
			return nil, fmt.Errorf("%w: %q holds a null or an empty inner list; an ndarray needs numbers", ErrValue, n.Path)
		}
		rr := int(e.rep) - base
		if i == 0 {
			if rr != 0 {
				return nil, errLevels(n)
			}
			for k := 1; k < dims; k++ {
				cnt[k] = 1
			}
			cnt[dims] = 1
		} else {
			if rr < 1 || rr > dims {
				return nil, errLevels(n)
			}
			for k := dims; k > rr; k-- {
				if err := closeLevel(k); err != nil {
					return nil, err
				}
			}
			cnt[rr]++
			for k := rr + 1; k <= dims; k++ {
				cnt[k] = 1
			}
		}
		data = appendNumber(data, leaf, e, w.arena, descr)
		if len(data) > maxJSON {
			return nil, fmt.Errorf("%w: the array of %q exceeds %d bytes", ErrValue, n.Path, maxJSON)
		}
	}
	for k := dims; k >= 1; k-- {
		if err := closeLevel(k); err != nil {
			return nil, err
		}
	}
	return npyFile(descr, shape, data), nil
}

// isEmptyList reports whether definition level def means "the outer list exists and is empty".
func isEmptyList(n, leaf *Node, def uint8) bool {
	rep, _ := listElement(n)
	if rep == nil {
		return false
	}
	return int(def) >= rep.maxDef-1 && int(def) < rep.maxDef
}

func appendNumber(b []byte, leaf *Node, e *entry, arena []byte, descr string) []byte {
	le := binary.LittleEndian
	switch descr[1:] {
	case "b1", "i1", "u1":
		return append(b, byte(e.bits))
	case "i2", "u2":
		return le.AppendUint16(b, uint16(e.bits))
	case "i4", "u4":
		return le.AppendUint32(b, uint32(e.bits))
	case "i8", "u8":
		return le.AppendUint64(b, e.bits)
	case "f4":
		return le.AppendUint32(b, uint32(e.bits))
	case "f8":
		return le.AppendUint64(b, e.bits)
	case "f2":
		return append(b, e.bytesOf(arena)...)
	}
	_ = math.MaxInt
	return b
}

// npyFile returns a .npy (format 1.0) file of a C-order array.
func npyFile(descr string, shape []int, data []byte) []byte {
	dims := make([]uint64, len(shape))
	for i, d := range shape {
		dims[i] = uint64(d)
	}
	return append(mldf.AppendNPYHeader(make([]byte, 0, 128+len(data)), descr, dims), data...)
}
