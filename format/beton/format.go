// Package beton writes and reads FFCV's .beton container (format version 2), so that datasets
// converted by this tool load with FFCV's own Loader. It states the layout, translates the
// MLDF metadata our encoders produce into FFCV's rows, and checks files structurally.
//
// The layout, all integers little-endian, no signature and no checksum (docs/BETON.md):
//
//	0                  header, 24 bytes: version u16 = 2, num_fields u16, page_size u32,
//	                   num_samples u64, alloc_table_ptr u64
//	24                 num_fields × 1041-byte field descriptors: type_id u8, name [16]byte
//	                   (ASCII, NUL-padded), arguments [1024]byte
//	24 + 1041·F        metadata table: num_samples rows, a row being the numpy struct of the
//	                   fields' metadata types with align=True (RowLayout), not aligned itself
//	align_up(…, page)  data region: payloads, each inside one page
//	alloc_table_ptr    24-byte entries sample_id u64, ptr u64, size u64, sorted by ptr, to EOF
package beton

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sizes of the fixed structures, in bytes.
const (
	HeaderSize     = 24
	FieldDescSize  = 1041
	NameSize       = 16
	ArgumentsSize  = 1024
	AllocEntrySize = 24
	// MaxDims is the number of shape slots in NDArray arguments.
	MaxDims = 32
	// ndarrayArgsHeader is the shape (32 × u64) plus type_length u64 before the dtype JSON.
	ndarrayArgsHeader = MaxDims*8 + 8
)

// Version is the only format version this package writes and reads.
const Version = 2

// Page sizes: a power of two of at least MinPageSize (FFCV's loader works in pages this
// large); DefaultPageSize is FFCV's default.
const (
	MinPageSize     = 2 << 20
	MaxPageSize     = 1 << 31
	DefaultPageSize = 8 << 20
)

// Errors returned by this package, wrapped with the file and the sample or field.
var (
	ErrPageSize    = errors.New("beton: page size must be a power of two between 2 MiB and 2 GiB")
	ErrFieldName   = errors.New("beton: invalid field name")
	ErrUnsupported = errors.New("beton: FFCV cannot store this field")
	ErrPageLarge   = errors.New("beton: payload larger than a page")
	ErrPayload     = errors.New("beton: invalid payload")
	ErrCorrupt     = errors.New("beton: corrupt file")
	ErrVersion     = errors.New("beton: unsupported format version")
	ErrTooMany     = errors.New("beton: more samples than announced")
)

// TypeID is a field's type id in its descriptor.
type TypeID uint8

// FFCV's field type ids.
const (
	TypeFloat    TypeID = 0
	TypeInt      TypeID = 1
	TypeRGBImage TypeID = 2
	TypeBytes    TypeID = 3
	TypeNDArray  TypeID = 4
	TypeJSON     TypeID = 5
)

var typeNames = [...]string{"Float", "Int", "RGBImage", "Bytes", "NDArray", "JSON"}

// String returns FFCV's name of the type (without "Field"), or TYPE(n).
func (t TypeID) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "TYPE(" + strconv.Itoa(int(t)) + ")"
}

// Known reports whether t is one of FFCV's types.
func (t TypeID) Known() bool { return int(t) < len(typeNames) }

// Image modes in an RGBImage metadata struct.
const (
	ImageJPEG uint8 = 0 // a JPEG that decodes to RGB
	ImageRaw  uint8 = 1 // height × width × 3 uint8, RGB, row-major
)

var le = binary.LittleEndian

// Header is the 24-byte file header.
type Header struct {
	Version       uint16
	NumFields     uint16
	PageSize      uint32
	NumSamples    uint64
	AllocTablePtr uint64
}

// Put encodes h into b[:HeaderSize].
func (h Header) Put(b []byte) {
	_ = b[HeaderSize-1]
	le.PutUint16(b[0:], h.Version)
	le.PutUint16(b[2:], h.NumFields)
	le.PutUint32(b[4:], h.PageSize)
	le.PutUint64(b[8:], h.NumSamples)
	le.PutUint64(b[16:], h.AllocTablePtr)
}

// DecodeHeader decodes and checks a header (version, field count, page size).
func DecodeHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: %d bytes, shorter than the 24-byte header", ErrCorrupt, len(b))
	}
	h := Header{Version: le.Uint16(b[0:]), NumFields: le.Uint16(b[2:]), PageSize: le.Uint32(b[4:]),
		NumSamples: le.Uint64(b[8:]), AllocTablePtr: le.Uint64(b[16:])}
	if h.Version != Version {
		return h, fmt.Errorf("%w %d (this reader reads %d)", ErrVersion, h.Version, Version)
	}
	if h.NumFields == 0 {
		return h, fmt.Errorf("%w: header says 0 fields", ErrCorrupt)
	}
	if err := ValidPageSize(int64(h.PageSize)); err != nil {
		return h, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return h, nil
}

