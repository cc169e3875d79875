package mldf

import (
	"encoding/binary"
	"errors"
	"math"
)

// ErrFieldRule is wrapped by every *FieldError: a field's arguments, a sample's metadata
// struct or a payload breaks a field rule of docs/FORMAT.md §10.2 (F1..F10) or a payload rule
// of §10.3 (D1..D5).
var ErrFieldRule = errors.New("mldf: value breaks a field rule")

// FieldError reports a broken field or payload rule. Rule is "F1".."F10" or "D1".."D5"; Msg
// says what was found and what the rule wants.
type FieldError struct {
	Rule string
	Msg  string
}

// Error returns "MSG (FORMAT.md rule R)".
func (e *FieldError) Error() string { return e.Msg + " (FORMAT.md rule " + e.Rule + ")" }

// Unwrap returns ErrFieldRule.
func (e *FieldError) Unwrap() error { return ErrFieldRule }

// Bounds of the audio metadata (rule F6).
const (
	// MaxSampleRate is the highest sample rate, in Hz, an audio sample may declare.
	MaxSampleRate = 768000
	// MaxFLACChannels is the most channels a FLAC stream can hold.
	MaxFLACChannels = 8
)

// MaxNDArrayDims is the largest ndim a fixed-layout NDARRAY field records.
const MaxNDArrayDims = 8

// The argument layouts the field rules read are the typed values of args.go.
const (
	argsVersion1 = ArgsVersion
	audioInt16   = AudioInt16
	audioFloat32 = AudioFloat32
	audioFLAC    = AudioFLAC
	ndarrayFixed = NDArrayFixed
	ndarrayNPY   = NDArrayNPY
)

// FieldRules checks the values of one field against the field rules of docs/FORMAT.md §10.2
// and the payload rules of §10.3. NewFieldRules reads what the rules need from the field's
// descriptor once; the checks then cost O(1) per sample (and a look at the .npy header of an
// NDARRAY payload). The zero value checks nothing. A FieldRules is immutable and safe for
// concurrent use.
type FieldRules struct {
	Type TypeID
	args *FieldError // the F1 violation of the arguments, or nil
	// recorded: the arguments are not all zero (the field's configuration was written).
	recorded bool
	// none: no rule applies to this field's values (Check returns at once).
	none bool

	channels  uint8  // IMAGE_*: the field's channel count
	maxRes    uint32 // IMAGE_*: longest side, 0 = none
	maxPixels int64  // IMAGE_*: width × height limit, <= 0 = none
	format    uint8  // AUDIO_*: sample format
	width     uint8  // TEXT_TOKENIZED, TEXT_PACKED: bytes per id
	tflags    uint16 // TEXT_*: END 1, PAD_LAST 2
	endID     uint32
	padID     uint32
	vocab     uint32 // 0 = not recorded
	seqLen    uint32 // TEXT_PACKED
	layout    uint8  // NDARRAY
	descr     string // NDARRAY fixed
	shape     []uint64
	fixedSize uint64 // NDARRAY fixed: payload bytes
}

