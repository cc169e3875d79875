// Package reader opens MLDF files for random access: sample i, field f, in O(1), with
// payloads returned as zero-copy slices of a read-only memory map. It validates the file's
// structure when opening it and can verify every invariant and checksum of docs/FORMAT.md.
//
// Open checks the signature, the header, the pointers against the file size and each other,
// the field descriptors and the place of the class-names blocks (rules R1..R12 and R14 of
// docs/FORMAT.md §10); it never allocates in
// proportion to a header value before checking that value against the file size. Every
// accessor checks the payload reference it follows (rule R13) and that the value's metadata
// agrees with its payload (field rules F1..F11, manifest.FieldRules). Verify checks the rest
// (rules V1..V8, and F1..F11 for every value): the allocation table, the page rule, the
// one-to-one match of references and allocation entries, the CRC-32C of every payload and the
// header's xxhash64, the class-names blocks; VerifyWith can also decode every payload (rules
// D1..D5, with the decoders of package reader/decode). ClassNames (or Field(name).ClassNames)
// returns a class-label field's names, checked (rule V8).
//
// A Reader is safe for concurrent use by many goroutines until Close. Slices it returns point
// into the mapped file: they are read-only and valid only until Close. The file must not be
// truncated while it is open (a mapped read past the new end raises SIGBUS); writers replace
// files by rename, which is safe.
package mldf

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/mldf/convert/internal/inputfile"
)

// MinPageSize is the smallest page size a file may declare (rule R5).
const MinPageSize = 4096

// Reader gives random access to the samples of one MLDF file.
type Reader struct {
	name string
	size uint64
	src  backing

	hdr       Header
	hdrBytes  []byte // the 64 header bytes
	descBytes []byte // num_fields × 208 bytes
	meta      []byte // the metadata table, num_samples × row size (nil: read when used)
	alloc     []byte // the allocation table, to end of file (nil: read when used)
	metaLen   uint64
	allocLen  uint64

	fields     []FieldDesc
	rules      []*FieldRules // per field: rules F1..F10 (docs/FORMAT.md §10.2)
	classes    []*classBlock // per field: a class label's names (nil: not a class label)
	layout     RowLayout
	hasPayload []bool
	numSamples int
	rowSize    int
	closed     bool
	touched    atomic.Uint64 // bytes of the map scanned since the last trim

	errMu sync.Mutex
	ioErr error // the first read error of an accessor that returns none (see Err)
}

// trimEvery is how many bytes of the mapped file a scan (Verify, Describe) reads between two
// trims of the process's resident set.
const trimEvery = 16 << 20

// touch records that a scan read n bytes of the file; every trimEvery bytes it drops the
// mapped pages from the resident set, so a scan of a file larger than memory keeps the
// process's RSS bounded (the pages stay in the kernel's page cache). Slices handed out stay
// valid: their pages are mapped again when read.
func (r *Reader) touch(n uint64) {
	m, ok := r.src.(*memBacking)
	if !ok || !m.mapped || r.touched.Add(n) < trimEvery {
		return
	}
	r.touched.Store(0)
	dropResident(m.b)
}

// backing is where the file's bytes come from: a memory map or a byte slice (zero-copy), or
// positional reads (a fresh buffer per call).
type backing interface {
	// bytes returns n bytes at off; the caller has checked off+n <= size.
	bytes(off, n uint64) ([]byte, error)
	zeroCopy() bool
	close() error
}

type memBacking struct {
	b      []byte
	mapped bool
}

func (m *memBacking) bytes(off, n uint64) ([]byte, error) {
	end := off + n
	if end < off || end > uint64(len(m.b)) {
		return nil, io.ErrUnexpectedEOF
	}
	return m.b[off:end:end], nil
}

func (m *memBacking) zeroCopy() bool { return true }

func (m *memBacking) close() error {
	if m.mapped && m.b != nil {
		err := munmap(m.b)
		m.b = nil
		return err
	}
	m.b = nil
	return nil
}

// Open opens the MLDF file at path read-only, maps it into memory (falling back to positional
// reads when mapping fails) and validates its structure (rules R1..R12).
func Open(path string) (*Reader, error) { return open(path, true) }

