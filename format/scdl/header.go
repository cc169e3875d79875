package scdl

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Header is the content of header.sch.
type Header struct {
	Version  [3]uint8 // major, minor, point
	Backend  Backend
	Arrays   []ArrayInfo
	Features []FeatureIndexInfo
	// Chunked is set for the CHUNKED_MEMMAP_V0 backend (a trailing extension of the current
	// code); this package writes MEMMAP_V0 archives, whose header ends with a 0 flag byte.
	Chunked *ChunkedInfo
}

// ArrayInfo describes one array.
type ArrayInfo struct {
	Name   string
	Length uint64 // elements
	DType  DType
	Shape  []uint32 // nil: no shape
}

// FeatureIndexInfo describes one feature index directory.
type FeatureIndexInfo struct {
	Name   string
	Length uint64 // rows (cells) the index covers
	DType  DType
	Files  []string // paths relative to the archive
	Shape  []uint32
}

// ChunkedInfo is the chunking of a CHUNKED_MEMMAP_V0 archive.
type ChunkedInfo struct {
	ChunkSize, NumChunks uint32
	TotalRows            uint64
}

// Array returns the array named name, or nil.
func (h *Header) Array(name string) *ArrayInfo {
	for i := range h.Arrays {
		if h.Arrays[i].Name == name {
			return &h.Arrays[i]
		}
	}
	return nil
}

// Feature returns the feature index named name, or nil.
func (h *Header) Feature(name string) *FeatureIndexInfo {
	for i := range h.Features {
		if h.Features[i].Name == name {
			return &h.Features[i]
		}
	}
	return nil
}

