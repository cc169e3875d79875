// Package hostile makes lying MLDF files for tests: a valid file edited so that one flag, one
// field's arguments, or one sample's metadata or payload lies, with the allocation check and
// the header checksum recomputed so that the lie is the only defect. Lies lists them with the
// FORMAT.md rule every reader must name; the Go and Python readers, `convert verify` and
// `convert export` are tested against the same list (cmd/convert, cmd/mkfixtures).
package hostile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/mldf/convert/format/mldf"
)

// Reach says which readers can notice a lie.
type Reach int

const (
	// Open: the lie is in the header; opening the file fails (every reader).
	Open Reach = iota
	// Access: reading the sample's value fails (every accessor), and so does verify.
	Access
	// Verify: only a full verification notices it (V rules); the values read fine.
	Verify
	// Decode: only decoding the payload notices it (D rules: verify --decode, and readers
	// that decode the value, such as the Python reader for images).
	Decode
)

// Lie is one lying edit of a valid file.
type Lie struct {
	Name string // file name stem, "lie_..."
	What string
	// Type and Nth select the field: the Nth (0-based) field of this type. Type 0 edits the
	// header only.
	Type mldf.TypeID
	Nth  int
	// Sample is the sample whose metadata or payload is edited; it must have a payload.
	Sample int
	// Header, Args, Meta and Payload are the edits: the 64 header bytes, the field's 128
	// argument bytes, the sample's metadata struct, the sample's payload (in place).
	Header  func(h []byte)
	Args    func(a []byte)
	Meta    func(m []byte)
	Payload func(p []byte) error
	// Rule is the rule every reader in Reach must name; Reach says which readers those are.
	Rule  string
	Reach Reach
}

var le = binary.LittleEndian

// Lies is the table of lying files: one per rule and kind of lie.
var Lies = []Lie{
	// One flipped bit must not turn the checksums off.
	{Name: "lie_flag_checksummed_cleared", What: "flag bit 2 cleared (0x05 -> 0x01) in a checksummed file",
		Header: func(h []byte) { h[4] &^= byte(mldf.FlagChecksummed) }, Rule: "R4", Reach: Open},
	{Name: "lie_flag_cleared_checksum_zeroed", What: "flag bit 2 cleared and the header checksum zeroed: the entries' checks remain",
		Header: func(h []byte) { h[4] &^= byte(mldf.FlagChecksummed); clear(h[mldf.HeaderChecksumOffset:]) },
		Rule:   "V6", Reach: Verify},
	// Metadata that lies about the payload.
	{Name: "lie_image_mode", What: "JPEG sample's mode is 7 (no such mode)", Type: mldf.TypeImageJPEG, Sample: 1,
		Meta: func(m []byte) { m[17] = 7 }, Rule: "F2", Reach: Access},
	{Name: "lie_image_zero_height", What: "raw image with height 0", Type: mldf.TypeImageRaw, Sample: 1,
		Meta: func(m []byte) { le.PutUint16(m[12:], 0) }, Rule: "F3", Reach: Access},
	{Name: "lie_image_channels", What: "JPEG sample says 1 channel in a 3-channel field", Type: mldf.TypeImageJPEG, Sample: 0,
		Meta: func(m []byte) { m[16] = 1 }, Rule: "F3", Reach: Access},
	{Name: "lie_image_raw_size", What: "raw image one pixel wider than its payload", Type: mldf.TypeImageRaw, Sample: 1,
		Meta: func(m []byte) { le.PutUint16(m[14:], le.Uint16(m[14:])+1) }, Rule: "F4", Reach: Access},
	{Name: "lie_audio_codec", What: "FLAC sample names codec 9 (issue 18 item 4)", Type: mldf.TypeAudioCompressed, Sample: 1,
		Meta: func(m []byte) { m[23] = 9 }, Rule: "F5", Reach: Access},
	{Name: "lie_audio_waveform_flac", What: "PCM sample says codec 1 (FLAC)", Type: mldf.TypeAudioWaveform, Sample: 1,
		Meta: func(m []byte) { m[23] = 1 }, Rule: "F5", Reach: Access},
	{Name: "lie_audio_rate", What: "PCM sample at 16777213 Hz", Type: mldf.TypeAudioWaveform, Sample: 1,
		Meta: func(m []byte) { le.PutUint32(m[16:], 16777213) }, Rule: "F6", Reach: Access},
	{Name: "lie_audio_zero_channels", What: "FLAC sample with 0 channels", Type: mldf.TypeAudioCompressed, Sample: 1,
		Meta: func(m []byte) { le.PutUint16(m[20:], 0) }, Rule: "F6", Reach: Access},
	{Name: "lie_audio_pcm_frames", What: "PCM sample claims one frame more than its payload", Type: mldf.TypeAudioWaveform, Sample: 1,
		Meta: func(m []byte) { le.PutUint32(m[12:], le.Uint32(m[12:])+1) }, Rule: "F7", Reach: Access},
	{Name: "lie_text_encoding", What: "token sample with encoding 3", Type: mldf.TypeTextTokenized, Sample: 0,
		Meta: func(m []byte) { m[14] = 3 }, Rule: "F8", Reach: Access},
	{Name: "lie_text_raw_as_tokens", What: "TEXT_RAW sample says int32 ids", Type: mldf.TypeTextRaw, Sample: 0,
		Meta: func(m []byte) { m[14] = 1 }, Rule: "F8", Reach: Access},
	{Name: "lie_ndarray_shape", What: "fixed NDARRAY arguments claim one more row than every payload holds", Type: mldf.TypeNDArray, Sample: 0,
		Args: func(a []byte) { le.PutUint64(a[24:], le.Uint64(a[24:])+1) }, Rule: "F10", Reach: Access},
	// A .npy header that declares 2^40 elements.
	{Name: "lie_npy_header_huge", What: ".npy payload whose header declares 2^40 elements", Type: mldf.TypeNDArray, Nth: 1, Sample: 0,
		Payload: func(p []byte) error { return setNPYShape(p, "(1099511627776,)") }, Rule: "F10", Reach: Access},
	// Only decoding can tell.
	{Name: "lie_jpeg_height", What: "JPEG sample claims 3 rows more than the JPEG has", Type: mldf.TypeImageJPEG, Sample: 1,
		Meta: func(m []byte) { le.PutUint16(m[12:], le.Uint16(m[12:])+3) }, Rule: "D1", Reach: Decode},
	{Name: "lie_flac_frames", What: "FLAC sample claims 1000 frames more than the stream holds", Type: mldf.TypeAudioCompressed, Sample: 1,
		Meta: func(m []byte) { le.PutUint32(m[12:], le.Uint32(m[12:])+1000) }, Rule: "D2", Reach: Decode},
}