func open(path string, useMmap bool) (*Reader, error) {
	// Opened non-blocking and checked before any read: a named pipe is refused, never
	// waited on (open(2) on a FIFO blocks in the kernel, out of reach of any signal).
	f, st, err := inputfile.OpenRegular(path)
	if errors.Is(err, inputfile.ErrNotRegular) {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	if err != nil {
		return nil, err
	}
	size := st.Size()
	var src backing
	if useMmap && size >= PreambleSize {
		if b, err := mmapFile(f, size); err == nil {
			src = &memBacking{b: b, mapped: true}
			f.Close()
		}
	}
	if src == nil {
		src = newRABacking(f, uint64(size), f)
	}
	r, err := newReader(path, src, uint64(size))
	if err != nil {
		src.close()
		return nil, err
	}
	return r, nil
}

// FromBytes returns a Reader over an MLDF file held in memory. name is used in errors. The
// Reader keeps b; b must not change while the Reader is in use.
func FromBytes(name string, b []byte) (*Reader, error) {
	return newReader(name, &memBacking{b: b}, uint64(len(b)))
}

// checked arithmetic on file offsets.
func mul64(a, b uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	return lo, hi == 0
}

func add64(a, b uint64) (uint64, bool) {
	s, c := bits.Add64(a, b, 0)
	return s, c == 0
}

func newReader(name string, src backing, size uint64) (*Reader, error) {
	r := &Reader{name: name, size: size, src: src}
	fail := func(rule string, err error, format string, args ...any) (*Reader, error) {
		return nil, r.ruleErr(rule, err, format, args...)
	}

	// R1, R2: signature and header present.
	pre, err := src.bytes(0, min(size, PreambleSize))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the header: %w", name, err)
	}
	if size < SignatureSize {
		return fail("R1", ErrSignature, "file is %d bytes, shorter than the %d-byte signature", size, SignatureSize)
	}
	if string(pre[:SignatureSize]) != Signature {
		return fail("R1", ErrSignature, "the first 9 bytes are % X, want % X", pre[:SignatureSize], Signature)
	}
	if size < PreambleSize {
		return fail("R2", ErrCorrupt, "file is %d bytes, shorter than the %d-byte signature and header",
			size, PreambleSize)
	}
	r.hdrBytes = pre[HeaderOffset:PreambleSize:PreambleSize]

	// R3..R5: version, flags, page size.
	h, err := DecodeHeader(r.hdrBytes)
	r.hdr = h
	if err != nil {
		e := r.ruleErr("R5", ErrCorrupt, "")
		switch {
		case h.VersionMajor != VersionMajor:
			e.Rule, e.Err = "R3", ErrVersion
			e.Msg = fmt.Sprintf("file is version %d.%d; this reader reads %d.x", h.VersionMajor, h.VersionMinor, VersionMajor)
			return nil, e
		case h.Flags&FlagLittleEndian == 0:
			e.Rule = "R4"
		case h.Flags&FlagEncrypted != 0:
			e.Rule, e.Err = "R4", ErrUnsupported
		}
		e.Cause = err
		return nil, e
	}
	if h.Flags&FlagCompressed != 0 {
		return fail("R4", ErrUnsupported, "compressed flag set (flags %#x); MLDF 1.x defines no compression of the data region", h.Flags)
	}
	if h.Flags&FlagChecksummed == 0 && h.Checksum != 0 {
		return fail("R4", ErrCorrupt, "flag bit 2 (checksummed) is clear but the header checksum is %016x, where writers store zero: "+
			"the flag was altered (one flipped bit would turn every check off)", h.Checksum)
	}
	if h.PageSize < MinPageSize {
		return fail("R5", ErrCorrupt, "page size %d is smaller than %d", h.PageSize, MinPageSize)
	}

	// R6: at least one field.
	if h.NumFields == 0 {
		return fail("R6", ErrCorrupt, "num_fields is 0")
	}

	// R7: every pointer inside the file.
	for _, p := range []struct {
		name string
		v    uint64
	}{{"field_desc_ptr", h.FieldDescPtr}, {"data_ptr", h.DataPtr}, {"metadata_ptr", h.MetadataPtr}, {"alloc_table_ptr", h.AllocTablePtr}} {
		if p.v > size {
			return fail("R7", ErrCorrupt, "%s %d points past the end of the %d-byte file", p.name, p.v, size)
		}
	}

	// R8: the descriptor block.
	if h.FieldDescPtr < PreambleSize || h.FieldDescPtr%8 != 0 {
		return fail("R8", ErrCorrupt, "field_desc_ptr %d must be a multiple of 8 and at least %d", h.FieldDescPtr, PreambleSize)
	}
	descLen := uint64(h.NumFields) * FieldDescSize // ≤ 65535×208: no overflow
	descEnd, ok := add64(h.FieldDescPtr, descLen)
	if !ok || descEnd > size {
		return fail("R8", ErrCorrupt, "num_fields %d: %d descriptor bytes at %d run past the end of the %d-byte file",
			h.NumFields, descLen, h.FieldDescPtr, size)
	}
	if descEnd > h.DataPtr {
		return fail("R8", ErrCorrupt, "the field descriptors [%d, %d) overlap the data region at data_ptr %d", h.FieldDescPtr, descEnd, h.DataPtr)
	}

	// R9: the data region.
	if h.DataPtr%uint64(h.PageSize) != 0 {
		return fail("R9", ErrCorrupt, "data_ptr %d is not a multiple of the page size %d", h.DataPtr, h.PageSize)
	}
	if h.DataPtr > h.MetadataPtr {
		return fail("R9", ErrCorrupt, "data_ptr %d is after metadata_ptr %d", h.DataPtr, h.MetadataPtr)
	}

	// R10: descriptors.
	if r.descBytes, err = src.bytes(h.FieldDescPtr, descLen); err != nil {
		return nil, fmt.Errorf("%s: reading the field descriptors: %w", name, err)
	}
	r.fields = make([]FieldDesc, h.NumFields)
	r.hasPayload = make([]bool, h.NumFields)
	r.rules = make([]*FieldRules, h.NumFields)
	types := make([]TypeID, h.NumFields)
	seen := make(map[string]int, h.NumFields)
	for k := range r.fields {
		off := k * FieldDescSize
		d, err := DecodeFieldDesc(r.descBytes[off : off+FieldDescSize])
		if err != nil {
			e := r.ruleErr("R10", ErrCorrupt, "descriptor at offset %d", h.FieldDescPtr+uint64(off))
			e.Field, e.Name, e.Cause = k, d.Name, err
			return nil, e
		}
		if j, dup := seen[d.Name]; dup {
			e := r.ruleErr("R10", ErrCorrupt, "duplicate field name (also field %d)", j)
			e.Field, e.Name = k, d.Name
			return nil, e
		}
		seen[d.Name] = k
		r.fields[k] = d
		r.rules[k] = NewFieldRules(d)
		types[k] = d.Type
		_, r.hasPayload[k] = MetaSize(d.Type)
	}
	if r.layout, err = Layout(types); err != nil {
		return fail("R10", ErrCorrupt, "%v", err)
	}
	r.rowSize = r.layout.Size

	// R11: the metadata table.
	if h.MetadataPtr%MetaAlign != 0 {
		return fail("R11", ErrCorrupt, "metadata_ptr %d is not a multiple of %d", h.MetadataPtr, MetaAlign)
	}
	metaLen, ok := mul64(h.NumSamples, uint64(r.rowSize))
	metaEnd, ok2 := add64(h.MetadataPtr, metaLen)
	if !ok || !ok2 || metaEnd > size {
		return fail("R11", ErrCorrupt, "num_samples %d × row size %d from metadata_ptr %d runs past the end of the %d-byte file",
			h.NumSamples, r.rowSize, h.MetadataPtr, size)
	}
	if metaEnd != h.AllocTablePtr {
		return fail("R11", ErrCorrupt, "metadata table [%d, %d) (num_samples %d × row size %d) does not end at alloc_table_ptr %d",
			h.MetadataPtr, metaEnd, h.NumSamples, r.rowSize, h.AllocTablePtr)
	}
	if metaLen > math.MaxInt {
		return fail("R11", ErrUnsupported, "metadata table of %d bytes is too large for this platform", metaLen)
	}
	r.numSamples = int(h.NumSamples)

	// R12: the allocation table runs to the end of the file in whole entries.
	allocLen := size - h.AllocTablePtr
	if allocLen%AllocEntrySize != 0 {
		return fail("R12", ErrCorrupt, "allocation table [%d, %d) is %d bytes, not a multiple of %d",
			h.AllocTablePtr, size, allocLen, AllocEntrySize)
	}

	// R14: the class-names blocks (minor version 1).
	r.classes = make([]*classBlock, h.NumFields)
	if err := r.checkClassBlocks(); err != nil {
		return nil, err
	}

	r.metaLen, r.allocLen = metaLen, allocLen
	if src.zeroCopy() { // in place; positional backings read rows and entries when used
		if r.meta, err = src.bytes(h.MetadataPtr, metaLen); err != nil {
			return nil, fmt.Errorf("%s: reading the metadata table: %w", name, err)
		}
		if r.alloc, err = src.bytes(h.AllocTablePtr, allocLen); err != nil {
			return nil, fmt.Errorf("%s: reading the allocation table: %w", name, err)
		}
	}
	return r, nil
}

