package mldf

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
)

// classBlock is where a class-label field's names are: its arguments' block, checked by rule
// R14 when the file was opened.
type classBlock struct {
	args ClassLabelArgs
	in   bool // the block is in the file (minor version 1 or later, names_size > 0)

	once  sync.Once
	names []string
	err   error
}

// checkClassBlocks applies rule R14 to the class-names blocks of a file of minor version 1 or
// later: each lies in the gap between the descriptors and the data region, 8-aligned, at
// most manifest.MaxClassNamesBlock bytes, and no two overlap. In a file of minor version 0 the
// block members of the arguments are reserved bytes and are ignored.
func (r *Reader) checkClassBlocks() error {
	h := r.hdr
	descEnd := h.FieldDescPtr + uint64(len(r.descBytes))
	var spans []int
	for k := range r.fields {
		if r.fields[k].Type != TypeInt {
			continue
		}
		a, ok := ParseClassLabelArgs(r.fields[k].Arguments)
		if !ok {
			continue
		}
		b := &classBlock{args: a}
		r.classes[k] = b
		if h.VersionMinor < VersionMinorClassNames || (a.NamesPtr == 0 && a.NamesSize == 0) {
			continue
		}
		bad := func(format string, args ...any) error {
			e := r.ruleErr("R14", ErrCorrupt, format, args...)
			e.Field, e.Name = k, r.fields[k].Name
			return e
		}
		end, ok := add64(a.NamesPtr, uint64(a.NamesSize))
		switch {
		case a.NamesSize == 0 || a.NamesPtr == 0:
			return bad("class-names block at %d of %d bytes: both are zero (no block) or neither is", a.NamesPtr, a.NamesSize)
		case a.NamesSize > MaxClassNamesBlock:
			return bad("class-names block of %d bytes (at most %d)", a.NamesSize, MaxClassNamesBlock)
		case a.NamesPtr%8 != 0:
			return bad("class-names block at %d is not 8-aligned", a.NamesPtr)
		case a.NamesPtr < descEnd || !ok || end > h.DataPtr:
			return bad("class-names block [%d, %d+%d) lies outside the gap [%d, %d) between the field descriptors and the data region",
				a.NamesPtr, a.NamesPtr, a.NamesSize, descEnd, h.DataPtr)
		}
		b.in = true
		spans = append(spans, k)
	}
	slices.SortFunc(spans, func(x, y int) int { return cmp.Compare(r.classes[x].args.NamesPtr, r.classes[y].args.NamesPtr) })
	for j := 1; j < len(spans); j++ {
		p, q := r.classes[spans[j-1]].args, r.classes[spans[j]].args
		if p.NamesPtr+uint64(p.NamesSize) > q.NamesPtr {
			e := r.ruleErr("R14", ErrCorrupt, "class-names block [%d, %d) overlaps the block of field %d %q at %d",
				q.NamesPtr, q.NamesPtr+uint64(q.NamesSize), spans[j-1], r.fields[spans[j-1]].Name, p.NamesPtr)
			e.Field, e.Name = spans[j], r.fields[spans[j]].Name
			return e
		}
	}
	return nil
}

// ClassNames returns the class names of field f, label i being names[i], as the file stores
// them (docs/FORMAT.md §14), after checking them (rule V8: the block's hash, its form, the
// number of names). It returns nil, nil when f is not a class-label INT field or when the
// file does not hold its names (a 1.0 file: the names may be in FILE.classes.json beside it,
// see recipe.ClassNames). The slice is the caller's.
func (r *Reader) ClassNames(f int) ([]string, error) {
	if r.closed {
		return nil, fmt.Errorf("%s: %w", r.name, ErrClosed)
	}
	if f < 0 || f >= len(r.fields) {
		return nil, fmt.Errorf("%s: %w: field %d of %d", r.name, ErrOutOfRange, f, len(r.fields))
	}
	b := r.classes[f]
	if b == nil || !b.in {
		return nil, nil
	}
	b.once.Do(func() {
		block, err := r.src.bytes(b.args.NamesPtr, uint64(b.args.NamesSize))
		if err != nil {
			b.err = fmt.Errorf("%s: field %d %q: reading the class-names block: %w", r.name, f, r.fields[f].Name, err)
			return
		}
		names, err := DecodeClassNames(block, b.args)
		if err != nil {
			e := r.ruleErr("V8", ErrCorrupt, "class-names block [%d, %d+%d)", b.args.NamesPtr, b.args.NamesPtr, b.args.NamesSize)
			e.Field, e.Name, e.Cause = f, r.fields[f].Name, err
			b.err = e
			return
		}
		b.names = names
	})
	return slices.Clone(b.names), b.err
}

// NumClasses returns the number of classes of field f and whether it is a class-label INT
// field (its arguments say so, whether or not the file holds the names).
func (r *Reader) NumClasses(f int) (int, bool) {
	if f < 0 || f >= len(r.classes) || r.classes[f] == nil {
		return 0, false
	}
	return int(r.classes[f].args.NumClasses), true
}

// Field is one field of a Reader, found by name (Reader.Field).
type Field struct {
	r     *Reader
	Index int // -1 when the file has no such field
	FieldDesc
}

// Field returns the field called name. A missing field has Index -1, and its accessors
// return ErrOutOfRange.
func (r *Reader) Field(name string) Field {
	k := r.FieldIndex(name)
	if k < 0 {
		return Field{r: r, Index: -1, FieldDesc: FieldDesc{Name: name}}
	}
	return Field{r: r, Index: k, FieldDesc: r.fields[k]}
}

// ClassNames returns the field's class names (Reader.ClassNames): nil, nil when it has none
// in the file.
func (f Field) ClassNames() ([]string, error) {
	if f.Index < 0 {
		return nil, fmt.Errorf("%s: %w: no field %q", f.r.name, ErrOutOfRange, f.Name)
	}
	return f.r.ClassNames(f.Index)
}

// classBlockRanges returns the class-names blocks in the file, sorted by offset (for V7).
func (r *Reader) classBlockRanges() [][2]uint64 {
	var out [][2]uint64
	for _, b := range r.classes {
		if b != nil && b.in {
			out = append(out, [2]uint64{b.args.NamesPtr, b.args.NamesPtr + uint64(b.args.NamesSize)})
		}
	}
	slices.SortFunc(out, func(x, y [2]uint64) int { return cmp.Compare(x[0], y[0]) })
	return out
}

// checkClassValues applies rule F11 to sample i: a class-label value is -1 or a class index.
func (r *Reader) checkClassValue(i, f int, v int64) error {
	b := r.classes[f]
	if b == nil || (v >= -1 && v < int64(b.args.NumClasses)) {
		return nil
	}
	e := r.ruleErr("F11", ErrCorrupt, "class label %d is not -1 or in 0..%d (the field has %d classes)", v, int64(b.args.NumClasses)-1, b.args.NumClasses)
	return r.at(e, i, f)
}
