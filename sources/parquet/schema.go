package parquet

import (
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mldf/convert/internal/pqfile"
)

// maxDepth bounds the nesting of a schema (a corrupt footer could describe any tree).
const maxDepth = 64

// indexChildren is the number of children from which a group indexes them by name.
const indexChildren = 16

// Node is one element of a file's schema: a group (struct, list, map) or a leaf column.
type Node struct {
	Name     string
	Path     string // dotted path from the root, e.g. "image.bytes"
	Children []*Node
	Parent   *Node
	byName   map[string]*Node // the children by name, for a group of many

	repetition format.FieldRepetitionType
	leaf       bool
	phys       format.Type
	typeLen    int32
	conv       deprecated.ConvertedType
	hasConv    bool
	logical    format.LogicalTypeValue
	scale      int32

	leafIndex      int // the column index of a leaf
	firstLeaf      int // leaves under this node are [firstLeaf, endLeaf)
	endLeaf        int
	maxDef, maxRep int // levels of this node (counting itself)
}

// pqLeaf describes a leaf for the page checks.
func (n *Node) pqLeaf() pqfile.Leaf {
	return pqfile.Leaf{Path: n.Path, MaxDef: n.maxDef, MaxRep: n.maxRep, Type: n.phys, TypeLen: n.typeLen}
}

// Leaf reports whether n is a primitive column.
func (n *Node) Leaf() bool { return n.leaf }

// Repeated reports whether n itself is repeated.
func (n *Node) Repeated() bool { return n.repetition == format.Repeated }

// Optional reports whether n itself is optional.
func (n *Node) Optional() bool { return n.repetition == format.Optional }

