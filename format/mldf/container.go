// Package mldf is the MLDF container of the page writer: it checks the field descriptors,
// lays out the metadata rows and the allocation entries, and finalizes the file (tables,
// checksums, header) as docs/FORMAT.md specifies. Claims, parallel writes and publishing
// are package pagewriter's.
package mldf

import (
	"errors"
	"fmt"

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/pagewriter"
)

// FieldDescOffset is where this writer puts the field descriptors (8-aligned, after the
// signature and header).
const FieldDescOffset = 80

// ErrNotPayload is a payload given for a field whose struct has no payload reference.
var ErrNotPayload = errors.New("mldf: payload given for a field without a payload reference")

// Options configure an MLDF container.
type Options struct {
	// PageSize is a power of two >= 4096; 0 means manifest.DefaultPageSize.
	PageSize int64
	// Fields are the field descriptors in order.
	Fields []FieldDesc
	// Checksums sets the checksummed flag: CRC-32C per payload and the header checksum.
	Checksums bool
}

// Container is the MLDF container: rows in the layout of manifest.Layout (the rows given to
// Batch.Append are stored as they are, with their payload references filled in), 16-byte
// allocation entries, payloads placed by pagewriter.SpanRule from the first page boundary
// after the descriptors.
type Container struct {
	opt     Options
	rowSize int
	refs    []int // per field: offset of its payload reference in a row, or -1
	descs   []byte
	names   []byte // the class-names blocks, from the end of the descriptors (8-aligned each)
	dataPtr int64
}

// New checks opt and returns the container.
func New(opt Options) (*Container, error) {
	if opt.PageSize == 0 {
		opt.PageSize = DefaultPageSize
	}
	if err := pagewriter.ValidPageSize(opt.PageSize); err != nil {
		return nil, err
	}
	if len(opt.Fields) > 0xFFFF {
		return nil, fmt.Errorf("%d fields (at most 65535)", len(opt.Fields))
	}
	c := &Container{opt: opt}
	types := make([]TypeID, len(opt.Fields))
	c.descs = make([]byte, FieldDescSize*len(opt.Fields))
	namesAt := uint64(FieldDescOffset + len(c.descs)) // a multiple of 8
	seen := map[string]bool{}
	for i, d := range opt.Fields {
		if err := c.classNames(&d, namesAt); err != nil {
			return nil, err
		}
		size, _ := MetaSize(d.Type)
		if size == 0 {
			return nil, fmt.Errorf("field %q: %w %d", d.Name, ErrUnknownType, uint16(d.Type))
		}
		if d.MetadataSize == 0 {
			d.MetadataSize = uint32(size)
		}
		if seen[d.Name] {
			return nil, fmt.Errorf("%w: %q appears twice", ErrFieldName, d.Name)
		}
		seen[d.Name] = true
		if err := d.Put(c.descs[i*FieldDescSize:]); err != nil {
			return nil, fmt.Errorf("field %d: %w", i, err)
		}
		types[i] = d.Type
	}
	layout, err := Layout(types)
	if err != nil {
		return nil, err
	}
	c.rowSize = layout.Size
	c.refs = make([]int, len(types))
	for i, t := range types {
		c.refs[i] = -1
		if _, hasRef := MetaSize(t); hasRef {
			c.refs[i] = layout.Offsets[i]
		}
	}
	c.dataPtr = alignUp(FieldDescOffset+int64(len(c.descs))+int64(len(c.names)), opt.PageSize)
	return c, nil
}

// classNames stores the class names of a class-label INT field in a class-names block
// (docs/FORMAT.md §14) after the blocks so far, the first at namesAt, and records the block
// in d's arguments. A class-label field without names gets no block (its arguments' block
// members are cleared: they are this writer's to fill).
func (c *Container) classNames(d *FieldDesc, namesAt uint64) error {
	args, isLabel := ParseClassLabelArgs(d.Arguments)
	if len(d.ClassNames) == 0 {
		if isLabel && d.Type == TypeInt {
			args.NamesPtr, args.NamesSize = 0, 0
			args.Put(&d.Arguments)
		}
		return nil
	}
	if d.Type != TypeInt {
		return fmt.Errorf("field %q (%s): %w: only INT fields have class names", d.Name, d.Type, ErrClassNames)
	}
	if err := CheckClassNames(d.ClassNames); err != nil {
		return fmt.Errorf("field %q: %w", d.Name, err)
	}
	block := ClassNamesJSON(d.ClassNames)
	sum := ClassNamesHash(d.ClassNames)
	if isLabel && (args.NumClasses != uint32(len(d.ClassNames)) || args.NamesHash != sum) {
		return fmt.Errorf("field %q: %w: %d names hashing to %016x, the arguments say %d classes and %016x",
			d.Name, ErrClassNames, len(d.ClassNames), sum, args.NumClasses, args.NamesHash)
	}
	if !isLabel && d.Arguments != [ArgumentsSize]byte{} {
		return fmt.Errorf("field %q: %w: the arguments are not those of a class label", d.Name, ErrClassNames)
	}
	at := uint64(alignUp(int64(namesAt)+int64(len(c.names)), 8))
	c.names = append(c.names, make([]byte, at-namesAt-uint64(len(c.names)))...)
	c.names = append(c.names, block...)
	ClassLabelArgs{NumClasses: uint32(len(d.ClassNames)), NamesHash: sum,
		NamesPtr: at, NamesSize: uint32(len(block))}.Put(&d.Arguments)
	return nil
}

// NewContainer creates the container from a pipeline's spec (pagewriter.NewContainer).
func NewContainer(s Spec) (pagewriter.Container, error) {
	return New(Options{PageSize: s.PageSize, Fields: s.Fields, Checksums: s.Checksums})
}

