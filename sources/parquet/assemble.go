package parquet

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	pq "github.com/parquet-go/parquet-go"
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
func errLevels(n *pq.Column) error {
	return fmt.Errorf("%w: the repetition and definition levels of %q do not fit its schema", ErrCorrupt, pathOf(n))
}

// walker assembles one row of a nested column from its leaves' entries (the record assembly
// of the Dremel paper): each leaf has a cursor; a missing subtree holds exactly one entry in
// every leaf below it.
type walker struct {
	s     *Schema
	data  []*leafData // by leaf index
	pos   []int
	end   []int
	arena []byte
}

func (w *walker) start(n *pq.Column, row int) {
	first, end := leafRange(n)
	for l := first; l < end; l++ {
		w.pos[l], w.end[l] = w.data[l].rowRange(row)
	}
}

// done checks that every leaf of n was consumed exactly.
func (w *walker) done(n *pq.Column) error {
	first, end := leafRange(n)
	for l := first; l < end; l++ {
		if w.pos[l] != w.end[l] {
			return errLevels(n)
		}
	}
	return nil
}

func (w *walker) peek(n *pq.Column) (*entry, error) {
	l, _ := leafRange(n)
	if w.pos[l] >= w.end[l] {
		return nil, errLevels(n)
	}
	return &w.data[l].ents[w.pos[l]], nil
}

// more reports whether the next entry of n's first leaf repeats at n's level.
func (w *walker) more(n *pq.Column) bool {
	l, _ := leafRange(n)
	return w.pos[l] < w.end[l] && int(w.data[l].ents[w.pos[l]].rep) == n.MaxRepetitionLevel()
}

