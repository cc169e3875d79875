package appendfile

import (
	"fmt"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/quote"
)

// argsOffset is where a field descriptor's arguments start (docs/FORMAT.md §3).
const argsOffset = 76

// classField is one class-label field whose names both files hold.
type classField struct {
	field int
	off   int      // the offset of its value in a row
	names []string // the merged names: the base's, then the new ones in the delta's order
	remap []int64  // the delta's class id → the merged id
	had   int      // the base's number of classes
}

// block is a class-names block of the result and where it goes.
type block struct {
	at int64
	b  []byte
}

// mergeClasses merges the class names of every class-label field whose names both files hold
// (docs/FORMAT.md §14): an existing class keeps its id, a class new to the base gets the next
// id, in the order of the delta's names. It returns the fields and the result's descriptors
// and preamble end (where the class-names blocks end; the data region starts on the next
// page boundary).
func mergeClasses(b, a *file) (cls []classField, descs []byte, blocks []block, end int64, err error) {
	descs = append([]byte(nil), b.descs...)
	end = int64(b.hdr.FieldDescPtr) + int64(len(descs))
	lay := b.r.Layout()
	for k, fd := range b.r.Fields() {
		bc, ok := mldf.ParseClassLabelArgs(fd.Arguments)
		if !ok || fd.Type != mldf.TypeInt || bc.NamesPtr == 0 {
			continue
		}
		bn, err := b.r.ClassNames(k)
		if err != nil {
			return nil, nil, nil, 0, fmt.Errorf("append: %s: %w", b.path, err)
		}
		an, err := a.r.ClassNames(k)
		if err != nil {
			return nil, nil, nil, 0, fmt.Errorf("append: %s: %w", a.path, err)
		}
		c := classField{field: k, off: lay.Offsets[k], names: append([]string(nil), bn...), had: len(bn)}
		id := make(map[string]int64, len(bn))
		for i, n := range bn {
			id[n] = int64(i)
		}
		for _, n := range an {
			j, ok := id[n]
			if !ok {
				j = int64(len(c.names))
				id[n] = j
				c.names = append(c.names, n)
			}
			c.remap = append(c.remap, j)
		}
		if err := mldf.CheckClassNames(c.names); err != nil {
			return nil, nil, nil, 0, fmt.Errorf("append: field %s: the merged class names of %s and %s: %w", quote.Q(fd.Name), b.path, a.path, err)
		}
		blk := mldf.ClassNamesJSON(c.names)
		args := mldf.ClassLabelArgs{NumClasses: uint32(len(c.names)), NamesHash: mldf.ClassNamesHash(c.names),
			NamesPtr: uint64(end), NamesSize: uint32(len(blk))}
		var ab [mldf.ArgumentsSize]byte
		args.Put(&ab)
		at := k*mldf.FieldDescSize + argsOffset
		copy(descs[at:at+mldf.ArgumentsSize], ab[:])
		blocks = append(blocks, block{at: end, b: blk})
		end = alignUp(end+int64(len(blk)), 8)
		cls = append(cls, c)
	}
	return cls, descs, blocks, end, nil
}
