// Package manifest defines the MLDF on-disk layout: the signature, the header, the field
// descriptors, the per-sample metadata structs and the allocation table. It encodes and decodes
// those tables to and from bytes; it does not place payloads or open files.
//
// The layout, all integers little-endian (docs/FORMAT.md is the normative text):
//
//	offset 0        signature  89 4D 4C 44 46 0D 0A 1A 0A                      (9 bytes)
//	offset 9        header     64 bytes                                         (HeaderSize)
//	field_desc_ptr  num_fields × 208-byte field descriptors                     (FieldDescSize)
//	data_ptr        data region, a multiple of page_size, payloads in pages
//	metadata_ptr    num_samples rows; a row is the fields' metadata structs,
//	                C-aligned (numpy align=True), 8-byte aligned start
//	alloc_table_ptr 16-byte entries {ptr u64, size u32, check u32} to end of file
//
// Header, offsets relative to byte 9:
//
//	@0 version_major u16   @2 version_minor u16   @4 flags u32      @8 num_samples u64
//	@16 num_fields u16     @18 pad u16            @20 page_size u32 @24 field_desc_ptr u64
//	@32 metadata_ptr u64   @40 data_ptr u64       @48 alloc_table_ptr u64
//	@56 checksum u64 (the "reserved" 8 bytes: xxhash64 of the tables when FlagChecksummed)
//
// Field descriptor (208 bytes): @0 name [64]byte NUL-padded, @64 type_id u16, @66 flags u16,
// @68 metadata_size u32, @72 pad u32, @76 arguments [128]byte, @204 reserved [4]byte.
package mldf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
)

// Signature is the 9-byte magic that starts every MLDF file.
const Signature = "\x89MLDF\r\n\x1a\n"

// Sizes of the fixed structures, in bytes.
const (
	SignatureSize  = 9
	HeaderOffset   = SignatureSize // the header follows the signature immediately
	HeaderSize     = 64
	PreambleSize   = SignatureSize + HeaderSize // 73: signature plus header
	FieldDescSize  = 208
	ArgumentsSize  = 128
	NameSize       = 64
	MaxNameLen     = NameSize - 1
	AllocEntrySize = 16
)

// Format versions. Readers accept any minor of VersionMajor; VersionMinor is the newest minor
// this package knows (it checks the gaps of files up to it, rule V7). Writers write minor 0
// unless the file holds what a later minor defines: class-names blocks, minor
// VersionMinorClassNames (docs/FORMAT.md §14), so a file without them keeps the bytes of 1.0.
const (
	VersionMajor = 1
	VersionMinor = 1

	VersionMinorClassNames = 1
)

// DefaultPageSize is the page size used when none is given: 2 MiB.
const DefaultPageSize = 2 << 20

// Header flag bits.
const (
	FlagLittleEndian uint32 = 1 << 0 // always set
	FlagCompressed   uint32 = 1 << 1
	FlagChecksummed  uint32 = 1 << 2 // alloc entries carry CRC-32C; header checksum is xxhash64
	FlagEncrypted    uint32 = 1 << 3 // never set by this writer
	knownFlags              = FlagLittleEndian | FlagCompressed | FlagChecksummed | FlagEncrypted
)

// Errors returned when decoding tables. Callers wrap them with the file name.
var (
	ErrSignature    = errors.New("mldf: not an MLDF file (bad signature)")
	ErrVersion      = errors.New("mldf: unsupported major version")
	ErrShort        = errors.New("mldf: truncated structure")
	ErrFieldName    = errors.New("mldf: invalid field name")
	ErrUnknownType  = errors.New("mldf: unknown field type")
	ErrMetaSize     = errors.New("mldf: metadata size does not match field type")
	ErrBadHeader    = errors.New("mldf: inconsistent header")
	ErrPayloadLarge = errors.New("mldf: payload larger than 4 GiB - 1 (data_size is 32-bit)")
)

// TypeID identifies a field type in a field descriptor.
type TypeID uint16