// ErrNotApplicable: the file has no field or sample the lie can edit.
var ErrNotApplicable = errors.New("hostile: the file has nothing this lie edits")

// Apply returns a copy of the valid MLDF file b with the lie applied, its payload check
// (when a payload changed) and header checksum recomputed, and the sample and field index it
// edited (-1 for a header lie).
func Apply(b []byte, l Lie) (out []byte, sample, field int, err error) {
	out = append([]byte(nil), b...)
	h, err := mldf.DecodeHeader(out[mldf.HeaderOffset:])
	if err != nil {
		return nil, -1, -1, err
	}
	hdr := out[mldf.HeaderOffset:mldf.PreambleSize]
	sample, field = -1, -1
	if l.Type != 0 {
		types := make([]mldf.TypeID, h.NumFields)
		seen := 0
		for k := range types {
			d, err := mldf.DecodeFieldDesc(out[h.FieldDescPtr+uint64(k)*mldf.FieldDescSize:])
			if err != nil {
				return nil, -1, -1, err
			}
			types[k] = d.Type
			if d.Type == l.Type && field < 0 {
				if seen == l.Nth {
					field = k
				}
				seen++
			}
		}
		if field < 0 || uint64(l.Sample) >= h.NumSamples {
			return nil, -1, -1, fmt.Errorf("%w: %s", ErrNotApplicable, l.Name)
		}
		layout, err := mldf.Layout(types)
		if err != nil {
			return nil, -1, -1, err
		}
		sample = l.Sample
		size, _ := mldf.MetaSize(l.Type)
		moff := h.MetadataPtr + uint64(sample*layout.Size+layout.Offsets[field])
		meta := out[moff : moff+uint64(size)]
		ref := mldf.GetRef(meta)
		if ref.Size == 0 {
			return nil, -1, -1, fmt.Errorf("%w: %s: sample %d has no payload", ErrNotApplicable, l.Name, sample)
		}
		if l.Args != nil {
			aoff := h.FieldDescPtr + uint64(field)*mldf.FieldDescSize + 76
			l.Args(out[aoff : aoff+mldf.ArgumentsSize])
		}
		if l.Meta != nil {
			l.Meta(meta)
		}
		if l.Payload != nil {
			p := out[ref.Ptr : ref.Ptr+uint64(ref.Size)]
			if err := l.Payload(p); err != nil {
				return nil, -1, -1, fmt.Errorf("%s: %w", l.Name, err)
			}
			if h.Flags&mldf.FlagChecksummed != 0 {
				for e := h.AllocTablePtr; e < uint64(len(out)); e += mldf.AllocEntrySize {
					if ae := mldf.DecodeAllocEntry(out[e:]); ae.Ptr == ref.Ptr {
						ae.Check = mldf.PayloadChecksum(p)
						ae.Put(out[e:])
					}
				}
			}
		}
	}
	if l.Header != nil {
		l.Header(hdr)
	}
	if h2, err := mldf.DecodeHeader(hdr); err == nil && h2.Flags&mldf.FlagChecksummed != 0 {
		desc := out[h.FieldDescPtr : h.FieldDescPtr+uint64(h.NumFields)*mldf.FieldDescSize]
		sum := mldf.HeaderChecksum(hdr, desc, out[h.MetadataPtr:h.AllocTablePtr], out[h.AllocTablePtr:])
		le.PutUint64(hdr[mldf.HeaderChecksumOffset:], sum)
	}
	return out, sample, field, nil
}

// setNPYShape rewrites the shape tuple of the .npy value p in place, taking the room from
// the header's padding.
func setNPYShape(p []byte, shape string) error {
	if len(p) < 10 || string(p[:6]) != "\x93NUMPY" || p[6] != 1 {
		return errors.New("not a version 1 .npy value")
	}
	hlen := int(le.Uint16(p[8:]))
	if 10+hlen > len(p) {
		return errors.New("truncated .npy header")
	}
	dict := string(p[10 : 10+hlen])
	i := strings.Index(dict, "'shape': (")
	j := strings.Index(dict[max(i, 0):], ")")
	if i < 0 || j < 0 {
		return errors.New("no shape in the .npy header")
	}
	old := dict[i+len("'shape': ") : i+j+1]
	rest := dict[i+j+1:]
	trimmed := strings.TrimRight(rest, " \n")
	pad := len(rest) - len(trimmed) - 1 // keep the final newline
	grow := len(shape) - len(old)
	if grow > pad {
		return fmt.Errorf("no room for shape %s in the .npy header", shape)
	}
	nd := dict[:i+len("'shape': ")] + shape + trimmed + strings.Repeat(" ", pad-grow) + "\n"
	copy(p[10:], nd)
	return nil
}
