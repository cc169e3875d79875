package beton

import (
	"fmt"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/pagewriter"
)

// Options configure a .beton container.
type Options struct {
	// PageSize is a power of two in [2 MiB, 2 GiB]; 0 means DefaultPageSize (8 MiB).
	PageSize int64
	// Fields are the MLDF descriptors of the fields (as the pipeline builds them), translated with
	// FromManifest. Rows given to Batch.Append are in their MLDF layout (mldf.Layout).
	Fields []mldf.FieldDesc
	// Samples is the number of samples the source announces; 0 or -1 when it streams (or
	// is empty). With a count the data region is written in place after room for that many
	// rows (rows of rejected samples stay as a zero gap); without one it is staged in a
	// scratch file and copied after the metadata table by Finish. More samples than
	// announced fail the run (ErrTooMany).
	Samples int64
}

// column is one field's translation from the MLDF row to FFCV's.
type column struct {
	typ        TypeID
	name       string
	moff, boff int   // offsets in the MLDF row and in FFCV's row
	elem       int64 // NDArray payload size
}

// Container is the .beton container of the page writer: it translates our encoders' MLDF
// rows into FFCV's rows, places payloads in sample then field order, each inside one page
// (pagewriter.PageRule, no alignment), so the file is the same bytes for any number of
// workers, and writes FFCV's header, descriptors and tables at Finish.
type Container struct {
	opt     Options
	fields  []Field
	cols    []column
	mrow    int // MLDF row size
	rowSize int64
	descs   []byte
	metaPtr int64
	dataPtr int64 // where the data region starts; -1 when it is staged (no sample count)
}

// New checks opt and returns the container. Fields FFCV cannot store are refused here,
// before any sample is read.
func New(opt Options) (*Container, error) {
	if opt.PageSize == 0 {
		opt.PageSize = DefaultPageSize
	}
	if err := ValidPageSize(opt.PageSize); err != nil {
		return nil, err
	}
	if len(opt.Fields) == 0 || len(opt.Fields) > 0xFFFF {
		return nil, fmt.Errorf("%d fields (want 1..65535)", len(opt.Fields))
	}
	c := &Container{opt: opt}
	types := make([]mldf.TypeID, len(opt.Fields))
	seen := map[string]bool{}
	for i, d := range opt.Fields {
		f, err := FromManifest(d)
		if err != nil {
			return nil, err
		}
		if seen[f.Name] {
			return nil, fmt.Errorf("%w: %q appears twice", ErrFieldName, f.Name)
		}
		seen[f.Name] = true
		c.fields = append(c.fields, f)
		types[i] = d.Type
	}
	ml, err := mldf.Layout(types)
	if err != nil {
		return nil, err
	}
	bl := Layout(c.fields)
	c.mrow, c.rowSize = ml.Size, int64(bl.Size)
	c.descs = make([]byte, FieldDescSize*len(c.fields))
	for i := range c.fields {
		f := &c.fields[i]
		col := column{typ: f.Type, name: f.Name, moff: ml.Offsets[i], boff: bl.Offsets[i]}
		if f.Type == TypeNDArray {
			col.elem, _ = f.ElementSize()
		}
		c.cols = append(c.cols, col)
		if err := f.Put(c.descs[i*FieldDescSize:]); err != nil {
			return nil, err
		}
	}
	c.metaPtr = MetadataOffset(len(c.fields))
	c.dataPtr = -1
	if opt.Samples > 0 {
		c.dataPtr = DataStart(c.metaPtr+opt.Samples*c.rowSize, opt.PageSize)
	}
	return c, nil
}

// NewContainer creates the container from a pipeline's spec (pagewriter.NewContainer):
// set it as pipeline.Config.Container. The spec's Checksums is ignored (the format has
// none).
func NewContainer(s mldf.Spec) (pagewriter.Container, error) {
	return New(Options{PageSize: s.PageSize, Fields: s.Fields, Samples: s.Samples})
}

// Create starts a .beton file at path, written beside it and renamed onto it by Finish.
func Create(path string, opt Options) (*pagewriter.Writer, error) {
	c, err := New(opt)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return pagewriter.New(pagewriter.LocalFile(path, pagewriter.FileOptions{}), c, pagewriter.Options{})
}