// Field type ids (docs/FORMAT.md §4). Video ids 30..32 are reserved.
const (
	TypeInt              TypeID = 1
	TypeFloat            TypeID = 2
	TypeBytes            TypeID = 3
	TypeNDArray          TypeID = 4
	TypeJSON             TypeID = 5
	TypeImageRaw         TypeID = 10
	TypeImageJPEG        TypeID = 11
	TypeImagePNG         TypeID = 12
	TypeAudioWaveform    TypeID = 20
	TypeAudioCompressed  TypeID = 21
	TypeAudioSpectrogram TypeID = 22
	TypeAudioCodecTokens TypeID = 23
	TypeTextRaw          TypeID = 40
	TypeTextTokenized    TypeID = 41
	TypeTextPacked       TypeID = 42
	TypeTextHierarchical TypeID = 43
	TypeMultimodal       TypeID = 50
)

var typeNames = map[TypeID]string{
	TypeInt: "INT", TypeFloat: "FLOAT", TypeBytes: "BYTES", TypeNDArray: "NDARRAY", TypeJSON: "JSON",
	TypeImageRaw: "IMAGE_RAW", TypeImageJPEG: "IMAGE_JPEG", TypeImagePNG: "IMAGE_PNG",
	TypeAudioWaveform: "AUDIO_WAVEFORM", TypeAudioCompressed: "AUDIO_COMPRESSED",
	TypeAudioSpectrogram: "AUDIO_SPECTROGRAM", TypeAudioCodecTokens: "AUDIO_CODEC_TOKENS",
	TypeTextRaw: "TEXT_RAW", TypeTextTokenized: "TEXT_TOKENIZED", TypeTextPacked: "TEXT_PACKED",
	TypeTextHierarchical: "TEXT_HIERARCHICAL", TypeMultimodal: "MULTIMODAL_SAMPLE",
}

// String returns the type's name as written in docs/FORMAT.md, or TYPE(n) if unknown.
func (t TypeID) String() string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("TYPE(%d)", uint16(t))
}

// Known reports whether t is a type id this version of the format defines.
func (t TypeID) Known() bool { _, ok := typeNames[t]; return ok }

// Sizes of the per-sample metadata structs. Every struct has 8-byte alignment.
const (
	ScalarMetaSize = 8  // INT i64, FLOAT f64
	BlobMetaSize   = 16 // BYTES, JSON, NDARRAY: data_ptr u64, data_size u32, pad u32
	ImageMetaSize  = 24 // data_ptr u64, data_size u32, height u16, width u16, channels u8, mode u8, pad u16
	AudioMetaSize  = 24 // data_ptr u64, data_size u32, num_samples u32, sample_rate u32, num_channels u16, bit_depth u8, codec u8
	TextMetaSize   = 16 // data_ptr u64, data_size u32, num_tokens u16, encoding u8, pad u8
	MetaAlign      = 8
)

// MetaSize returns the size of t's metadata struct and whether t has a payload pointer
// (data_ptr u64 @0, data_size u32 @8). It returns 0 for an unknown type.
func MetaSize(t TypeID) (size int, hasPayload bool) {
	switch {
	case t == TypeInt || t == TypeFloat:
		return ScalarMetaSize, false
	case t == TypeBytes || t == TypeJSON || t == TypeNDArray:
		return BlobMetaSize, true
	case t >= TypeImageRaw && t <= TypeImagePNG:
		return ImageMetaSize, true
	case t >= TypeAudioWaveform && t <= TypeAudioCodecTokens:
		return AudioMetaSize, true
	case t >= TypeTextRaw && t <= TypeTextHierarchical:
		return TextMetaSize, true
	case t == TypeMultimodal:
		return BlobMetaSize, true
	}
	return 0, false
}

// Image modes (ImageMeta.Mode), per sample.
const (
	ImageModeRaw  uint8 = 0 // H×W×C uint8, row-major
	ImageModeJPEG uint8 = 1
	ImageModePNG  uint8 = 2
)

// Audio codecs (AudioMeta.Codec).
const (
	AudioCodecPCM  uint8 = 0 // little-endian interleaved PCM
	AudioCodecFLAC uint8 = 1
)

// Text encodings (TextMeta.Encoding).
const (
	TextUTF8     uint8 = 0
	TextTokens32 uint8 = 1
	TextTokens16 uint8 = 2
)

