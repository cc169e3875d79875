package beton

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/mldf/convert/internal/inputfile"
)

// Reader reads a .beton file. Open checks the structure of the tables (header, sizes,
// descriptors, allocation table); Sample checks what it reads and Verify checks every row and
// payload. A Reader is safe for concurrent use.
type Reader struct {
	ra        io.ReaderAt
	closer    io.Closer
	name      string
	size      int64
	h         Header
	fields    []Field
	layout    RowLayout
	meta      []byte
	alloc     []AllocEntry // sorted by ptr
	sorted    bool         // the table was sorted in the file
	dataStart int64
}

// Open opens and checks the .beton file at path.
func Open(path string) (*Reader, error) {
	f, fi, err := inputfile.OpenRegular(path) // a named pipe is refused, never waited on
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, fi.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads a .beton file of size bytes from ra; name is used in messages.
func NewReader(ra io.ReaderAt, size int64, name string) (*Reader, error) {
	r := &Reader{ra: ra, name: name, size: size}
	if err := r.load(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}

func (r *Reader) read(off, n int64) ([]byte, error) {
	b := make([]byte, n)
	if _, err := r.ra.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("%w: read %d bytes at %d: %w", ErrCorrupt, n, off, err)
	}
	return b, nil
}

func (r *Reader) load() error {
	if r.size < HeaderSize {
		return fmt.Errorf("%w: %d bytes, shorter than the 24-byte header", ErrCorrupt, r.size)
	}
	hb, err := r.read(0, HeaderSize)
	if err != nil {
		return err
	}
	if r.h, err = DecodeHeader(hb); err != nil {
		return err
	}
	h := &r.h
	metaOff := MetadataOffset(int(h.NumFields))
	if metaOff > r.size {
		return fmt.Errorf("%w: %d field descriptors end at %d, past the end of the %d-byte file", ErrCorrupt, h.NumFields, metaOff, r.size)
	}
	db, err := r.read(HeaderSize, metaOff-HeaderSize)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for i := range int(h.NumFields) {
		f, err := DecodeField(db[i*FieldDescSize:])
		if err != nil {
			return fmt.Errorf("field descriptor %d: %w", i, err)
		}
		if seen[f.Name] {
			return fmt.Errorf("%w: field name %q appears twice", ErrCorrupt, f.Name)
		}
		seen[f.Name] = true
		r.fields = append(r.fields, f)
	}
	r.layout = Layout(r.fields)
	rs := uint64(r.layout.Size)
	if h.NumSamples > uint64(r.size)/rs {
		return fmt.Errorf("%w: %d samples of %d-byte rows do not fit in the %d-byte file", ErrCorrupt, h.NumSamples, rs, r.size)
	}
	metaEnd := metaOff + int64(h.NumSamples*rs)
	r.dataStart = DataStart(metaEnd, int64(h.PageSize))
	ap := h.AllocTablePtr
	switch {
	case ap > uint64(r.size):
		return fmt.Errorf("%w: alloc_table_ptr %d is past the end of the %d-byte file", ErrCorrupt, ap, r.size)
	case int64(ap) < metaEnd:
		return fmt.Errorf("%w: alloc_table_ptr %d is inside the metadata table (ends at %d)", ErrCorrupt, ap, metaEnd)
	case (uint64(r.size)-ap)%AllocEntrySize != 0:
		return fmt.Errorf("%w: the allocation table (%d bytes from %d to the end) is not a whole number of 24-byte entries", ErrCorrupt, uint64(r.size)-ap, ap)
	}
	if r.meta, err = r.read(metaOff, metaEnd-metaOff); err != nil {
		return err
	}
	ab, err := r.read(int64(ap), r.size-int64(ap))
	if err != nil {
		return err
	}
	r.alloc = make([]AllocEntry, len(ab)/AllocEntrySize)
	r.sorted = true
	for i := range r.alloc {
		r.alloc[i] = DecodeAllocEntry(ab[i*AllocEntrySize:])
		if i > 0 && r.alloc[i].Ptr < r.alloc[i-1].Ptr {
			r.sorted = false
		}
	}
	if !r.sorted { // FFCV's own writer leaves it unsorted; its loader sorts it, as we do
		slices.SortStableFunc(r.alloc, func(a, b AllocEntry) int {
			switch {
			case a.Ptr < b.Ptr:
				return -1
			case a.Ptr > b.Ptr:
				return 1
			}
			return 0
		})
	}
	page := uint64(h.PageSize)
	for i, e := range r.alloc {
		if e.Ptr < uint64(r.dataStart) || e.Size > ap || e.Ptr > ap-max(e.Size, 1) {
			return fmt.Errorf("%w: allocation %d (sample %d, %d bytes at %d) is outside the data region [%d, %d)", ErrCorrupt, i, e.SampleID, e.Size, e.Ptr, r.dataStart, ap)
		}
		if e.Size > 0 && e.Ptr/page != (e.Ptr+e.Size-1)/page {
			return fmt.Errorf("%w: allocation %d (sample %d, %d bytes at %d) crosses a page boundary", ErrCorrupt, i, e.SampleID, e.Size, e.Ptr)
		}
		if e.SampleID >= h.NumSamples {
			return fmt.Errorf("%w: allocation %d names sample %d of %d", ErrCorrupt, i, e.SampleID, h.NumSamples)
		}
		if i > 0 {
			p := r.alloc[i-1]
			if e.Ptr < p.Ptr+max(p.Size, 1) {
				return fmt.Errorf("%w: allocations at %d (%d bytes) and %d overlap", ErrCorrupt, p.Ptr, p.Size, e.Ptr)
			}
		}
	}
	return nil
}

// Close closes the file opened by Open.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Header returns the file header.
func (r *Reader) Header() Header { return r.h }

// Fields returns the field descriptors.
func (r *Reader) Fields() []Field { return r.fields }

// Layout returns the metadata row layout.
func (r *Reader) Layout() RowLayout { return r.layout }

// NumSamples returns the number of samples.
func (r *Reader) NumSamples() int64 { return int64(r.h.NumSamples) }

// Size returns the file size.
func (r *Reader) Size() int64 { return r.size }

// DataStart returns where the data region starts: align_up(end of metadata, page_size).
func (r *Reader) DataStart() int64 { return r.dataStart }

// AllocTable returns the allocation table, sorted by ptr.
func (r *Reader) AllocTable() []AllocEntry { return r.alloc }

// SortedInFile reports whether the allocation table was sorted by ptr in the file (ours
// always is; FFCV's own writer does not sort it).
func (r *Reader) SortedInFile() bool { return r.sorted }

// Value is one field of one sample.
type Value struct {
	Field string
	Type  TypeID
	Int   int64     // Int
	Float float64   // Float
	Image ImageMeta // RGBImage
	// Data is the payload: the image (JPEG or raw RGB), the bytes, the array's raw data, or
	// the JSON text without its terminating NUL.
	Data []byte
}

// String describes v briefly.
func (v Value) String() string {
	switch v.Type {
	case TypeInt:
		return fmt.Sprintf("%s: %d", v.Field, v.Int)
	case TypeFloat:
		return fmt.Sprintf("%s: %s", v.Field, strconv.FormatFloat(v.Float, 'g', -1, 64))
	case TypeRGBImage:
		mode := "jpeg"
		if v.Image.Mode == ImageRaw {
			mode = "raw"
		}
		return fmt.Sprintf("%s: %s image %dx%d (height x width), %d bytes @%d", v.Field, mode, v.Image.Height, v.Image.Width, len(v.Data), v.Image.Ptr)
	case TypeJSON:
		s := string(v.Data)
		if len(s) > 120 {
			s = s[:120] + "…"
		}
		return fmt.Sprintf("%s: %s", v.Field, s)
	}
	return fmt.Sprintf("%s: %s, %d bytes", v.Field, v.Type, len(v.Data))
}

// lookup finds the allocation at ptr and its index.
func (r *Reader) lookup(ptr uint64) (AllocEntry, int, bool) {
	i := sort.Search(len(r.alloc), func(i int) bool { return r.alloc[i].Ptr >= ptr })
	if i < len(r.alloc) && r.alloc[i].Ptr == ptr {
		return r.alloc[i], i, true
	}
	return AllocEntry{}, -1, false
}

// Row returns sample i's metadata row.
func (r *Reader) Row(i int64) ([]byte, error) {
	if i < 0 || uint64(i) >= r.h.NumSamples {
		return nil, fmt.Errorf("%s: sample %d out of range (%d samples)", r.name, i, r.h.NumSamples)
	}
	rs := int64(r.layout.Size)
	return r.meta[i*rs : (i+1)*rs], nil
}

// Sample reads every field of sample i, checking its pointers and payloads.
func (r *Reader) Sample(i int64) ([]Value, error) {
	row, err := r.Row(i)
	if err != nil {
		return nil, err
	}
	vals := make([]Value, len(r.fields))
	for k := range r.fields {
		if _, err := r.value(i, k, row, &vals[k], true); err != nil {
			return nil, fmt.Errorf("%s: sample %d: %w", r.name, i, err)
		}
	}
	return vals, nil
}

// Entry returns field k of sample i, checked as Sample checks it, without reading its
// payload (a JSON field's is read, to check its NUL, and is in Data), and the allocation
// entry that holds the payload (zero for Int and Float). Readers that keep the bytes
// elsewhere (a mapping, a cache) read the payload at entry.Ptr themselves.
func (r *Reader) Entry(i int64, k int) (Value, AllocEntry, error) {
	row, err := r.Row(i)
	if err != nil {
		return Value{}, AllocEntry{}, err
	}
	if k < 0 || k >= len(r.fields) {
		return Value{}, AllocEntry{}, fmt.Errorf("%s: sample %d: field %d out of range (%d fields)", r.name, i, k, len(r.fields))
	}
	var v Value
	idx, err := r.value(i, k, row, &v, false)
	if err != nil {
		return v, AllocEntry{}, fmt.Errorf("%s: sample %d: %w", r.name, i, err)
	}
	if idx < 0 {
		return v, AllocEntry{}, nil
	}
	return v, r.alloc[idx], nil
}

// value decodes field k of sample i from its row; with load it reads the payload too. It
// returns the index of the field's allocation, or -1.
func (r *Reader) value(i int64, k int, row []byte, v *Value, load bool) (int, error) {
	f := &r.fields[k]
	m := row[r.layout.Offsets[k]:]
	*v = Value{Field: f.Name, Type: f.Type}
	var ptr, size uint64
	switch f.Type {
	case TypeInt:
		v.Int = int64(le.Uint64(m))
		return -1, nil
	case TypeFloat:
		v.Float = math.Float64frombits(le.Uint64(m))
		return -1, nil
	case TypeRGBImage:
		v.Image = GetImageMeta(m)
		ptr = v.Image.Ptr
		if v.Image.Mode != ImageJPEG && v.Image.Mode != ImageRaw {
			return -1, fmt.Errorf("%w: field %q: image mode %d", ErrCorrupt, f.Name, v.Image.Mode)
		}
	case TypeBytes, TypeJSON:
		ptr, size = le.Uint64(m), le.Uint64(m[8:])
	case TypeNDArray:
		ptr = le.Uint64(m)
	}
	e, idx, ok := r.lookup(ptr)
	if !ok {
		return -1, fmt.Errorf("%w: field %q: pointer %d is not in the allocation table", ErrCorrupt, f.Name, ptr)
	}
	if e.SampleID != uint64(i) {
		return -1, fmt.Errorf("%w: field %q: pointer %d is allocated to sample %d", ErrCorrupt, f.Name, ptr, e.SampleID)
	}
	switch f.Type {
	case TypeBytes, TypeJSON:
		if size != e.Size {
			return -1, fmt.Errorf("%w: field %q: row says %d bytes, allocation table %d", ErrCorrupt, f.Name, size, e.Size)
		}
	case TypeNDArray:
		if want, _ := f.ElementSize(); uint64(want) != e.Size {
			return -1, fmt.Errorf("%w: field %q: array of %d bytes, dtype %s and shape %v make %d", ErrCorrupt, f.Name, e.Size, f.DType, f.Shape, want)
		}
	case TypeRGBImage:
		if v.Image.Mode == ImageRaw && e.Size != uint64(v.Image.Width)*uint64(v.Image.Height)*3 {
			return -1, fmt.Errorf("%w: field %q: raw image of %d bytes, %dx%dx3 (height x width x 3) is %d", ErrCorrupt, f.Name, e.Size, v.Image.Height, v.Image.Width, uint64(v.Image.Width)*uint64(v.Image.Height)*3)
		}
	}
	if !load && f.Type != TypeJSON {
		return idx, nil
	}
	b, err := r.read(int64(e.Ptr), int64(e.Size))
	if err != nil {
		return -1, fmt.Errorf("field %q: %w", f.Name, err)
	}
	if f.Type == TypeJSON {
		if len(b) == 0 || b[len(b)-1] != 0 {
			return -1, fmt.Errorf("%w: field %q: JSON payload does not end with NUL", ErrCorrupt, f.Name)
		}
		b = b[:len(b)-1]
		if !utf8.Valid(b) {
			return -1, fmt.Errorf("%w: field %q: JSON payload is not UTF-8", ErrCorrupt, f.Name)
		}
	}
	v.Data = b
	return idx, nil
}

// VerifyReport summarises a verified file.
type VerifyReport struct {
	File                   string
	Samples, Fields        int64
	Entries                int64
	PayloadBytes           int64
	PagesUsed              int64
	SortedInFile           bool
	UnreferencedAllocation int64 // allocations no row points to
}

// ErrVerify marks a file that failed verification.
var ErrVerify = errors.New("beton: verification failed")

// Verify checks every row: each pointer is in the allocation table, allocated to its sample,
// inside one page of the data region, with sizes that agree (Bytes and JSON size, NDArray
// dtype × shape, raw image W×H×3) and JSON payloads that end with NUL. Open already checked
// the header, the sizes, the descriptors and the allocation table.
func (r *Reader) Verify() (VerifyReport, error) {
	rep := VerifyReport{File: r.name, Samples: int64(r.h.NumSamples), Fields: int64(len(r.fields)),
		Entries: int64(len(r.alloc)), SortedInFile: r.sorted}
	used := map[uint64]bool{}
	page := uint64(r.h.PageSize)
	for _, e := range r.alloc {
		rep.PayloadBytes += int64(e.Size)
		used[e.Ptr/page] = true
	}
	rep.PagesUsed = int64(len(used))
	refs := int64(0)
	seen := make([]uint64, (len(r.alloc)+63)/64)
	var v Value
	for i := int64(0); i < int64(r.h.NumSamples); i++ {
		row, _ := r.Row(i)
		for k := range r.fields {
			idx, err := r.value(i, k, row, &v, false)
			if err != nil {
				return rep, fmt.Errorf("%w: %s: sample %d: %w", ErrVerify, r.name, i, err)
			}
			if idx >= 0 {
				if seen[idx/64]&(1<<(idx%64)) != 0 {
					return rep, fmt.Errorf("%w: %s: sample %d: field %q points at an allocation another field uses", ErrVerify, r.name, i, r.fields[k].Name)
				}
				seen[idx/64] |= 1 << (idx % 64)
				refs++
			}
		}
	}
	rep.UnreferencedAllocation = int64(len(r.alloc)) - refs
	if rep.UnreferencedAllocation != 0 {
		return rep, fmt.Errorf("%w: %s: %d allocations for %d pointers in the rows", ErrVerify, r.name, len(r.alloc), refs)
	}
	return rep, nil
}