// Fields returns the FFCV field descriptors.
func (c *Container) Fields() []Field { return c.fields }

// Layout implements pagewriter.Container.
func (c *Container) Layout() pagewriter.Layout {
	l := pagewriter.Layout{Rule: pagewriter.PageRule{PageSize: c.opt.PageSize, Align: 1}, DataStart: c.dataPtr,
		RowSize: int(c.rowSize), EntrySize: AllocEntrySize}
	if c.dataPtr >= 0 {
		l.MaxRows, l.TooMany = c.opt.Samples, ErrTooMany
	}
	return l
}

// Append implements pagewriter.Container: row is the sample's metadata row in the MLDF
// layout of Options.Fields (as our encoders fill it; payload references are ignored) and
// payloads are by field index. It refuses a payload larger than a page, a raw image whose
// size is not width × height × 3, an NDArray of the wrong size and a missing image; a
// missing JSON value is stored as null, a missing or empty Bytes value as a zero-size
// allocation (one zero byte reserved, so its pointer is unique).
func (c *Container) Append(b *pagewriter.Batch, row []byte, payloads [][]byte) error {
	if len(row) != c.mrow {
		return fmt.Errorf("beton: row of %d bytes, want %d", len(row), c.mrow)
	}
	if payloads != nil && len(payloads) != len(c.cols) {
		return fmt.Errorf("beton: %d payloads for %d fields", len(payloads), len(c.cols))
	}
	out := b.AddRow(nil)
	for i, col := range c.cols {
		var p []byte
		if payloads != nil {
			p = payloads[i]
		}
		m, o := row[col.moff:], out[col.boff:]
		it := pagewriter.Item{Field: int32(i), Data: p, Space: int64(len(p))}
		switch col.typ {
		case TypeInt, TypeFloat:
			copy(o[:8], m[:8])
			continue
		case TypeRGBImage:
			im := mldf.GetImageMeta(m)
			if len(p) == 0 {
				return fmt.Errorf("%w: field %q: no image (FFCV cannot store a missing image; make the field required)", ErrPayload, col.name)
			}
			if im.Channels != 3 {
				return fmt.Errorf("%w: field %q: a %d-channel image (FFCV stores RGB)", ErrPayload, col.name, im.Channels)
			}
			bm := ImageMeta{Width: im.Width, Height: im.Height}
			switch im.Mode {
			case mldf.ImageModeJPEG:
				bm.Mode = ImageJPEG
			case mldf.ImageModeRaw:
				bm.Mode = ImageRaw
				if want := int(im.Width) * int(im.Height) * 3; len(p) != want {
					return fmt.Errorf("%w: field %q: raw image of %d bytes, %dx%dx3 (height x width x 3) is %d", ErrPayload, col.name, len(p), im.Height, im.Width, want)
				}
			default:
				return fmt.Errorf("%w: field %q: image mode %d (FFCV stores JPEG or raw RGB)", ErrUnsupported, col.name, im.Mode)
			}
			bm.Put(o)
		case TypeBytes:
			if len(p) == 0 {
				it.Data, it.Space = nil, 1 // a zero-size allocation: one reserved zero byte
			}
		case TypeJSON:
			if len(p) == 0 {
				it.Data = []byte("null")
			}
			it.Space = int64(len(it.Data)) + 1 // the NUL: the zero byte after the data
		case TypeNDArray:
			if int64(len(p)) != col.elem {
				return fmt.Errorf("%w: field %q: array of %d bytes, its dtype and shape make %d", ErrPayload, col.name, len(p), col.elem)
			}
		}
		if s := recorded(&it); s > c.opt.PageSize {
			return fmt.Errorf("%w: field %q: %d bytes do not fit in one %s page; FFCV keeps every payload inside a page: set page_size to %s or more (or shrink it, e.g. max_resolution)",
				ErrPageLarge, col.name, s, human(c.opt.PageSize), human(nextPow2(s)))
		}
		b.AddItem(it)
	}
	return nil
}

// recorded returns an allocation's size as the file records it: 0 for a zero-size
// allocation, else its space (a JSON payload's NUL included).
func recorded(it *pagewriter.Item) int64 {
	if it.Data == nil {
		return 0
	}
	return it.Space
}