var le = binary.LittleEndian

// Header is the decoded 64-byte header that follows the signature.
type Header struct {
	VersionMajor  uint16
	VersionMinor  uint16
	Flags         uint32
	NumSamples    uint64
	NumFields     uint16
	PageSize      uint32
	FieldDescPtr  uint64
	MetadataPtr   uint64
	DataPtr       uint64
	AllocTablePtr uint64
	// Checksum is the header's reserved 8 bytes: with FlagChecksummed, xxhash64 (seed 0) of
	// header bytes 0..55, the field descriptors, the metadata table and the allocation table.
	Checksum uint64
}

// Put encodes h into b[:HeaderSize].
func (h *Header) Put(b []byte) {
	_ = b[HeaderSize-1]
	le.PutUint16(b[0:], h.VersionMajor)
	le.PutUint16(b[2:], h.VersionMinor)
	le.PutUint32(b[4:], h.Flags)
	le.PutUint64(b[8:], h.NumSamples)
	le.PutUint16(b[16:], h.NumFields)
	le.PutUint16(b[18:], 0)
	le.PutUint32(b[20:], h.PageSize)
	le.PutUint64(b[24:], h.FieldDescPtr)
	le.PutUint64(b[32:], h.MetadataPtr)
	le.PutUint64(b[40:], h.DataPtr)
	le.PutUint64(b[48:], h.AllocTablePtr)
	le.PutUint64(b[56:], h.Checksum)
}

// DecodeHeader decodes a header from b, which must hold at least HeaderSize bytes. It checks
// only what the header alone can tell (major version, flags, page size); pointer checks
// against the file size belong to the reader.
func DecodeHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("header: %w (%d of %d bytes)", ErrShort, len(b), HeaderSize)
	}
	h := Header{
		VersionMajor:  le.Uint16(b[0:]),
		VersionMinor:  le.Uint16(b[2:]),
		Flags:         le.Uint32(b[4:]),
		NumSamples:    le.Uint64(b[8:]),
		NumFields:     le.Uint16(b[16:]),
		PageSize:      le.Uint32(b[20:]),
		FieldDescPtr:  le.Uint64(b[24:]),
		MetadataPtr:   le.Uint64(b[32:]),
		DataPtr:       le.Uint64(b[40:]),
		AllocTablePtr: le.Uint64(b[48:]),
		Checksum:      le.Uint64(b[56:]),
	}
	if h.VersionMajor != VersionMajor {
		return h, fmt.Errorf("%w %d.%d (this reader reads %d.x)", ErrVersion, h.VersionMajor, h.VersionMinor, VersionMajor)
	}
	if h.Flags&FlagLittleEndian == 0 {
		return h, fmt.Errorf("%w: little-endian flag not set (flags %#x)", ErrBadHeader, h.Flags)
	}
	if h.Flags&FlagEncrypted != 0 {
		return h, fmt.Errorf("%w: encrypted files are not supported (flags %#x)", ErrBadHeader, h.Flags)
	}
	if h.PageSize == 0 || h.PageSize&(h.PageSize-1) != 0 {
		return h, fmt.Errorf("%w: page size %d is not a power of two", ErrBadHeader, h.PageSize)
	}
	return h, nil
}

// FieldDesc is a decoded 208-byte field descriptor.
type FieldDesc struct {
	Name         string
	Type         TypeID
	Flags        uint16
	MetadataSize uint32
	Arguments    [ArgumentsSize]byte
	// ClassNames, for a writer, are the class names of a class-label INT field: the writer
	// stores them in a class-names block (docs/FORMAT.md §14) and records the block in the
	// arguments. They are not part of the 208 descriptor bytes; decoding leaves them nil
	// (readers read the block on request).
	ClassNames []string
}

// ValidateName reports whether name is a valid field name: UTF-8, 1..63 bytes, no NUL.
func ValidateName(name string) error {
	switch {
	case len(name) == 0:
		return fmt.Errorf("%w: empty", ErrFieldName)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: %q is %d bytes (at most %d)", ErrFieldName, name, len(name), MaxNameLen)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: %q is not UTF-8", ErrFieldName, name)
	}
	for i := 0; i < len(name); i++ {
		if name[i] == 0 {
			return fmt.Errorf("%w: %q contains NUL", ErrFieldName, name)
		}
	}
	return nil
}