func (w *walker) skip(n *pq.Column) error {
	first, end := leafRange(n)
	for l := first; l < end; l++ {
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
func (w *walker) value(n *pq.Column, out []byte) ([]byte, error) {
	if len(out) > maxJSON {
		return out, fmt.Errorf("%w: the JSON of %q exceeds %d bytes", ErrValue, pathOf(n), maxJSON)
	}
	if n.Repeated() { // a repeated field outside a LIST group: a JSON array
		return w.list(n, n, out)
	}
	e, err := w.peek(n)
	if err != nil {
		return out, err
	}
	if int(e.def) < n.MaxDefinitionLevel() {
		if !n.Optional() {
			return out, errLevels(n)
		}
		return append(out, "null"...), w.skip(n)
	}
	return w.present(n, out)
}

// present appends n, known to be defined at the cursors.
func (w *walker) present(n *pq.Column, out []byte) ([]byte, error) {
	switch {
	case n.Leaf():
		e, err := w.peek(n)
		if err != nil {
			return out, err
		}
		if e.null {
			return out, errLevels(n)
		}
		w.pos[n.Index()]++
		return w.s.appendJSONScalar(out, n, e, w.arena)
	case w.s.isMap(n) && !n.Repeated():
		if kv := mapEntries(n); kv != nil {
			return w.mapValue(kv, out)
		}
	case w.s.isList(n) && !n.Repeated():
		if rep, elem := listElement(n); rep != nil {
			return w.list(rep, elem, out)
		}
	}
	out = append(out, '{')
	for i, c := range n.Columns() {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendJSONString(out, []byte(c.Name()))
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
func listElement(n *pq.Column) (rep, elem *pq.Column) {
	if n.Repeated() {
		return n, n
	}
	if len(n.Columns()) != 1 || !n.Columns()[0].Repeated() {
		return nil, nil
	}
	rep = n.Columns()[0]
	if rep.Leaf() || len(rep.Columns()) != 1 || rep.Name() == "array" || rep.Name() == n.Name()+"_tuple" {
		return rep, rep
	}
	return rep, rep.Columns()[0]
}

// mapEntries returns the repeated key-value group of a MAP, or nil.
func mapEntries(n *pq.Column) *pq.Column {
	if len(n.Columns()) != 1 || !n.Columns()[0].Repeated() || n.Columns()[0].Leaf() || len(n.Columns()[0].Columns()) == 0 {
		return nil
	}
	return n.Columns()[0]
}

// list appends the repetitions of rep at the cursors as a JSON array of elem.
func (w *walker) list(rep, elem *pq.Column, out []byte) ([]byte, error) {
	out = append(out, '[')
	e, err := w.peek(rep)
	if err != nil {
		return out, err
	}
	if int(e.def) < rep.MaxDefinitionLevel() { // no element
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
			return out, fmt.Errorf("%w: the JSON of %q exceeds %d bytes", ErrValue, pathOf(rep), maxJSON)
		}
	}
	return append(out, ']'), nil
}

// mapValue appends a map as a JSON object when its keys are text, else as [key, value] pairs.
func (w *walker) mapValue(kv *pq.Column, out []byte) ([]byte, error) {
	key := kv.Columns()[0]
	var val *pq.Column
	if len(kv.Columns()) > 1 {
		val = kv.Columns()[1]
	}
	object := key.Leaf() && w.s.isStringNode(key)
	open, close := byte('['), byte(']')
	if object {
		open, close = '{', '}'
	}
	out = append(out, open)
	e, err := w.peek(kv)
	if err != nil {
		return out, err
	}
	if int(e.def) < kv.MaxDefinitionLevel() {
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
		for _, extra := range kv.Columns()[min(2, len(kv.Columns())):] { // malformed: consume
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
func (s *Schema) npyType(n *pq.Column) string {
	if !n.Leaf() {
		return ""
	}
	if _, dec := s.decimalScale(n); dec {
		return ""
	}
	switch s.phys(n) {
	case format.Boolean:
		return "|b1"
	case format.Float:
		return "<f4"
	case format.Double:
		return "<f8"
	case format.Int32, format.Int64:
		width := 32
		if s.phys(n) == format.Int64 {
			width = 64
		}
		kind := "i"
		if u := s.unsignedWidth(n); u > 0 {
			kind, width = "u", u
		} else if t, ok := s.logical(n).(*format.IntType); ok {
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
	if s.isFloat16(n) {
		return "<f2"
	}
	return ""
}

// npyLeaf returns the numeric leaf of a column of (nested) lists of numbers and the number
// of list levels, or an error saying why it is not one.
func (s *Schema) npyLeaf(n *pq.Column) (*pq.Column, int, error) {
	dims := 0
	cur := n
	for !cur.Leaf() {
		rep, elem := listElement(cur)
		if rep == nil || !s.isList(cur) {
			return nil, 0, fmt.Errorf("%w: %q is %s, not a list of numbers", ErrColumn, pathOf(n), s.Describe(n))
		}
		dims++
		if elem == rep && !rep.Leaf() {
			return nil, 0, fmt.Errorf("%w: %q is a list of structs, not of numbers", ErrColumn, pathOf(n))
		}
		cur = elem
		if cur.Leaf() && cur.Repeated() && cur != rep {
			return nil, 0, fmt.Errorf("%w: %q is not a list of numbers", ErrColumn, pathOf(n))
		}
		if cur.Leaf() {
			break
		}
	}
	if n.Leaf() && n.Repeated() {
		dims = 1
	}
	if dims == 0 {
		return nil, 0, fmt.Errorf("%w: %q is %s, not a list of numbers", ErrColumn, pathOf(n), s.Describe(n))
	}
	if s.npyType(cur) == "" {
		return nil, 0, fmt.Errorf("%w: %q is a list of %s, not of numbers", ErrColumn, pathOf(n), s.Describe(cur))
	}
	return cur, dims, nil
}

// npy assembles one row of a list column as a .npy file (C order), or returns nil for a null
// list. Lists nested d deep must be rectangular.
func (w *walker) npy(n, leaf *pq.Column, dims int) ([]byte, error) {
	l := leaf.Index()
	ents := w.data[l].ents[w.pos[l]:w.end[l]]
	w.pos[l] = w.end[l]
	if len(ents) == 0 {
		return nil, errLevels(n)
	}
	if n.Optional() && int(ents[0].def) < n.MaxDefinitionLevel() {
		if len(ents) != 1 {
			return nil, errLevels(n)
		}
		return nil, nil // null list: no value
	}
	descr := w.s.npyType(leaf)
	base := leaf.MaxRepetitionLevel() - dims // the repetition level of the row
	shape := make([]int, dims)
	known := make([]bool, dims)
	cnt := make([]int, dims+1) // cnt[k]: elements so far in the open list of level k (1-based)
	closeLevel := func(k int) error {
		if !known[k-1] {
			shape[k-1], known[k-1] = cnt[k], true
		} else if shape[k-1] != cnt[k] {
			return fmt.Errorf("%w: %q is a ragged array (lengths %d and %d at depth %d), not an ndarray", ErrValue, pathOf(n), shape[k-1], cnt[k], k)
		}
		return nil
	}
	var data []byte
	if len(ents) == 1 && ents[0].def < uint8(leaf.MaxDefinitionLevel()) {
		// One entry that is not a value: an empty outer list, or a list holding a null.
		if dims == 1 && isEmptyList(n, leaf, ents[0].def) {
			return npyFile(descr, []int{0}, nil), nil
		}
		return nil, fmt.Errorf("%w: %q holds a null or an empty inner list; an ndarray needs numbers", ErrValue, pathOf(n))
	}
	for i := range ents {
		e := &ents[i]
		if e.null || e.def != uint8(leaf.MaxDefinitionLevel()) {
			return nil, fmt.Errorf("%w: %q holds a null or an empty inner list; an ndarray needs numbers", ErrValue, pathOf(n))
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
			return nil, fmt.Errorf("%w: the array of %q exceeds %d bytes", ErrValue, pathOf(n), maxJSON)
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
func isEmptyList(n, leaf *pq.Column, def uint8) bool {
	rep, _ := listElement(n)
	if rep == nil {
		return false
	}
	return int(def) >= rep.MaxDefinitionLevel()-1 && int(def) < rep.MaxDefinitionLevel()
}

func appendNumber(b []byte, leaf *pq.Column, e *entry, arena []byte, descr string) []byte {
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