func nextPow2(n int64) int64 {
	p := int64(MinPageSize)
	for p < n {
		p <<= 1
	}
	return p
}

func human(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Place implements pagewriter.Container: the data pointer (and the size of Bytes and JSON
// values) in the row, and the allocation entry (sample, ptr, size). Pointers are relative to
// the data region while it is staged; Finish adds its start.
func (c *Container) Place(row []byte, it *pagewriter.Item, off, sample int64, entry []byte) {
	col := &c.cols[it.Field]
	ref := row[col.boff:]
	size := recorded(it)
	le.PutUint64(ref[PtrOffset(col.typ):], uint64(off))
	if col.typ == TypeBytes || col.typ == TypeJSON {
		le.PutUint64(ref[8:], uint64(size))
	}
	AllocEntry{SampleID: uint64(sample), Ptr: uint64(off), Size: uint64(size)}.Put(entry)
}

// Finish implements pagewriter.Container: the header and descriptors, the metadata table,
// the zero gap up to the data region (rows of rejected samples, page alignment), the staged
// data region when there was no sample count, then the allocation table.
func (c *Container) Finish(f *pagewriter.Final) (pagewriter.Result, error) {
	pos := f.Position()
	dataPtr, base, dataLen := c.dataPtr, int64(0), pos.Cursor-c.dataPtr
	staged := dataPtr < 0
	if staged {
		dataPtr = DataStart(c.metaPtr+pos.Rows*c.rowSize, c.opt.PageSize)
		base, dataLen = dataPtr, pos.Cursor
	}
	metaEnd := c.metaPtr + pos.Rows*c.rowSize
	allocPtr := dataPtr + dataLen
	size := allocPtr + pos.Entries*AllocEntrySize
	name := f.Name()
	pre := make([]byte, HeaderSize, HeaderSize+len(c.descs))
	Header{Version: Version, NumFields: uint16(len(c.fields)), PageSize: uint32(c.opt.PageSize),
		NumSamples: uint64(pos.Rows), AllocTablePtr: uint64(allocPtr)}.Put(pre)
	pre = append(pre, c.descs...)
	if err := f.WriteAt(pre, 0); err != nil {
		return pagewriter.Result{}, fmt.Errorf("write header of %s: %w", name, err)
	}
	var fixRows, fixEntries func([]byte, int64)
	if staged {
		fixRows = rebase(base, c.rowSize, c.rowPtrs())
		fixEntries = rebase(base, AllocEntrySize, []int{8})
	}
	if err := f.CopyRows(c.metaPtr, fixRows, nil); err != nil {
		return pagewriter.Result{}, fmt.Errorf("write metadata table of %s: %w", name, err)
	}
	if err := f.Zero(metaEnd, dataPtr-metaEnd); err != nil {
		return pagewriter.Result{}, fmt.Errorf("write metadata table of %s: %w", name, err)
	}
	if staged {
		if err := f.CopyData(dataPtr); err != nil {
			return pagewriter.Result{}, fmt.Errorf("move the data region into %s: %w", name, err)
		}
	}
	if err := f.CopyEntries(allocPtr, fixEntries, nil); err != nil {
		return pagewriter.Result{}, fmt.Errorf("write allocation table of %s: %w", name, err)
	}
	return pagewriter.Result{MetadataPtr: c.metaPtr, DataPtr: dataPtr, AllocTablePtr: allocPtr, Size: size,
		Pages: (dataLen + c.opt.PageSize - 1) / c.opt.PageSize}, nil
}

// rowPtrs returns the offsets of the data pointers in a row.
func (c *Container) rowPtrs() []int {
	var p []int
	for _, col := range c.cols {
		if o := PtrOffset(col.typ); o >= 0 {
			p = append(p, col.boff+o)
		}
	}
	return p
}

// rebase returns a fix that adds base to the u64 at each of ptrs in every record of rec
// bytes.
func rebase(base, rec int64, ptrs []int) func([]byte, int64) {
	return func(b []byte, _ int64) {
		for r := int64(0); r < int64(len(b)); r += rec {
			for _, p := range ptrs {
				q := b[r+int64(p):]
				le.PutUint64(q, le.Uint64(q)+uint64(base))
			}
		}
	}
}
