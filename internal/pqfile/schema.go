package pqfile

import (
	"fmt"
	"strings"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mldf/convert/internal/quote"
)

// checkSchema checks what a corrupt footer's schema elements could get wrong that the
// library builds its column tree from without a word: names, repetition types, physical
// types and lengths of the leaves, child counts that overrun the list or leave elements
// after the root's children, a group that would also be a leaf. It builds nothing: the
// library's tree (Root) is the one schema tree.
func checkSchema(elems []format.SchemaElement) error {
	if len(elems) == 0 {
		return fmt.Errorf("%w: the schema is empty", ErrCorrupt)
	}
	type group struct {
		left int32
		path string
	}
	var stack []group
	for i := range elems {
		e := &elems[i]
		children, hasChildren := e.NumChildren.Get()
		if i == 0 {
			if e.Type.Valid {
				return fmt.Errorf("%w: the schema's root has a physical type", ErrCorrupt)
			}
			if children < 0 || int(children) > len(elems)-1 {
				return fmt.Errorf("%w: the root claims %d children, the schema has %d elements left", ErrCorrupt, children, len(elems)-1)
			}
			if children > 0 {
				stack = append(stack, group{left: children})
			}
			continue
		}
		if len(stack) == 0 {
			return fmt.Errorf("%w: %d schema elements follow the root's children", ErrCorrupt, len(elems)-i)
		}
		top := &stack[len(stack)-1]
		top.left--
		if e.Name == "" {
			return fmt.Errorf("%w: a schema element has no name", ErrCorrupt)
		}
		path := e.Name
		if top.path != "" {
			path = top.path + "." + e.Name
		}
		if rep, ok := e.RepetitionType.Get(); ok && rep != format.Required && rep != format.Optional && rep != format.Repeated {
			return fmt.Errorf("%w: column %s has repetition type %d", ErrCorrupt, quote.Q(path), rep)
		}
		if hasChildren && children > 0 {
			if int(children) > len(elems)-1-i {
				return fmt.Errorf("%w: group %s claims %d children, the schema has %d elements left", ErrCorrupt, quote.Q(path), children, len(elems)-1-i)
			}
			if e.Type.Valid {
				return fmt.Errorf("%w: group %s has a physical type", ErrCorrupt, quote.Q(path))
			}
			stack = append(stack, group{left: children, path: path})
			continue
		}
		t, ok := e.Type.Get()
		if !ok {
			return fmt.Errorf("%w: column %s has no type", ErrCorrupt, quote.Q(path))
		}
		if t < format.Boolean || t > format.FixedLenByteArray {
			return fmt.Errorf("%w: column %s has physical type %d", ErrCorrupt, quote.Q(path), t)
		}
		if l, _ := e.TypeLength.Get(); t == format.FixedLenByteArray && l <= 0 {
			return fmt.Errorf("%w: column %s is FIXED_LEN_BYTE_ARRAY of length %d", ErrCorrupt, quote.Q(path), l)
		}
		for len(stack) > 0 && stack[len(stack)-1].left <= 0 {
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("%w: the schema ends inside a group", ErrCorrupt)
	}
	return nil
}

// Root returns the file's schema tree: the library's own, in which a leaf's Index is its
// column's position in every row group.
func (f *File) Root() *pq.Column { return f.first.PF.Root() }

// Leaves returns what the page checks need of the file's leaf columns, by column index.
func (f *File) Leaves() []Leaf {
	var out []Leaf
	var walk func(c *pq.Column)
	walk = func(c *pq.Column) {
		if c.Leaf() {
			out = append(out, LeafOf(c))
			return
		}
		for _, k := range c.Columns() {
			walk(k)
		}
	}
	walk(f.Root())
	return out
}

// LeafOf describes a leaf column of a file's schema tree (Root) for the page checks.
func LeafOf(c *pq.Column) Leaf {
	return Leaf{Path: strings.Join(c.Path(), "."), MaxDef: c.MaxDefinitionLevel(), MaxRep: c.MaxRepetitionLevel(),
		Type: format.Type(c.Type().Kind()), TypeLen: int32(c.Type().Length())}
}