// Validate applies the schema's rules to a header (as BioNeMo's writer does before it
// serializes one): non-empty UTF-8 names of at most 1024 bytes, unique among arrays and
// feature indices, known dtypes, positive shape dimensions, a supported major version.
func (h *Header) Validate() error {
	if h.Version[0] > Version[0] {
		return ruleErr("version", HeaderFile, "major version %d is newer than %d", h.Version[0], Version[0])
	}
	if h.Backend != BackendMemmapV0 && h.Backend != BackendChunkedMemmapV0 {
		return ruleErr("backend", HeaderFile, "unknown backend %d", uint32(h.Backend))
	}
	if (h.Backend == BackendChunkedMemmapV0) != (h.Chunked != nil) {
		return ruleErr("backend", HeaderFile, "backend %s with chunked info present=%v", h.Backend, h.Chunked != nil)
	}
	seen := map[string]string{}
	name := func(kind, n string) error {
		where := fmt.Sprintf("%s (%s %q)", HeaderFile, kind, n)
		if err := checkString("string length", where, n); err != nil {
			return err
		}
		if len(n) > maxNameBytes {
			return ruleErr("name length", where, "%d bytes, more than %d", len(n), maxNameBytes)
		}
		if prev, dup := seen[n]; dup {
			rule := "unique array names"
			switch {
			case kind == "feature index" && prev == "feature index":
				rule = "unique feature index names"
			case kind != prev:
				rule = "no array/feature index name conflict"
			}
			return ruleErr(rule, where, "the name %q is used twice", n)
		}
		seen[n] = kind
		return nil
	}
	for _, a := range h.Arrays {
		if err := name("array", a.Name); err != nil {
			return err
		}
		if err := checkDescriptor("array "+a.Name, a.DType, a.Shape); err != nil {
			return err
		}
	}
	for _, f := range h.Features {
		if err := name("feature index", f.Name); err != nil {
			return err
		}
		if err := checkDescriptor("feature index "+f.Name, f.DType, f.Shape); err != nil {
			return err
		}
		for i, p := range f.Files {
			if err := checkString("string length", fmt.Sprintf("%s (feature index %q file %d)", HeaderFile, f.Name, i), p); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkString(rule, where, s string) error {
	if len(strings.TrimSpace(s)) == 0 {
		return ruleErr(rule, where, "empty string")
	}
	if !utf8.ValidString(s) {
		return ruleErr("UTF-8", where, "not valid UTF-8")
	}
	return nil
}

func checkDescriptor(what string, d DType, shape []uint32) error {
	where := fmt.Sprintf("%s (%s)", HeaderFile, what)
	if !d.Valid() {
		return ruleErr("dtype", where, "unknown dtype %d", uint32(d))
	}
	if shape != nil && len(shape) == 0 {
		return ruleErr("shape dims", where, "has_shape set with 0 dimensions")
	}
	for i, s := range shape {
		if s == 0 {
			return ruleErr("positive shape", where, "dimension %d is 0", i)
		}
	}
	return nil
}

// MarshalBinary encodes the header as the current BioNeMo code does: core header, array
// descriptors, feature index count and descriptors, then the chunked-info flag byte (and
// the chunked info when set). It validates first.
func (h *Header) MarshalBinary() ([]byte, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	if uint64(len(h.Arrays)) > 1<<32-1 || uint64(len(h.Features)) > 1<<32-1 {
		return nil, fmt.Errorf("%w: too many descriptors", ErrInvalid)
	}
	b := make([]byte, 0, 256)
	b = append(b, Magic...)
	b = append(b, h.Version[0], h.Version[1], h.Version[2], EndianNetwork)
	b = binary.BigEndian.AppendUint32(b, uint32(h.Backend))
	b = binary.BigEndian.AppendUint32(b, uint32(len(h.Arrays)))
	for _, a := range h.Arrays {
		b = appendString(b, a.Name)
		b = binary.BigEndian.AppendUint64(b, a.Length)
		b = binary.BigEndian.AppendUint32(b, uint32(a.DType))
		b = appendShape(b, a.Shape)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(h.Features)))
	for _, f := range h.Features {
		b = appendString(b, f.Name)
		b = binary.BigEndian.AppendUint64(b, f.Length)
		b = binary.BigEndian.AppendUint32(b, uint32(f.DType))
		b = binary.BigEndian.AppendUint32(b, uint32(len(f.Files)))
		for _, p := range f.Files {
			b = appendString(b, p)
		}
		b = appendShape(b, f.Shape)
	}
	if h.Chunked == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = binary.BigEndian.AppendUint32(b, h.Chunked.ChunkSize)
		b = binary.BigEndian.AppendUint32(b, h.Chunked.NumChunks)
		b = binary.BigEndian.AppendUint64(b, h.Chunked.TotalRows)
	}
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func appendShape(b []byte, shape []uint32) []byte {
	if shape == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.BigEndian.AppendUint32(b, uint32(len(shape)))
	for _, d := range shape {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return b
}

// ParseHeader decodes and validates header bytes (untrusted input). Like BioNeMo's reader it
// accepts headers that end after the array descriptors (schema 0.0.x, no feature indices)
// or after the feature indices (no chunked-info flag); unlike it, it refuses bytes left over
// after the last part, counts that promise more descriptors than the bytes can hold, and
// every rule of the schema (see Validate).
func ParseHeader(b []byte) (*Header, error) {
	p := &hparser{b: b}
	if len(b) < 16 {
		return nil, ruleErr("core header size", HeaderFile, "%d bytes, the core header is 16", len(b))
	}
	if string(b[:4]) != Magic {
		return nil, ruleErr("magic", HeaderFile, "magic %q, want %q", b[:4], Magic)
	}
	h := &Header{Version: [3]uint8{b[4], b[5], b[6]}}
	if b[7] != EndianNetwork {
		return nil, ruleErr("endianness", HeaderFile, "endianness %d, must be 1 (NETWORK)", b[7])
	}
	h.Backend = Backend(binary.BigEndian.Uint32(b[8:]))
	narr := binary.BigEndian.Uint32(b[12:])
	p.off = 16
	// Each array descriptor takes at least 17 bytes: a count beyond that is a lie.
	if uint64(narr)*17 > uint64(len(b)-16) {
		return nil, ruleErr("array count", HeaderFile, "%d array descriptors cannot fit in %d bytes", narr, len(b)-16)
	}
	h.Arrays = make([]ArrayInfo, 0, narr)
	for i := range narr {
		where := fmt.Sprintf("%s (array descriptor %d)", HeaderFile, i)
		var a ArrayInfo
		a.Name = p.str(where, "name")
		a.Length = p.u64(where, "length")
		a.DType = DType(p.u32(where, "dtype"))
		a.Shape = p.shape(where)
		if p.err != nil {
			return nil, p.err
		}
		h.Arrays = append(h.Arrays, a)
	}
	if p.off < len(b) {
		nfi := p.u32(HeaderFile, "feature index count")
		if p.err == nil && uint64(nfi)*21 > uint64(len(b)-p.off) {
			return nil, ruleErr("feature index count", HeaderFile, "%d feature index descriptors cannot fit in %d bytes", nfi, len(b)-p.off)
		}
		for i := uint32(0); p.err == nil && i < nfi; i++ {
			where := fmt.Sprintf("%s (feature index descriptor %d)", HeaderFile, i)
			var f FeatureIndexInfo
			f.Name = p.str(where, "name")
			f.Length = p.u64(where, "length")
			f.DType = DType(p.u32(where, "dtype"))
			nf := p.u32(where, "files_count")
			if p.err == nil && uint64(nf)*4 > uint64(len(b)-p.off) {
				return nil, ruleErr("files count", where, "%d file names cannot fit in %d bytes", nf, len(b)-p.off)
			}
			for j := uint32(0); p.err == nil && j < nf; j++ {
				f.Files = append(f.Files, p.str(where, "index file"))
			}
			f.Shape = p.shape(where)
			h.Features = append(h.Features, f)
		}
		if p.err != nil {
			return nil, p.err
		}
	}
	if p.off < len(b) {
		switch flag := p.u8(HeaderFile, "chunked info flag"); flag {
		case 0:
		case 1:
			h.Chunked = &ChunkedInfo{ChunkSize: p.u32(HeaderFile, "chunk_size"), NumChunks: p.u32(HeaderFile, "num_chunks"),
				TotalRows: p.u64(HeaderFile, "total_rows")}
		default:
			return nil, ruleErr("chunked info flag", HeaderFile, "flag %d, must be 0 or 1", flag)
		}
		if p.err != nil {
			return nil, p.err
		}
	}
	if p.off != len(b) {
		return nil, ruleErr("header size", HeaderFile, "%d bytes after the end of the header", len(b)-p.off)
	}
	if err := h.Validate(); err != nil {
		return nil, err
	}
	return h, nil
}

// hparser reads big-endian fields and remembers the first error.
type hparser struct {
	b   []byte
	off int
	err error
}

func (p *hparser) need(n int, where, field string) bool {
	if p.err != nil {
		return false
	}
	if len(p.b)-p.off < n {
		p.err = ruleErr("truncated", where, "%s: need %d bytes at offset %d, have %d", field, n, p.off, len(p.b)-p.off)
		return false
	}
	return true
}

func (p *hparser) u8(where, field string) uint8 {
	if !p.need(1, where, field) {
		return 0
	}
	p.off++
	return p.b[p.off-1]
}

func (p *hparser) u32(where, field string) uint32 {
	if !p.need(4, where, field) {
		return 0
	}
	p.off += 4
	return binary.BigEndian.Uint32(p.b[p.off-4:])
}

func (p *hparser) u64(where, field string) uint64 {
	if !p.need(8, where, field) {
		return 0
	}
	p.off += 8
	return binary.BigEndian.Uint64(p.b[p.off-8:])
}

func (p *hparser) str(where, field string) string {
	n := p.u32(where, field+" length")
	if p.err != nil {
		return ""
	}
	if n == 0 {
		p.err = ruleErr("string length", where, "%s is empty (lengths must be > 0)", field)
		return ""
	}
	if uint64(n) > uint64(len(p.b)-p.off) {
		p.err = ruleErr("truncated", where, "%s: %d bytes at offset %d, have %d", field, n, p.off, len(p.b)-p.off)
		return ""
	}
	s := string(p.b[p.off : p.off+int(n)])
	p.off += int(n)
	if !utf8.ValidString(s) {
		p.err = ruleErr("UTF-8", where, "%s is not valid UTF-8", field)
		return ""
	}
	return s
}

func (p *hparser) shape(where string) []uint32 {
	switch has := p.u8(where, "has_shape"); {
	case p.err != nil:
		return nil
	case has == 0:
		return nil
	case has != 1:
		p.err = ruleErr("has_shape", where, "has_shape %d, must be 0 or 1", has)
		return nil
	}
	n := p.u32(where, "shape_dims")
	if p.err != nil {
		return nil
	}
	if n == 0 {
		p.err = ruleErr("shape dims", where, "has_shape set with 0 dimensions")
		return nil
	}
	if uint64(n)*4 > uint64(len(p.b)-p.off) {
		p.err = ruleErr("truncated", where, "%d shape dimensions at offset %d, have %d bytes", n, p.off, len(p.b)-p.off)
		return nil
	}
	s := make([]uint32, n)
	for i := range s {
		s[i] = p.u32(where, "shape")
	}
	return s
}