// ValidPageSize reports whether p is a power of two in [MinPageSize, MaxPageSize].
func ValidPageSize(p int64) error {
	if p < MinPageSize || p > MaxPageSize || p&(p-1) != 0 {
		return fmt.Errorf("%w (got %d; FFCV's default is 8 MiB)", ErrPageSize, p)
	}
	return nil
}

// Field is one field descriptor.
type Field struct {
	Name string
	Type TypeID
	// DType (a numpy descr such as "<f4") and Shape describe an NDArray field.
	DType string
	Shape []uint64
}

// ValidateName reports whether name fits a descriptor: 1..16 bytes of printable ASCII.
// (FFCV truncates longer names silently; this package refuses them.)
func ValidateName(name string) error {
	if len(name) == 0 || len(name) > NameSize {
		return fmt.Errorf("%w: %q is %d bytes (FFCV names are 1..16 bytes)", ErrFieldName, name, len(name))
	}
	for i := 0; i < len(name); i++ {
		if name[i] < 0x20 || name[i] > 0x7e {
			return fmt.Errorf("%w: %q is not printable ASCII", ErrFieldName, name)
		}
	}
	return nil
}

// ItemSize returns the element size of a numeric numpy descr ("<f4", "|u1", "<c16", "|b1").
func ItemSize(descr string) (int, error) {
	if len(descr) < 3 || strings.IndexByte("<>|=", descr[0]) < 0 || strings.IndexByte("biufc", descr[1]) < 0 {
		return 0, fmt.Errorf("%w: dtype %q is not a numeric numpy descr", ErrUnsupported, descr)
	}
	n, err := strconv.Atoi(descr[2:])
	if err != nil || n <= 0 || n > 32 {
		return 0, fmt.Errorf("%w: dtype %q is not a numeric numpy descr", ErrUnsupported, descr)
	}
	return n, nil
}

// ElementSize returns the payload size of one NDArray sample: the dtype's item size times
// the product of the shape.
func (f *Field) ElementSize() (int64, error) {
	n, err := ItemSize(f.DType)
	if err != nil {
		return 0, err
	}
	size := int64(n)
	for _, d := range f.Shape {
		if d != 0 && uint64(size) > (1<<40)/d {
			return 0, fmt.Errorf("%w: shape %v is too large", ErrUnsupported, f.Shape)
		}
		size *= int64(d)
	}
	return size, nil
}

// check validates f for writing.
func (f *Field) check() error {
	if err := ValidateName(f.Name); err != nil {
		return err
	}
	if !f.Type.Known() {
		return fmt.Errorf("%w: field %q has type id %d", ErrUnsupported, f.Name, uint8(f.Type))
	}
	if f.Type == TypeNDArray {
		if len(f.Shape) == 0 || len(f.Shape) > MaxDims {
			return fmt.Errorf("%w: field %q: an NDArray needs 1..32 dimensions (got %d)", ErrUnsupported, f.Name, len(f.Shape))
		}
		for _, d := range f.Shape {
			if d == 0 {
				return fmt.Errorf("%w: field %q: shape %v has a zero dimension (FFCV ends the shape at the first 0)", ErrUnsupported, f.Name, f.Shape)
			}
		}
		if _, err := f.ElementSize(); err != nil {
			return fmt.Errorf("field %q: %w", f.Name, err)
		}
	}
	return nil
}

// descrJSON returns the dtype's numpy descr list as Python's json.dumps writes it:
// [["", "<f4"]]. A native-order descr ("=f4") is written little-endian.
func descrJSON(descr string) string {
	if descr[0] == '=' {
		descr = "<" + descr[1:]
	}
	if descr[1] == 'b' || descr[2:] == "1" {
		descr = "|" + descr[1:] // numpy writes one-byte types without a byte order
	}
	return `[["", "` + descr + `"]]`
}

// Put encodes f into b[:FieldDescSize].
func (f *Field) Put(b []byte) error {
	if err := f.check(); err != nil {
		return err
	}
	b = b[:FieldDescSize]
	clear(b)
	b[0] = byte(f.Type)
	copy(b[1:1+NameSize], f.Name)
	if f.Type == TypeNDArray {
		a := b[1+NameSize:]
		for i, d := range f.Shape {
			le.PutUint64(a[8*i:], d)
		}
		j := descrJSON(f.DType)
		le.PutUint64(a[MaxDims*8:], uint64(len(j)))
		copy(a[ndarrayArgsHeader:], j)
	}
	return nil
}