// Child returns n's child called name, or nil.
func (n *Node) Child(name string) *Node {
	if n.byName != nil {
		return n.byName[name]
	}
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// inRepeated reports whether n or one of its ancestors is repeated.
func (n *Node) inRepeated() bool { return n.maxRep > 0 }

// isList reports whether n is a group annotated LIST (or a MAP), or itself repeated.
func (n *Node) isList() bool {
	if n.Repeated() {
		return true
	}
	if n.leaf {
		return false
	}
	if _, ok := n.logical.(*format.ListType); ok {
		return true
	}
	return n.hasConv && n.conv == deprecated.List
}

// isMap reports whether n is a group annotated MAP or MAP_KEY_VALUE.
func (n *Node) isMap() bool {
	if n.leaf {
		return false
	}
	if _, ok := n.logical.(*format.MapType); ok {
		return true
	}
	return n.hasConv && (n.conv == deprecated.Map || n.conv == deprecated.MapKeyValue)
}

// Type describes n for messages: "BYTE_ARRAY (STRING)", "group (LIST)", "group".
func (n *Node) Type() string {
	var s string
	if n.leaf {
		s = n.phys.String()
		if n.phys == format.FixedLenByteArray {
			s = fmt.Sprintf("FIXED_LEN_BYTE_ARRAY(%d)", n.typeLen)
		}
	} else {
		s = "group"
	}
	ann := ""
	if n.logical != nil {
		ann = n.logical.String()
	} else if n.hasConv {
		ann = convertedName(n.conv)
	}
	if ann != "" {
		s += " (" + ann + ")"
	}
	if n.Repeated() {
		s = "repeated " + s
	} else if n.Optional() {
		s = "optional " + s
	}
	return s
}

// Schema is a file's schema as a tree, with the levels of every node.
type Schema struct {
	Root   *Node
	Leaves []*Node // by column index
}

// Lookup returns the node at a dotted path ("image.bytes"), or nil. A top-level column whose
// own name contains a dot is found too.
func (s *Schema) Lookup(path string) *Node {
	return lookup(s.Root, path)
}

func lookup(n *Node, path string) *Node {
	if path == "" {
		return n
	}
	if c := n.Child(path); c != nil {
		return c
	}
	for i := 0; i < len(path); i++ {
		if path[i] == '.' {
			if c := n.Child(path[:i]); c != nil {
				if found := lookup(c, path[i+1:]); found != nil {
					return found
				}
			}
		}
	}
	return nil
}

// buildSchema turns the flattened schema elements of a footer into a tree, checking what a
// corrupt footer could get wrong: child counts, leaf types, depth, names.
func buildSchema(elems []format.SchemaElement) (*Schema, error) {
	if len(elems) == 0 {
		return nil, fmt.Errorf("%w: the schema is empty", ErrCorrupt)
	}
	s := &Schema{}
	pos := 0
	var build func(parent *Node, depth int) (*Node, error)
	build = func(parent *Node, depth int) (*Node, error) {
		if depth > maxDepth {
			return nil, fmt.Errorf("%w: schema nested deeper than %d", ErrCorrupt, maxDepth)
		}
		if pos >= len(elems) {
			return nil, fmt.Errorf("%w: schema ends inside a group", ErrCorrupt)
		}
		e := &elems[pos]
		pos++
		n := &Node{Name: e.Name, Parent: parent, logical: e.LogicalType.Value}
		if parent != nil {
			if e.Name == "" {
				return nil, fmt.Errorf("%w: a schema element has no name", ErrCorrupt)
			}
			n.Path = e.Name
			if parent.Path != "" {
				n.Path = parent.Path + "." + e.Name
			}
			rep, ok := e.RepetitionType.Get()
			if !ok {
				rep = format.Optional
			}
			if rep != format.Required && rep != format.Optional && rep != format.Repeated {
				return nil, fmt.Errorf("%w: column %q has repetition type %d", ErrCorrupt, n.Path, rep)
			}
			n.repetition = rep
			n.maxDef, n.maxRep = parent.maxDef, parent.maxRep
			if rep != format.Required {
				n.maxDef++
			}
			if rep == format.Repeated {
				n.maxRep++
			}
		}
		if ct, ok := e.ConvertedType.Get(); ok {
			n.conv, n.hasConv = ct, true
		}
		n.scale = e.Scale.V
		children, hasChildren := e.NumChildren.Get()
		if parent == nil && !hasChildren {
			hasChildren, children = true, 0
		}
		if hasChildren && (children > 0 || parent == nil) {
			if children < 0 || int(children) > len(elems)-pos {
				return nil, fmt.Errorf("%w: group %q claims %d children, the schema has %d elements left", ErrCorrupt, n.Path, children, len(elems)-pos)
			}
			n.firstLeaf = len(s.Leaves)
			for range children {
				c, err := build(n, depth+1)
				if err != nil {
					return nil, err
				}
				n.Children = append(n.Children, c)
			}
			n.endLeaf = len(s.Leaves)
			if len(n.Children) > indexChildren {
				// A wide table: looking its columns up one by one must not be quadratic.
				n.byName = make(map[string]*Node, len(n.Children))
				for i := len(n.Children) - 1; i >= 0; i-- { // the first of a name wins
					n.byName[n.Children[i].Name] = n.Children[i]
				}
			}
			if parent != nil && n.endLeaf == n.firstLeaf {
				return nil, fmt.Errorf("%w: group %q has no columns", ErrUnsupported, n.Path)
			}
			return n, nil
		}
		t, ok := e.Type.Get()
		if !ok {
			return nil, fmt.Errorf("%w: column %q has no type", ErrCorrupt, n.Path)
		}
		if t < format.Boolean || t > format.FixedLenByteArray {
			return nil, fmt.Errorf("%w: column %q has physical type %d", ErrCorrupt, n.Path, t)
		}
		if t == format.FixedLenByteArray {
			l, _ := e.TypeLength.Get()
			if l <= 0 {
				return nil, fmt.Errorf("%w: column %q is FIXED_LEN_BYTE_ARRAY of length %d", ErrCorrupt, n.Path, l)
			}
			n.typeLen = l
		}
		n.leaf, n.phys = true, t
		n.leafIndex = len(s.Leaves)
		n.firstLeaf, n.endLeaf = n.leafIndex, n.leafIndex+1
		s.Leaves = append(s.Leaves, n)
		return n, nil
	}
	root, err := build(nil, 0)
	if err != nil {
		return nil, err
	}
	if pos != len(elems) {
		return nil, fmt.Errorf("%w: %d schema elements follow the root's children", ErrCorrupt, len(elems)-pos)
	}
	s.Root = root
	return s, nil
}

// String lists the top-level columns and their types, for messages.
func (s *Schema) String() string {
	var parts []string
	for _, c := range s.Root.Children {
		parts = append(parts, c.Name+" "+c.Type())
	}
	return strings.Join(parts, ", ")
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