// NewFieldRules returns the rules of the field d. A violation of rule F1 (the arguments) is
// not returned here: Arguments reports it, and Check reports it for every non-empty payload,
// so a file with one bad field descriptor still opens and its other fields stay readable.
func NewFieldRules(d FieldDesc) *FieldRules {
	fr := &FieldRules{Type: d.Type}
	a := d.Arguments
	for _, c := range a {
		if c != 0 {
			fr.recorded = true
			break
		}
	}
	t := d.Type
	fr.none = !(isImageType(t) || t == TypeAudioWaveform || t == TypeAudioCompressed || t == TypeTextRaw ||
		t == TypeTextTokenized || t == TypeTextPacked || (t == TypeNDArray && fr.recorded))
	if !fr.recorded || !fr.hasArgs() {
		return fr
	}
	bad := func(format string, args ...any) *FieldRules {
		fr.args = fieldErr("F1", "%s arguments: "+format, append([]any{d.Type}, args...)...)
		return fr
	}
	if a[0] != argsVersion1 {
		return bad("layout version %d (this reader knows %d)", a[0], argsVersion1)
	}
	switch {
	case isImageType(t):
		ia := decodeImageArgs(&a)
		fr.channels, fr.maxRes, fr.maxPixels = ia.Channels, ia.MaxResolution, ia.MaxPixels
		if ia.Mode > ImageArgSmart {
			return bad("mode %d (want 0 raw, 1 jpeg, 2 png, 3 smart)", ia.Mode)
		}
		if fr.channels != 1 && fr.channels != 3 && fr.channels != 4 {
			return bad("channels %d (want 1, 3 or 4)", fr.channels)
		}
		if fr.maxRes > math.MaxUint16 {
			return bad("max_resolution %d (at most 65535)", fr.maxRes)
		}
	case t == TypeAudioWaveform || t == TypeAudioCompressed:
		var aa AudioArgs
		_ = aa.Unmarshal(a) // the version is checked above
		fr.format = aa.Format
		if t == TypeAudioWaveform && (fr.format < audioInt16 || fr.format > audioFloat32) {
			return bad("sample format %d (want 1 int16, 2 int32, 3 float32)", fr.format)
		}
		if t == TypeAudioCompressed && fr.format != audioFLAC {
			return bad("sample format %d (want 4 flac)", fr.format)
		}
	case t == TypeTextRaw:
	case t == TypeTextTokenized || t == TypeTextPacked:
		ta := decodeTextArgs(&a)
		fr.width, fr.tflags = ta.Width, ta.Flags
		fr.endID, fr.vocab, fr.seqLen, fr.padID = ta.EndID, ta.VocabSize, ta.SeqLen, ta.PadID
		if fr.width != 2 && fr.width != 4 {
			return bad("id width %d (want 2 or 4)", fr.width)
		}
		if t == TypeTextPacked {
			if fr.seqLen == 0 || uint64(fr.seqLen)*uint64(fr.width) > math.MaxUint32 {
				return bad("seq_len %d with %d-byte ids (want 1 .. 4 GiB of ids)", fr.seqLen, fr.width)
			}
		} else if fr.seqLen != 0 {
			return bad("seq_len %d (want 0 for TEXT_TOKENIZED)", fr.seqLen)
		}
	case t == TypeNDArray:
		na := decodeNDArrayArgs(&a)
		fr.layout = na.Layout
		switch fr.layout {
		case ndarrayNPY:
		case ndarrayFixed:
			fr.descr = na.DType
			item, err := DTypeSize(fr.descr)
			if err != nil {
				return bad("%v", err)
			}
			if ndim := int(a[ndarrayNDimAt]); ndim > MaxNDArrayDims {
				return bad("ndim %d (at most %d)", ndim, MaxNDArrayDims)
			}
			fr.shape = na.Shape
			size, ok := ArraySize(item, fr.shape)
			if !ok || size > math.MaxUint32 {
				return bad("shape %v of %s is %s bytes, more than a payload can hold", fr.shape, fr.descr, sizeText(size, ok))
			}
			fr.fixedSize = size
		default:
			return bad("layout %d (want 0 fixed or 1 npy)", a[1])
		}
	}
	return fr
}

// hasArgs reports whether the field's type has documented arguments that the rules read.
func (fr *FieldRules) hasArgs() bool {
	t := fr.Type
	return isImageType(t) || t == TypeAudioWaveform || t == TypeAudioCompressed || t == TypeTextRaw ||
		t == TypeTextTokenized || t == TypeTextPacked || t == TypeNDArray
}

// Arguments returns the field's F1 violation, or nil.
func (fr *FieldRules) Arguments() error {
	if fr == nil || fr.args == nil {
		return nil
	}
	return fr.args
}

// Empty reports whether no per-sample rule applies to the field (INT, FLOAT, BYTES, JSON,
// types without a documented payload, NDARRAY without arguments): Check always returns nil.
func (fr *FieldRules) Empty() bool { return fr == nil || fr.none }

// NeedsPayload reports whether Check reads payload bytes for this field (the .npy header of
// an NDARRAY field stored in the npy layout); for every other field Check needs only the
// metadata struct.
func (fr *FieldRules) NeedsPayload() bool {
	return fr != nil && fr.Type == TypeNDArray && fr.recorded && fr.args == nil && fr.layout == ndarrayNPY
}

func isImageType(t TypeID) bool { return t >= TypeImageRaw && t <= TypeImagePNG }