// DecodeField decodes and checks one descriptor: a known type, an ASCII NUL-padded name,
// zero arguments where the type stores none, and valid NDArray arguments.
func DecodeField(b []byte) (Field, error) {
	if len(b) < FieldDescSize {
		return Field{}, fmt.Errorf("%w: truncated field descriptor", ErrCorrupt)
	}
	f := Field{Type: TypeID(b[0])}
	name := b[1 : 1+NameSize]
	n := 0
	for n < NameSize && name[n] != 0 {
		n++
	}
	f.Name = string(name[:n])
	for _, c := range name[n:] {
		if c != 0 {
			return f, fmt.Errorf("%w: field %q: bytes after the name's NUL are not zero", ErrCorrupt, f.Name)
		}
	}
	if err := ValidateName(f.Name); err != nil {
		return f, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if !f.Type.Known() {
		return f, fmt.Errorf("%w: field %q has unknown type id %d", ErrCorrupt, f.Name, b[0])
	}
	args := b[1+NameSize : FieldDescSize]
	if f.Type != TypeNDArray {
		return f, nil // FFCV ignores the arguments of the other types
	}
	for i := range MaxDims {
		d := le.Uint64(args[8*i:])
		if d == 0 {
			break
		}
		f.Shape = append(f.Shape, d)
	}
	tl := le.Uint64(args[MaxDims*8:])
	if tl == 0 || tl > ArgumentsSize-ndarrayArgsHeader {
		return f, fmt.Errorf("%w: field %q: NDArray dtype length %d", ErrCorrupt, f.Name, tl)
	}
	var desc [][]string
	if err := json.Unmarshal(args[ndarrayArgsHeader:ndarrayArgsHeader+tl], &desc); err != nil || len(desc) != 1 || len(desc[0]) != 2 {
		return f, fmt.Errorf("%w: field %q: NDArray dtype %q is not a one-member numpy descr", ErrCorrupt, f.Name, args[ndarrayArgsHeader:ndarrayArgsHeader+tl])
	}
	f.DType = desc[0][1]
	if err := f.check(); err != nil {
		return f, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return f, nil
}

// MetaSize returns the size of t's metadata struct and its alignment in a row.
func MetaSize(t TypeID) (size, align int) {
	switch t {
	case TypeInt, TypeFloat, TypeNDArray:
		return 8, 8
	case TypeRGBImage:
		return 13, 1 // packed mode u8, width u16, height u16, data_ptr u64
	case TypeBytes, TypeJSON:
		return 16, 1 // packed ptr u64, size u64
	}
	return 0, 0
}

// PtrOffset returns where a field's data pointer lies inside its metadata struct, or -1 for
// Int and Float.
func PtrOffset(t TypeID) int {
	switch t {
	case TypeRGBImage:
		return 5
	case TypeBytes, TypeJSON, TypeNDArray:
		return 0
	}
	return -1
}

// RowLayout gives each field's offset in a metadata row and the row size, as numpy computes
// them for a struct of the fields with align=True.
type RowLayout struct {
	Offsets []int
	Size    int
}

// Layout computes the row layout of the given fields.
func Layout(fields []Field) RowLayout {
	var l RowLayout
	off, maxAlign := 0, 1
	for _, f := range fields {
		size, align := MetaSize(f.Type)
		off = alignUp(off, align)
		l.Offsets = append(l.Offsets, off)
		off += size
		maxAlign = max(maxAlign, align)
	}
	l.Size = alignUp(off, maxAlign)
	return l
}

// MetadataOffset returns where the metadata table starts in a file with nf fields.
func MetadataOffset(nf int) int64 { return HeaderSize + FieldDescSize*int64(nf) }

// DataStart returns the start of the data region for a metadata table ending at end.
func DataStart(end, pageSize int64) int64 { return alignUp64(end, pageSize) }

// AllocEntry is one allocation table entry.
type AllocEntry struct {
	SampleID, Ptr, Size uint64
}

// Put encodes e into b[:AllocEntrySize].
func (e AllocEntry) Put(b []byte) {
	_ = b[AllocEntrySize-1]
	le.PutUint64(b[0:], e.SampleID)
	le.PutUint64(b[8:], e.Ptr)
	le.PutUint64(b[16:], e.Size)
}

// DecodeAllocEntry decodes b[:AllocEntrySize].
func DecodeAllocEntry(b []byte) AllocEntry {
	_ = b[AllocEntrySize-1]
	return AllocEntry{SampleID: le.Uint64(b[0:]), Ptr: le.Uint64(b[8:]), Size: le.Uint64(b[16:])}
}

// ImageMeta is an RGBImage metadata struct.
type ImageMeta struct {
	Mode          uint8
	Width, Height uint16
	Ptr           uint64
}

// Put encodes m into b[:13].
func (m ImageMeta) Put(b []byte) {
	b[0] = m.Mode
	le.PutUint16(b[1:], m.Width)
	le.PutUint16(b[3:], m.Height)
	le.PutUint64(b[5:], m.Ptr)
}

// GetImageMeta decodes an RGBImage metadata struct.
func GetImageMeta(b []byte) ImageMeta {
	return ImageMeta{Mode: b[0], Width: le.Uint16(b[1:]), Height: le.Uint16(b[3:]), Ptr: le.Uint64(b[5:])}
}

func alignUp(n, a int) int { return (n + a - 1) / a * a }

func alignUp64(n, a int64) int64 { return (n + a - 1) / a * a }