// Put encodes d into b[:FieldDescSize]. It validates the name and the metadata size.
func (d *FieldDesc) Put(b []byte) error {
	if err := ValidateName(d.Name); err != nil {
		return err
	}
	b = b[:FieldDescSize]
	clear(b)
	copy(b, d.Name)
	le.PutUint16(b[64:], uint16(d.Type))
	le.PutUint16(b[66:], d.Flags)
	le.PutUint32(b[68:], d.MetadataSize)
	copy(b[76:204], d.Arguments[:])
	return nil
}

// DecodeFieldDesc decodes one descriptor and checks its name, type and metadata size.
func DecodeFieldDesc(b []byte) (FieldDesc, error) {
	if len(b) < FieldDescSize {
		return FieldDesc{}, fmt.Errorf("field descriptor: %w", ErrShort)
	}
	n := 0
	for n < NameSize && b[n] != 0 {
		n++
	}
	d := FieldDesc{
		Name:         string(b[:n]),
		Type:         TypeID(le.Uint16(b[64:])),
		Flags:        le.Uint16(b[66:]),
		MetadataSize: le.Uint32(b[68:]),
	}
	copy(d.Arguments[:], b[76:204])
	if n == NameSize {
		return d, fmt.Errorf("%w: name not NUL-terminated within 64 bytes", ErrFieldName)
	}
	for _, c := range b[n:NameSize] {
		if c != 0 {
			return d, fmt.Errorf("%w: %q: bytes after the NUL terminator are not zero", ErrFieldName, d.Name)
		}
	}
	if err := ValidateName(d.Name); err != nil {
		return d, err
	}
	size, _ := MetaSize(d.Type)
	if size == 0 {
		return d, fmt.Errorf("field %q: %w %d", d.Name, ErrUnknownType, uint16(d.Type))
	}
	if int(d.MetadataSize) != size {
		return d, fmt.Errorf("field %q (%s): %w: %d, want %d", d.Name, d.Type, ErrMetaSize, d.MetadataSize, size)
	}
	return d, nil
}

// AllocEntry is one 16-byte allocation table entry.
type AllocEntry struct {
	Ptr   uint64
	Size  uint32
	Check uint32 // CRC-32C of the payload when FlagChecksummed, else 0
}

// Put encodes e into b[:AllocEntrySize].
func (e AllocEntry) Put(b []byte) {
	_ = b[AllocEntrySize-1]
	le.PutUint64(b[0:], e.Ptr)
	le.PutUint32(b[8:], e.Size)
	le.PutUint32(b[12:], e.Check)
}

// DecodeAllocEntry decodes b[:AllocEntrySize].
func DecodeAllocEntry(b []byte) AllocEntry {
	_ = b[AllocEntrySize-1]
	return AllocEntry{Ptr: le.Uint64(b[0:]), Size: le.Uint32(b[8:]), Check: le.Uint32(b[12:])}
}

// RowLayout gives the byte offset of each field's metadata struct inside a metadata row.
type RowLayout struct {
	Offsets []int // per field, in descriptor order
	Size    int   // row size, padded to the largest alignment
}

// Layout computes the C-aligned row layout (numpy align=True) of the given field types.
func Layout(types []TypeID) (RowLayout, error) {
	var l RowLayout
	off := 0
	for _, t := range types {
		size, _ := MetaSize(t)
		if size == 0 {
			return RowLayout{}, fmt.Errorf("%w %d", ErrUnknownType, uint16(t))
		}
		off = alignUp(off, MetaAlign)
		l.Offsets = append(l.Offsets, off)
		off += size
	}
	l.Size = alignUp(off, MetaAlign)
	return l, nil
}

func alignUp[T int | int64](n, a T) T { return (n + a - 1) / a * a }

// PayloadRef is the data_ptr/data_size pair at the start of every payload-bearing struct.
type PayloadRef struct {
	Ptr  uint64
	Size uint32
}