// Create starts an MLDF file at path, written beside it and renamed onto it by Finish.
func Create(path string, opt Options) (*pagewriter.Writer, error) {
	c, err := New(opt)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return pagewriter.New(pagewriter.LocalFile(path, pagewriter.FileOptions{}), c, pagewriter.Options{})
}

// DataPtr returns the start of the data region.
func (c *Container) DataPtr() int64 { return c.dataPtr }

// Layout implements pagewriter.Container.
func (c *Container) Layout() pagewriter.Layout {
	return pagewriter.Layout{Rule: pagewriter.SpanRule{PageSize: c.opt.PageSize}, DataStart: c.dataPtr,
		RowSize: c.rowSize, EntrySize: AllocEntrySize}
}

// Append implements pagewriter.Container: row is the sample's metadata row (RowSize bytes;
// payload references are filled in by the writer), payloads are by field index (nil, or
// one slice per field with nil or empty where the field stores none).
func (c *Container) Append(b *pagewriter.Batch, row []byte, payloads [][]byte) error {
	if len(row) != c.rowSize {
		return fmt.Errorf("mldf: row of %d bytes, want %d", len(row), c.rowSize)
	}
	nf := len(c.refs)
	if payloads != nil && len(payloads) != nf {
		return fmt.Errorf("mldf: %d payloads for %d fields", len(payloads), nf)
	}
	for f, p := range payloads {
		if len(p) == 0 {
			continue
		}
		if c.refs[f] < 0 {
			return fmt.Errorf("field %q (%s): %w", c.opt.Fields[f].Name, c.opt.Fields[f].Type, ErrNotPayload)
		}
		if err := CheckPayloadSize(len(p)); err != nil {
			return fmt.Errorf("field %q: %w", c.opt.Fields[f].Name, err)
		}
	}
	r := b.AddRow(row)
	for f, p := range payloads {
		if len(p) == 0 {
			if c.refs[f] >= 0 {
				// An empty payload has data_ptr 0, data_size 0 (the pad after them is the field's).
				clear(r[c.refs[f] : c.refs[f]+12])
			}
			continue
		}
		var sum uint32
		if c.opt.Checksums {
			sum = PayloadChecksum(p)
		}
		b.AddItem(pagewriter.Item{Field: int32(f), Check: sum, Space: int64(len(p)), Data: p})
	}
	if payloads == nil {
		for _, off := range c.refs {
			if off >= 0 {
				clear(r[off : off+12])
			}
		}
	}
	return nil
}

// Place implements pagewriter.Container: the payload reference and the allocation entry
// (ptr, size, CRC-32C).
func (c *Container) Place(row []byte, it *pagewriter.Item, off, sample int64, entry []byte) {
	ref := PayloadRef{Ptr: uint64(off), Size: uint32(len(it.Data))}
	PutRef(row[c.refs[it.Field]:], ref)
	AllocEntry{Ptr: ref.Ptr, Size: ref.Size, Check: it.Check}.Put(entry)
}

// Finish implements pagewriter.Container: the metadata table at the end of the data region,
// the allocation table after it, then the signature, header and descriptors (the header
// checksum covers the tables, so it comes last).
func (c *Container) Finish(f *pagewriter.Final) (pagewriter.Result, error) {
	pos := f.Position()
	meta := pos.Cursor
	alloc := meta + pos.Rows*int64(c.rowSize)
	size := alloc + pos.Entries*AllocEntrySize
	flags := FlagLittleEndian
	if c.opt.Checksums {
		flags |= FlagChecksummed
	}
	minor := uint16(0) // a file with no class names keeps the bytes of 1.0
	if len(c.names) > 0 {
		minor = VersionMinorClassNames
	}
	h := Header{
		VersionMajor: VersionMajor, VersionMinor: minor, Flags: flags,
		NumSamples: uint64(pos.Rows), NumFields: uint16(len(c.refs)), PageSize: uint32(c.opt.PageSize),
		FieldDescPtr: FieldDescOffset, MetadataPtr: uint64(meta), DataPtr: uint64(c.dataPtr),
		AllocTablePtr: uint64(alloc),
	}
	pre := make([]byte, FieldDescOffset+len(c.descs)+len(c.names))
	copy(pre, Signature)
	h.Put(pre[HeaderOffset:])
	copy(pre[FieldDescOffset:], c.descs)
	copy(pre[FieldDescOffset+len(c.descs):], c.names)
	d := xxhash.New()
	d.Write(pre[HeaderOffset : HeaderOffset+HeaderChecksumOffset])
	d.Write(c.descs) // the class-names blocks are covered by the names hash in the descriptors
	if err := f.CopyRows(meta, nil, d); err != nil {
		return pagewriter.Result{}, fmt.Errorf("write metadata table of %s: %w", f.Name(), err)
	}
	if err := f.CopyEntries(alloc, nil, d); err != nil {
		return pagewriter.Result{}, fmt.Errorf("write allocation table of %s: %w", f.Name(), err)
	}
	if c.opt.Checksums {
		h.Checksum = d.Sum64()
		h.Put(pre[HeaderOffset:])
	}
	if err := f.WriteAt(pre, 0); err != nil {
		return pagewriter.Result{}, fmt.Errorf("write header of %s: %w", f.Name(), err)
	}
	if err := f.Zero(int64(len(pre)), c.dataPtr-int64(len(pre))); err != nil {
		return pagewriter.Result{}, fmt.Errorf("write header of %s: %w", f.Name(), err)
	}
	return pagewriter.Result{
		DataPtr: c.dataPtr, MetadataPtr: meta, AllocTablePtr: alloc, Size: size,
		Pages:    (meta - c.dataPtr + c.opt.PageSize - 1) / c.opt.PageSize,
		Checksum: h.Checksum,
	}, nil
}
