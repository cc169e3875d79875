package parquet

import (
	"fmt"
	"strings"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mldf/convert/internal/pqfile"
	"github.com/mldf/convert/internal/quote"
)

// indexChildren is the number of top-level columns from which Lookup indexes them by name.
const indexChildren = 16

// Schema is a file's schema: parquet-go's own column tree (its File.Root()), whose leaves'
// Index is their column's position in a row group, and whose levels are those the library
// decodes the pages with. Beside it are only indexes into it: the leaves by column index,
// each column's footer element (its annotations as written: parquet-go's types drop some,
// FLOAT16 and MAP_KEY_VALUE among them), and, for a wide table, the top-level columns by name.
type Schema struct {
	// Root is the tree's root; its Columns are the table's columns.
	Root      *pq.Column
	leaves    []*pq.Column                         // by column index
	leafElem  []*format.SchemaElement              // by column index
	groupElem map[*pq.Column]*format.SchemaElement // the root and the other groups
	byName    map[string]*pq.Column
}

// newSchema takes the schema tree of a file whose footer pqfile checked, with the footer's
// schema elements it was built from (in its order: depth first).
func newSchema(root *pq.Column, elems []format.SchemaElement) (*Schema, error) {
	s := &Schema{Root: root, groupElem: map[*pq.Column]*format.SchemaElement{}}
	pos := 0
	var walk func(c *pq.Column, depth int) error
	walk = func(c *pq.Column, depth int) error {
		if depth > pqfile.MaxSchemaDepth {
			return fmt.Errorf("%w: schema nested deeper than %d", ErrCorrupt, pqfile.MaxSchemaDepth)
		}
		if pos >= len(elems) || elems[pos].Name != c.Name() {
			return fmt.Errorf("%w: the library's schema tree differs from the footer's at column %s", ErrCorrupt, quote.Q(pathOf(c)))
		}
		e := &elems[pos]
		pos++
		if c.Leaf() {
			if c.Index() != len(s.leaves) {
				return fmt.Errorf("%w: column %s has index %d, not %d", ErrCorrupt, quote.Q(pathOf(c)), c.Index(), len(s.leaves))
			}
			s.leaves = append(s.leaves, c)
			s.leafElem = append(s.leafElem, e)
			return nil
		}
		s.groupElem[c] = e
		first := len(s.leaves)
		for _, k := range c.Columns() {
			if err := walk(k, depth+1); err != nil {
				return err
			}
		}
		if c != root && len(s.leaves) == first {
			return fmt.Errorf("%w: group %s has no columns", ErrUnsupported, quote.Q(pathOf(c)))
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return nil, err
	}
	if pos != len(elems) {
		return nil, fmt.Errorf("%w: %d schema elements follow the root's children", ErrCorrupt, len(elems)-pos)
	}
	if cols := root.Columns(); len(cols) > indexChildren {
		// A wide table: looking its columns up one by one must not be quadratic.
		s.byName = make(map[string]*pq.Column, len(cols))
		for i := len(cols) - 1; i >= 0; i-- { // the first of a name wins
			s.byName[cols[i].Name()] = cols[i]
		}
	}
	return s, nil
}

// elem returns the footer's schema element of a column of the tree.
func (s *Schema) elem(n *pq.Column) *format.SchemaElement {
	if n.Leaf() {
		return s.leafElem[n.Index()]
	}
	return s.groupElem[n]
}

// Lookup returns the column at a dotted path ("image.bytes"), or nil. A top-level column
// whose own name contains a dot is found too.
func (s *Schema) Lookup(path string) *pq.Column {
	return s.lookup(s.Root, path)
}

func (s *Schema) lookup(n *pq.Column, path string) *pq.Column {
	if path == "" {
		return n
	}
	if c := s.child(n, path); c != nil {
		return c
	}
	for i := 0; i < len(path); i++ {
		if path[i] == '.' {
			if c := s.child(n, path[:i]); c != nil {
				if found := s.lookup(c, path[i+1:]); found != nil {
					return found
				}
			}
		}
	}
	return nil
}

// child returns n's child called name, or nil.
func (s *Schema) child(n *pq.Column, name string) *pq.Column {
	if n == s.Root && s.byName != nil {
		return s.byName[name]
	}
	return n.Column(name)
}

// String lists the top-level columns and their types, for messages.
func (s *Schema) String() string {
	var parts []string
	for _, c := range s.Root.Columns() {
		parts = append(parts, c.Name()+" "+s.Describe(c))
	}
	return strings.Join(parts, ", ")
}

// pathOf returns a column's dotted path from the root, e.g. "image.bytes".
func pathOf(n *pq.Column) string { return strings.Join(n.Path(), ".") }

// leafRange returns the column indexes of the leaves under n: [first, end).
func leafRange(n *pq.Column) (first, end int) {
	lo, hi := n, n
	for !lo.Leaf() {
		cols := lo.Columns()
		if len(cols) == 0 {
			return 0, 0
		}
		lo = cols[0]
	}
	for !hi.Leaf() {
		cols := hi.Columns()
		hi = cols[len(cols)-1]
	}
	return lo.Index(), hi.Index() + 1
}

// inRepeated reports whether n or one of its ancestors is repeated.
func inRepeated(n *pq.Column) bool { return n.MaxRepetitionLevel() > 0 }

// parentInRepeated reports whether one of n's ancestors is repeated.
func parentInRepeated(n *pq.Column) bool {
	rep := n.MaxRepetitionLevel()
	if n.Repeated() {
		rep--
	}
	return rep > 0
}

// logical returns n's logical type annotation, or nil.
func (s *Schema) logical(n *pq.Column) format.LogicalTypeValue { return s.elem(n).LogicalType.Value }

// conv returns n's converted type annotation, and whether it has one.
func (s *Schema) conv(n *pq.Column) (deprecated.ConvertedType, bool) {
	return s.elem(n).ConvertedType.Get()
}

// phys returns a leaf's physical type.
func (s *Schema) phys(n *pq.Column) format.Type { return s.elem(n).Type.V }

// typeLen returns the length of a FIXED_LEN_BYTE_ARRAY leaf.
func (s *Schema) typeLen(n *pq.Column) int32 { return s.elem(n).TypeLength.V }

// isList reports whether n is a group annotated LIST (or a MAP), or itself repeated.
func (s *Schema) isList(n *pq.Column) bool {
	if n.Repeated() {
		return true
	}
	if n.Leaf() {
		return false
	}
	if _, ok := s.logical(n).(*format.ListType); ok {
		return true
	}
	c, ok := s.conv(n)
	return ok && c == deprecated.List
}

// isMap reports whether n is a group annotated MAP or MAP_KEY_VALUE.
func (s *Schema) isMap(n *pq.Column) bool {
	if n.Leaf() {
		return false
	}
	if _, ok := s.logical(n).(*format.MapType); ok {
		return true
	}
	c, ok := s.conv(n)
	return ok && (c == deprecated.Map || c == deprecated.MapKeyValue)
}

// Describe describes a column for messages: "BYTE_ARRAY (STRING)", "optional group (LIST)".
func (s *Schema) Describe(n *pq.Column) string {
	var d string
	if n.Leaf() {
		d = s.phys(n).String()
		if s.phys(n) == format.FixedLenByteArray {
			d = fmt.Sprintf("FIXED_LEN_BYTE_ARRAY(%d)", s.typeLen(n))
		}
	} else {
		d = "group"
	}
	ann := ""
	if lt := s.logical(n); lt != nil {
		ann = lt.String()
	} else if c, ok := s.conv(n); ok {
		ann = convertedName(c)
	}
	if ann != "" {
		d += " (" + ann + ")"
	}
	if n.Repeated() {
		d = "repeated " + d
	} else if n.Optional() {
		d = "optional " + d
	}
	return d
}

var convertedNames = [...]string{"UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL", "DATE", "TIME_MILLIS",
	"TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32", "UINT_64", "INT_8",
	"INT_16", "INT_32", "INT_64", "JSON", "BSON", "INTERVAL"}

func convertedName(c deprecated.ConvertedType) string {
	if c >= 0 && int(c) < len(convertedNames) {
		return convertedNames[c]
	}
	return fmt.Sprintf("converted type %d", c)
}
