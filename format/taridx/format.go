// Package taridx reads and writes TARIDX files: random-access indexes over one or more tar
// shards, byte-compatible with the reference implementation (glzn iTar). A Writer walks the
// 512-byte header blocks of each shard, seeking over payloads, and a Reader validates an index
// and returns any member's payload from the shard files.
//
// The layout, all integers little-endian, structs packed (docs/TARIDX.md is the full text):
//
//	offset 0         header     64 bytes (HeaderSize)
//	offset 64        extension block: extension names in id order joined by '\n'
//	off_crash        crash block: crash stems for crash ids 1..n_crash joined by '\n'
//	off_arr          rows, 32 bytes each (RowSize), to end of file
//
// Header:
//
//	@0 magic "TARIDX\0\0"  @8 major u16   @10 minor u16   @12 rec_size u16  @14 hdr_size u16
//	@16 n_stems u64        @24 n_rows u64 @32 n_ext u32   @36 n_crash u32
//	@40 off_crash u64      @48 off_arr u64 @56 flags u8   @57 reserved [7]byte (zero)
//
// Row:
//
//	@0 fid u16  @2 offset u64  @10 size u64  @18 extid u16  @20 crashid u32  @24 keyhash u64
//
// offset is the byte offset of the member's 512-byte header block in shard fid; its payload
// is the size bytes at offset+512. keyhash is xxhash64 (seed 0) of the member's stem.
package taridx

import (
	"encoding/binary"
	"errors"
)

// Magic is the 8-byte field that starts every TARIDX file.
const Magic = "TARIDX\x00\x00"

// Sizes of the fixed structures, in bytes.
const (
	HeaderSize = 64
	RowSize    = 32
	BlockSize  = 512 // a tar header block
)

// Format version written by this package. Readers accept any minor of VersionMajor.
const (
	VersionMajor = 1
	VersionMinor = 0
)

// FlagContiguous (header flags bit 0) says the rows are grouped contiguously by
// (keyhash, crashid): every stem's rows form one run.
const FlagContiguous = 0x01

// MaxShards is the number of shards one index can address (fid is a u16).
const MaxShards = 1 << 16

// Errors. Each is wrapped with the file, shard and offset it concerns.
var (
	// ErrMagic means the file does not start with the TARIDX magic.
	ErrMagic = errors.New("taridx: not a TARIDX file (bad magic)")
	// ErrVersion means the file's major version is not one this package understands.
	ErrVersion = errors.New("taridx: unsupported major version")
	// ErrCorrupt means the index is internally inconsistent (sizes, offsets, counts, ids).
	ErrCorrupt = errors.New("taridx: corrupt index")
	// ErrSize means a tar header's size field is not a plain octal number (base-256 sizes,
	// garbage bytes, negative numbers); the reference rejects such shards too.
	ErrSize = errors.New("taridx: unsupported tar size field")
	// ErrCompressed means a shard is a compressed file (gzip, zstd, bzip2, xz, lz4): TARIDX
	// addresses members by their byte offset in an uncompressed tar.
	ErrCompressed = errors.New("taridx: shard is compressed; TARIDX indexes uncompressed tar files")
	// ErrName means a member name cannot be stored: an extension (or a colliding stem) that
	// holds a newline would split the '\n'-joined block. The reference writes such files; no
	// reader can load them, so this writer refuses.
	ErrName = errors.New("taridx: member name cannot be indexed")
	// ErrTooManyShards means a fold has more shards than a u16 fid can number.
	ErrTooManyShards = errors.New("taridx: more than 65536 shards")
	// ErrRow means a row number is out of range.
	ErrRow = errors.New("taridx: row out of range")
	// ErrShard means a row names a shard the Reader was not given, or a member that lies
	// beyond the end of its shard file.
	ErrShard = errors.New("taridx: member not in shard")
)

// Header is the 64-byte header of a TARIDX file.
type Header struct {
	Magic    [8]byte
	Major    uint16
	Minor    uint16
	RecSize  uint16
	HdrSize  uint16
	NStems   uint64
	NRows    uint64
	NExt     uint32
	NCrash   uint32
	OffCrash uint64
	OffArr   uint64
	Flags    uint8
	Reserved [7]byte
}

// Contiguous reports whether flags bit 0 is set.
func (h *Header) Contiguous() bool { return h.Flags&FlagContiguous != 0 }

// AppendBinary appends the header's 64-byte encoding to b.
func (h *Header) AppendBinary(b []byte) ([]byte, error) {
	le := binary.LittleEndian
	b = append(b, h.Magic[:]...)
	b = le.AppendUint16(b, h.Major)
	b = le.AppendUint16(b, h.Minor)
	b = le.AppendUint16(b, h.RecSize)
	b = le.AppendUint16(b, h.HdrSize)
	b = le.AppendUint64(b, h.NStems)
	b = le.AppendUint64(b, h.NRows)
	b = le.AppendUint32(b, h.NExt)
	b = le.AppendUint32(b, h.NCrash)
	b = le.AppendUint64(b, h.OffCrash)
	b = le.AppendUint64(b, h.OffArr)
	b = append(b, h.Flags)
	b = append(b, h.Reserved[:]...)
	return b, nil
}

// decodeHeader decodes 64 bytes; it does not validate.
func decodeHeader(b []byte) Header {
	le := binary.LittleEndian
	var h Header
	copy(h.Magic[:], b[0:8])
	h.Major = le.Uint16(b[8:])
	h.Minor = le.Uint16(b[10:])
	h.RecSize = le.Uint16(b[12:])
	h.HdrSize = le.Uint16(b[14:])
	h.NStems = le.Uint64(b[16:])
	h.NRows = le.Uint64(b[24:])
	h.NExt = le.Uint32(b[32:])
	h.NCrash = le.Uint32(b[36:])
	h.OffCrash = le.Uint64(b[40:])
	h.OffArr = le.Uint64(b[48:])
	h.Flags = b[56]
	copy(h.Reserved[:], b[57:64])
	return h
}

// Row is one indexed tar member (one 512-byte header block).
type Row struct {
	Offset  uint64 // byte offset of the member's header block in its shard
	Size    uint64 // payload size in bytes; the payload starts at Offset+512
	KeyHash uint64 // xxhash64 (seed 0) of the stem
	CrashID uint32 // 0 for the canonical stem of KeyHash, else 1-based index into the crash stems
	FID     uint16 // shard index in the fold
	ExtID   uint16 // index into the extensions
}

func appendRow(b []byte, r Row) []byte {
	le := binary.LittleEndian
	b = le.AppendUint16(b, r.FID)
	b = le.AppendUint64(b, r.Offset)
	b = le.AppendUint64(b, r.Size)
	b = le.AppendUint16(b, r.ExtID)
	b = le.AppendUint32(b, r.CrashID)
	b = le.AppendUint64(b, r.KeyHash)
	return b
}

func decodeRow(b []byte) Row {
	le := binary.LittleEndian
	return Row{
		FID:     le.Uint16(b[0:]),
		Offset:  le.Uint64(b[2:]),
		Size:    le.Uint64(b[10:]),
		ExtID:   le.Uint16(b[18:]),
		CrashID: le.Uint32(b[20:]),
		KeyHash: le.Uint64(b[24:]),
	}
}