// Close unmaps the file. Slices returned by the Reader must not be used afterwards. Close must
// not run concurrently with other methods.
func (r *Reader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.meta, r.alloc, r.descBytes, r.hdrBytes = nil, nil, nil, nil
	r.metaLen, r.allocLen = 0, 0 // AllocEntry and friends see an empty table
	if err := r.src.close(); err != nil {
		return fmt.Errorf("%s: close: %w", r.name, err)
	}
	return nil
}

// Name returns the file name given to Open.
func (r *Reader) Name() string { return r.name }

// Size returns the file size in bytes.
func (r *Reader) Size() int64 { return int64(r.size) }

// Mapped reports whether payloads are zero-copy slices of a memory map (or of the FromBytes
// slice) rather than copies read with ReadAt.
func (r *Reader) Mapped() bool { return r.src.zeroCopy() }

// NumSamples returns the number of samples (metadata rows).
func (r *Reader) NumSamples() int { return r.numSamples }

// Header returns the decoded header.
func (r *Reader) Header() Header { return r.hdr }

// Fields returns the field descriptors in file order (a copy).
func (r *Reader) Fields() []FieldDesc { return append([]FieldDesc(nil), r.fields...) }

// Layout returns the metadata row layout (a copy).
func (r *Reader) Layout() RowLayout {
	return RowLayout{Offsets: append([]int(nil), r.layout.Offsets...), Size: r.layout.Size}
}