// Check applies the field rules F1..F10 to one sample's metadata struct meta (MetaSize bytes,
// its payload reference included). payload is needed only when NeedsPayload says so (and may
// be nil otherwise). An empty payload (data_size 0) is a missing value: no rule applies to
// its other members. The error is a *FieldError naming the rule.
func (fr *FieldRules) Check(meta, payload []byte) error {
	if fr == nil || fr.none {
		return nil
	}
	size, has := MetaSize(fr.Type)
	if !has || len(meta) < size {
		return nil
	}
	ref := GetRef(meta)
	if ref.Size == 0 {
		return nil
	}
	if fr.args != nil {
		return fr.args
	}
	switch t := fr.Type; {
	case isImageType(t):
		return fr.checkImage(GetImageMeta(meta), ref.Size)
	case t == TypeAudioWaveform || t == TypeAudioCompressed:
		return fr.checkAudio(GetAudioMeta(meta), ref.Size)
	case t == TypeTextRaw || t == TypeTextTokenized || t == TypeTextPacked:
		return fr.checkText(GetTextMeta(meta), ref.Size)
	case t == TypeNDArray && fr.recorded:
		if fr.layout == ndarrayFixed {
			if uint64(ref.Size) != fr.fixedSize {
				return fieldErr("F10", "NDARRAY payload is %d bytes, dtype %s shape %v needs %d", ref.Size, fr.descr, fr.shape, fr.fixedSize)
			}
			return nil
		}
		if uint64(len(payload)) != uint64(ref.Size) {
			return fieldErr("F10", "NDARRAY payload of %d bytes not available to check (%d given)", ref.Size, len(payload))
		}
		if _, err := ParseNPY(payload); err != nil {
			return fieldErr("F10", "NDARRAY payload is not a .npy file: %v", err)
		}
	}
	return nil
}

// CheckImage applies rules F2..F4 to an image sample's metadata and payload size.
func (fr *FieldRules) checkImage(m ImageMeta, size uint32) error {
	if m.Mode > ImageModePNG {
		return fieldErr("F2", "unknown image mode %d (want 0 raw, 1 jpeg, 2 png)", m.Mode)
	}
	if m.Height == 0 || m.Width == 0 {
		return fieldErr("F3", "image is %dx%d (height x width): a dimension is zero", m.Height, m.Width)
	}
	if m.Channels != 1 && m.Channels != 3 && m.Channels != 4 {
		return fieldErr("F3", "image has %d channels (want 1, 3 or 4)", m.Channels)
	}
	if fr.recorded {
		if m.Channels != fr.channels {
			return fieldErr("F3", "image has %d channels, the field's arguments say %d", m.Channels, fr.channels)
		}
		if fr.maxRes > 0 && (uint32(m.Height) > fr.maxRes || uint32(m.Width) > fr.maxRes) {
			return fieldErr("F3", "image is %dx%d (height x width), larger than the field's max_resolution %d", m.Height, m.Width, fr.maxRes)
		}
		if px := int64(m.Height) * int64(m.Width); fr.maxPixels > 0 && px > fr.maxPixels {
			return fieldErr("F3", "image is %dx%d (height x width) = %d pixels, more than the field's max_pixels %d", m.Height, m.Width, px, fr.maxPixels)
		}
	}
	if m.Mode == ImageModeRaw {
		if want := uint64(m.Height) * uint64(m.Width) * uint64(m.Channels); want != uint64(size) {
			return fieldErr("F4", "raw image %dx%dx%d (height x width x channels) needs %d bytes, the payload has %d", m.Height, m.Width, m.Channels, want, size)
		}
	}
	return nil
}

// PCMWidth returns the bytes per sample of an uncompressed (codec 0) audio payload of the
// given bit depth, or 0 when readers cannot read that depth.
func PCMWidth(bitDepth uint8) int {
	switch bitDepth {
	case 16:
		return 2
	case 32:
		return 4
	}
	return 0
}