// GetRef reads the payload reference of a payload-bearing metadata struct.
func GetRef(meta []byte) PayloadRef {
	return PayloadRef{Ptr: le.Uint64(meta[0:]), Size: le.Uint32(meta[8:])}
}

// PutRef writes the payload reference into a payload-bearing metadata struct.
func PutRef(meta []byte, r PayloadRef) {
	le.PutUint64(meta[0:], r.Ptr)
	le.PutUint32(meta[8:], r.Size)
}

// CheckPayloadSize returns ErrPayloadLarge if n does not fit data_size (u32).
func CheckPayloadSize(n int) error {
	if uint64(n) > math.MaxUint32 {
		return fmt.Errorf("%w: %d bytes", ErrPayloadLarge, n)
	}
	return nil
}

// PutInt and the other Put*/Get* helpers encode the scalar metadata structs.

// PutInt writes an INT metadata struct (i64).
func PutInt(meta []byte, v int64) { le.PutUint64(meta, uint64(v)) }

// GetInt reads an INT metadata struct.
func GetInt(meta []byte) int64 { return int64(le.Uint64(meta)) }

// PutFloat writes a FLOAT metadata struct (f64).
func PutFloat(meta []byte, v float64) { le.PutUint64(meta, math.Float64bits(v)) }

// GetFloat reads a FLOAT metadata struct.
func GetFloat(meta []byte) float64 { return math.Float64frombits(le.Uint64(meta)) }

// ImageMeta is the IMAGE_* metadata struct without its payload reference.
type ImageMeta struct {
	Height, Width uint16
	Channels      uint8
	Mode          uint8
}

// Put writes m into an IMAGE_* metadata struct, leaving the payload reference untouched.
func (m ImageMeta) Put(meta []byte) {
	le.PutUint16(meta[12:], m.Height)
	le.PutUint16(meta[14:], m.Width)
	meta[16] = m.Channels
	meta[17] = m.Mode
	meta[18], meta[19], meta[20], meta[21], meta[22], meta[23] = 0, 0, 0, 0, 0, 0
}

// GetImageMeta reads an IMAGE_* metadata struct.
func GetImageMeta(meta []byte) ImageMeta {
	return ImageMeta{Height: le.Uint16(meta[12:]), Width: le.Uint16(meta[14:]), Channels: meta[16], Mode: meta[17]}
}

// AudioMeta is the AUDIO_* metadata struct without its payload reference.
type AudioMeta struct {
	NumSamples  uint32 // frames per channel
	SampleRate  uint32
	NumChannels uint16
	BitDepth    uint8
	Codec       uint8
}

// Put writes m into an AUDIO_* metadata struct, leaving the payload reference untouched.
func (m AudioMeta) Put(meta []byte) {
	le.PutUint32(meta[12:], m.NumSamples)
	le.PutUint32(meta[16:], m.SampleRate)
	le.PutUint16(meta[20:], m.NumChannels)
	meta[22] = m.BitDepth
	meta[23] = m.Codec
}

// GetAudioMeta reads an AUDIO_* metadata struct.
func GetAudioMeta(meta []byte) AudioMeta {
	return AudioMeta{NumSamples: le.Uint32(meta[12:]), SampleRate: le.Uint32(meta[16:]),
		NumChannels: le.Uint16(meta[20:]), BitDepth: meta[22], Codec: meta[23]}
}

// TextMeta is the TEXT_* metadata struct without its payload reference.
type TextMeta struct {
	NumTokens uint16 // saturates at 65535; the true count is data_size / id width
	Encoding  uint8
}

// Put writes m into a TEXT_* metadata struct, leaving the payload reference untouched.
func (m TextMeta) Put(meta []byte) {
	le.PutUint16(meta[12:], m.NumTokens)
	meta[14] = m.Encoding
	meta[15] = 0
}

// GetTextMeta reads a TEXT_* metadata struct.
func GetTextMeta(meta []byte) TextMeta {
	return TextMeta{NumTokens: le.Uint16(meta[12:]), Encoding: meta[14]}
}