// FieldIndex returns the index of the field called name, or -1.
func (r *Reader) FieldIndex(name string) int {
	for k := range r.fields {
		if r.fields[k].Name == name {
			return k
		}
	}
	return -1
}

// Row returns sample i's metadata row (RowLayout.Size bytes, read-only), or nil when i is out
// of range.
func (r *Reader) Row(i int) []byte {
	if r.closed || i < 0 || i >= r.numSamples {
		return nil
	}
	return r.table(r.meta, r.hdr.MetadataPtr, i*r.rowSize, r.rowSize, "metadata table")
}

// Meta returns field f's metadata struct in sample i's row (read-only), or nil when i or f is
// out of range.
func (r *Reader) Meta(i, f int) []byte {
	row := r.Row(i)
	if row == nil || f < 0 || f >= len(r.fields) {
		return nil
	}
	off := r.layout.Offsets[f]
	end := off + int(r.fields[f].MetadataSize)
	return row[off:end:end]
}

// metaErr is Meta with errors.
func (r *Reader) metaErr(i, f int) ([]byte, error) {
	if r.closed {
		return nil, fmt.Errorf("%s: %w", r.name, ErrClosed)
	}
	if i < 0 || i >= r.numSamples {
		return nil, fmt.Errorf("%s: %w: sample %d of %d", r.name, ErrOutOfRange, i, r.numSamples)
	}
	if f < 0 || f >= len(r.fields) {
		return nil, fmt.Errorf("%s: sample %d: %w: field %d of %d", r.name, i, ErrOutOfRange, f, len(r.fields))
	}
	m := r.Meta(i, f)
	if err := r.Err(); err != nil {
		return nil, err
	}
	return m, nil
}