// checkAudio applies rules F5..F7.
func (fr *FieldRules) checkAudio(m AudioMeta, size uint32) error {
	switch {
	case m.Codec > AudioCodecFLAC:
		return fieldErr("F5", "unknown audio codec %d (want 0 PCM, 1 FLAC)", m.Codec)
	case fr.Type == TypeAudioWaveform && m.Codec != AudioCodecPCM:
		return fieldErr("F5", "codec %d in an AUDIO_WAVEFORM field (want 0 PCM)", m.Codec)
	case fr.Type == TypeAudioCompressed && m.Codec != AudioCodecFLAC:
		return fieldErr("F5", "codec %d in an AUDIO_COMPRESSED field (want 1 FLAC)", m.Codec)
	}
	if m.NumChannels == 0 || m.NumSamples == 0 {
		return fieldErr("F6", "audio has %d channels and %d frames: zero", m.NumChannels, m.NumSamples)
	}
	if m.SampleRate == 0 || m.SampleRate > MaxSampleRate {
		return fieldErr("F6", "sample rate %d Hz (want 1 .. %d)", m.SampleRate, MaxSampleRate)
	}
	if m.Codec == AudioCodecFLAC {
		if m.NumChannels > MaxFLACChannels || m.BitDepth < 4 || m.BitDepth > 32 {
			return fieldErr("F6", "FLAC with %d channels of %d bits (FLAC holds 1..8 channels of 4..32 bits)", m.NumChannels, m.BitDepth)
		}
		return nil
	}
	w := PCMWidth(m.BitDepth)
	if w == 0 {
		return fieldErr("F6", "PCM bit depth %d (want 16 or 32)", m.BitDepth)
	}
	switch {
	case fr.recorded && fr.format == audioInt16 && m.BitDepth != 16:
		return fieldErr("F6", "PCM bit depth %d, the field's sample format int16 stores 16-bit samples", m.BitDepth)
	case fr.recorded && fr.format != audioInt16 && m.BitDepth != 32:
		return fieldErr("F6", "PCM bit depth %d, the field's sample format (%d: int32 or float32) stores 32-bit samples", m.BitDepth, fr.format)
	case !fr.recorded && m.BitDepth != 16:
		return fieldErr("F6", "PCM bit depth %d in a field without arguments: only 16 (int16) is unambiguous; 32-bit samples need the arguments' sample format (int32 or float32)", m.BitDepth)
	}
	if want := uint64(m.NumSamples) * uint64(m.NumChannels) * uint64(w); want != uint64(size) {
		return fieldErr("F7", "PCM payload is %d bytes, %d frames × %d channels × %d bytes need %d", size, m.NumSamples, m.NumChannels, w, want)
	}
	return nil
}

// TokenWidth returns the bytes per id of a TEXT_* encoding (0 for UTF-8 text or an unknown
// encoding).
func TokenWidth(encoding uint8) int {
	switch encoding {
	case TextTokens32:
		return 4
	case TextTokens16:
		return 2
	}
	return 0
}

// checkText applies rules F8 and F9.
func (fr *FieldRules) checkText(m TextMeta, size uint32) error {
	if m.Encoding > TextTokens16 {
		return fieldErr("F8", "unknown text encoding %d (want 0 UTF-8, 1 int32 ids, 2 int16 ids)", m.Encoding)
	}
	if fr.Type == TypeTextRaw {
		if m.Encoding != TextUTF8 {
			return fieldErr("F8", "encoding %d in a TEXT_RAW field (want 0 UTF-8)", m.Encoding)
		}
		return nil
	}
	w := TokenWidth(m.Encoding)
	if w == 0 {
		return fieldErr("F8", "encoding 0 (UTF-8) in a %s field (want 1 or 2: token ids)", fr.Type)
	}
	if fr.recorded && w != int(fr.width) {
		return fieldErr("F8", "encoding %d (%d-byte ids), the field's arguments say %d-byte ids", m.Encoding, w, fr.width)
	}
	if size%uint32(w) != 0 {
		return fieldErr("F9", "token payload of %d bytes is not a whole number of %d-byte ids", size, w)
	}
	if fr.Type == TypeTextPacked && fr.recorded {
		if want := uint64(fr.seqLen) * uint64(w); uint64(size) != want {
			return fieldErr("F9", "TEXT_PACKED row of %d bytes, seq_len %d × %d bytes need %d", size, fr.seqLen, w, want)
		}
	}
	return nil
}

// CheckTokens applies rule D5 to the ids of a token payload (encoding 1 or 2, already checked
// by F8 and F9): when the field records its vocabulary size, every id is below it, or is the
// field's end id (END flag) or pad id (PAD_LAST flag). The error is a *FieldError.
func (fr *FieldRules) CheckTokens(m TextMeta, payload []byte) error {
	if fr == nil || !fr.recorded || fr.vocab == 0 {
		return nil
	}
	w := TokenWidth(m.Encoding)
	if w == 0 {
		return nil
	}
	le := binary.LittleEndian
	for off := 0; off+w <= len(payload); off += w {
		var id uint32
		if w == 4 {
			id = le.Uint32(payload[off:])
		} else {
			id = uint32(le.Uint16(payload[off:]))
		}
		if id < fr.vocab || (fr.tflags&1 != 0 && id == fr.endID) || (fr.tflags&2 != 0 && id == fr.padID) {
			continue
		}
		return fieldErr("D5", "token %d (byte %d) is id %d, outside the vocabulary of %d ids", off/w, off, id, fr.vocab)
	}
	return nil
}