// checkRef applies rule R13 to a payload reference and returns the payload's end offset.
func (r *Reader) checkRef(ref PayloadRef) (end uint64, msg string) {
	if ref.Size == 0 {
		if ref.Ptr != 0 {
			return 0, fmt.Sprintf("empty payload has data_ptr %d, want 0", ref.Ptr)
		}
		return 0, ""
	}
	end, ok := add64(ref.Ptr, uint64(ref.Size))
	if ref.Ptr < r.hdr.DataPtr || !ok || end > r.hdr.MetadataPtr {
		return 0, fmt.Sprintf("payload [%d, %d+%d) lies outside the data region [%d, %d)",
			ref.Ptr, ref.Ptr, ref.Size, r.hdr.DataPtr, r.hdr.MetadataPtr)
	}
	return end, ""
}

// payload returns the payload of a checked reference.
func (r *Reader) payload(i, f int, ref PayloadRef) ([]byte, error) {
	if _, msg := r.checkRef(ref); msg != "" {
		return nil, r.at(r.ruleErr("R13", ErrCorrupt, "%s", msg), i, f)
	}
	if ref.Size == 0 {
		return nil, nil
	}
	b, err := r.src.bytes(ref.Ptr, uint64(ref.Size))
	if err != nil {
		return nil, fmt.Errorf("%s: sample %d, field %d %q: reading payload: %w", r.name, i, f, r.fields[f].Name, err)
	}
	return b, nil
}

// value returns the payload of sample i, field f, whose metadata struct is m, after rules R13
// and F1..F10 (docs/FORMAT.md §10.2).
func (r *Reader) value(i, f int, m []byte) ([]byte, error) {
	p, err := r.payload(i, f, GetRef(m))
	if err != nil {
		return nil, err
	}
	if err := r.rules[f].Check(m, p); err != nil {
		return nil, r.fieldErr(err, i, f)
	}
	return p, nil
}

// fieldErr turns a *manifest.FieldError about sample i, field f into a *RuleError wrapping
// ErrCorrupt (sample -1: about the field's descriptor).
func (r *Reader) fieldErr(err error, i, f int) error {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return fmt.Errorf("%s: sample %d, field %d %q: %w", r.name, i, f, r.fields[f].Name, err)
	}
	return r.at(r.ruleErr(fe.Rule, ErrCorrupt, "%s", fe.Msg), i, f)
}

// FieldRules returns the rules (docs/FORMAT.md §10.2) of field f, read from its descriptor
// when the file was opened, or nil when f is out of range.
func (r *Reader) FieldRules(f int) *FieldRules {
	if f < 0 || f >= len(r.rules) {
		return nil
	}
	return r.rules[f]
}

func (r *Reader) typeErr(i, f int, want string) error {
	return fmt.Errorf("%s: sample %d, field %d %q: %w: field is %s, not %s", r.name, i, f, r.fields[f].Name,
		ErrFieldType, r.fields[f].Type, want)
}

// Payload returns the payload of sample i, field f: a read-only slice of the mapped file (a
// copy when the file could not be mapped), or nil for an empty payload. It checks that the
// reference lies inside the data region (rule R13) and that the metadata agrees with the
// payload (rules F1..F10); it does not check the CRC or decode the payload (see Verify).
func (r *Reader) Payload(i, f int) ([]byte, error) {
	m, err := r.metaErr(i, f)
	if err != nil {
		return nil, err
	}
	if !r.hasPayload[f] {
		return nil, r.typeErr(i, f, "a payload-bearing type")
	}
	return r.value(i, f, m)
}

// Ref returns the payload reference (data_ptr, data_size) of sample i, field f without
// checking it.
func (r *Reader) Ref(i, f int) (PayloadRef, error) {
	m, err := r.metaErr(i, f)
	if err != nil {
		return PayloadRef{}, err
	}
	if !r.hasPayload[f] {
		return PayloadRef{}, r.typeErr(i, f, "a payload-bearing type")
	}
	return GetRef(m), nil
}

// Int returns the value of INT field f in sample i.
func (r *Reader) Int(i, f int) (int64, error) {
	m, err := r.metaErr(i, f)
	if err != nil {
		return 0, err
	}
	if r.fields[f].Type != TypeInt {
		return 0, r.typeErr(i, f, "INT")
	}
	v := GetInt(m)
	if err := r.checkClassValue(i, f, v); err != nil {
		return 0, err
	}
	return v, nil
}

// Float returns the value of FLOAT field f in sample i.
func (r *Reader) Float(i, f int) (float64, error) {
	m, err := r.metaErr(i, f)
	if err != nil {
		return 0, err
	}
	if r.fields[f].Type != TypeFloat {
		return 0, r.typeErr(i, f, "FLOAT")
	}
	return GetFloat(m), nil
}

func isImage(t TypeID) bool { return t >= TypeImageRaw && t <= TypeImagePNG }
func isAudio(t TypeID) bool {
	return t >= TypeAudioWaveform && t <= TypeAudioCodecTokens
}
func isText(t TypeID) bool {
	return t >= TypeTextRaw && t <= TypeTextHierarchical
}

// Image returns the metadata and payload of IMAGE_* field f in sample i, after rules R13 and
// F1..F4 (the payload is nil when a rule fails).
func (r *Reader) Image(i, f int) (ImageMeta, []byte, error) {
	m, err := r.metaErr(i, f)
	if err != nil {
		return ImageMeta{}, nil, err
	}
	if !isImage(r.fields[f].Type) {
		return ImageMeta{}, nil, r.typeErr(i, f, "IMAGE_*")
	}
	p, err := r.value(i, f, m)
	return GetImageMeta(m), p, err
}

// Audio returns the metadata and payload of AUDIO_* field f in sample i, after rules R13 and
// F1, F5..F7 (the payload is nil when a rule fails).
func (r *Reader) Audio(i, f int) (AudioMeta, []byte, error) {
	m, err := r.metaErr(i, f)
	if err != nil {
		return AudioMeta{}, nil, err
	}
	if !isAudio(r.fields[f].Type) {
		return AudioMeta{}, nil, r.typeErr(i, f, "AUDIO_*")
	}
	p, err := r.value(i, f, m)
	return GetAudioMeta(m), p, err
}

// Text returns the metadata and payload of TEXT_* field f in sample i, after rules R13 and
// F1, F8, F9 (the payload is nil when a rule fails).
func (r *Reader) Text(i, f int) (TextMeta, []byte, error) {
	m, err := r.metaErr(i, f)
	if err != nil {
		return TextMeta{}, nil, err
	}
	if !isText(r.fields[f].Type) {
		return TextMeta{}, nil, r.typeErr(i, f, "TEXT_*")
	}
	p, err := r.value(i, f, m)
	return GetTextMeta(m), p, err
}

// NumAllocEntries returns the number of allocation table entries.
func (r *Reader) NumAllocEntries() int { return int(r.allocLen / AllocEntrySize) }

// AllocEntry returns allocation table entry k, unchecked (see Verify), or the zero entry when
// k is out of range.
func (r *Reader) AllocEntry(k int) AllocEntry {
	if k < 0 || k >= r.NumAllocEntries() {
		return AllocEntry{}
	}
	return DecodeAllocEntry(r.table(r.alloc, r.hdr.AllocTablePtr, k*AllocEntrySize, AllocEntrySize, "allocation table"))
}

// AllocTable iterates over the allocation table entries in file order.
func (r *Reader) AllocTable() iter.Seq2[int, AllocEntry] {
	return func(yield func(int, AllocEntry) bool) {
		for k := range r.NumAllocEntries() {
			if !yield(k, r.AllocEntry(k)) {
				return
			}
		}
	}
}
