package mldf

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Field arguments: the 128 bytes of a field descriptor that record the field's configuration
// (docs/fields/*.md). Each layout is defined once, here, as a typed value with Marshal and
// Unmarshal: the encoders write it, the field rules and the .beton mapping read it, and the
// Python reader's decoders (python/mldf/_format.py) are tested against the vectors
// TestArgsVectors derives from it (testdata/golden/args.json). Byte 0 of every layout is its
// version, ArgsVersion. Unmarshal checks the version and the bytes a layout cannot hold;
// what a value means (a mode, a range) is the user's to check.

// ArgsVersion is the version of every argument layout this package reads and writes.
const ArgsVersion = 1

// ErrArgs is wrapped by every error of an Unmarshal.
var ErrArgs = errors.New("mldf: bad field arguments")

func argsErr(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrArgs}, a...)...)
}

func checkVersion(what string, b *[ArgumentsSize]byte) error {
	if b[0] != ArgsVersion {
		return argsErr("%s arguments: layout version %d (this reader knows %d)", what, b[0], ArgsVersion)
	}
	return nil
}

// Image argument modes (byte 1): 0..2 equal the per-sample ImageMeta modes.
const (
	ImageArgRaw   uint8 = 0
	ImageArgJPEG  uint8 = 1
	ImageArgPNG   uint8 = 2
	ImageArgSmart uint8 = 3
)

// ImageFlagExifOrientation: the EXIF orientation was applied (ImageArgs.Flags bit 0).
const ImageFlagExifOrientation uint8 = 1 << 0

// ImageArgs are an image field's arguments (docs/fields/image.md):
//
//	@0 version u8   @1 mode u8   @2 jpeg_quality u8   @3 channels u8   @4 max_resolution u32
//	@8 filter u8    @9 flags u8  @10 subsampling u8 (0 = 4:2:0)   @11 reserved u8
//	@12 reserved u32   @16 max_pixels i64 (-1 = no limit)   @24..127 reserved
type ImageArgs struct {
	Mode          uint8 // ImageArg*
	JPEGQuality   uint8
	Channels      uint8
	MaxResolution uint32 // longest side, 0 = keep
	Filter        uint8  // resampling filter id (encoders/imagefield.Filter)
	Flags         uint8  // ImageFlagExifOrientation
	Subsampling   uint8  // chroma subsampling of re-encoded JPEGs, 0 = 4:2:0
	MaxPixels     int64  // -1 = no limit
}

// Marshal returns the arguments' bytes.
func (a ImageArgs) Marshal() (b [ArgumentsSize]byte) {
	b[0], b[1], b[2], b[3] = ArgsVersion, a.Mode, a.JPEGQuality, a.Channels
	le.PutUint32(b[4:], a.MaxResolution)
	b[8], b[9], b[10] = a.Filter, a.Flags, a.Subsampling
	le.PutUint64(b[16:], uint64(a.MaxPixels))
	return b
}

// Unmarshal decodes b; reserved bytes must be zero.
func (a *ImageArgs) Unmarshal(b [ArgumentsSize]byte) error {
	if err := checkVersion("image", &b); err != nil {
		return err
	}
	*a = decodeImageArgs(&b)
	if b[11] != 0 || le.Uint32(b[12:]) != 0 {
		return argsErr("image arguments: reserved bytes 11..15 set")
	}
	for i := 24; i < len(b); i++ {
		if b[i] != 0 {
			return argsErr("image arguments: reserved byte %d is %#02x, want 0", i, b[i])
		}
	}
	return nil
}

// decodeImageArgs reads the fields of b without checking anything.
func decodeImageArgs(b *[ArgumentsSize]byte) ImageArgs {
	return ImageArgs{Mode: b[1], JPEGQuality: b[2], Channels: b[3], MaxResolution: le.Uint32(b[4:]),
		Filter: b[8], Flags: b[9], Subsampling: b[10], MaxPixels: int64(le.Uint64(b[16:]))}
}

// Audio sample formats (AudioArgs.Format).
const (
	AudioInt16   uint8 = 1
	AudioInt32   uint8 = 2
	AudioFloat32 uint8 = 3
	AudioFLAC    uint8 = 4
)

// AudioResamplerKaiser: Kaiser-windowed sinc resampling (AudioArgs.Resampler).
const AudioResamplerKaiser uint8 = 1

// AudioArgs are an audio field's arguments (docs/fields/audio.md):
//
//	@0 version u8   @1 format u8   @2 channels u8 (0 keep, 1 mono)   @3 on_long u8 (0 truncate,
//	1 skip)   @4 sample_rate u32 (0 = the source's)   @8 max_duration f64 (0 = no limit)
//	@16 bit_depth u8   @17 passthrough u8   @18 resampler u8   @19 stopband_db u8
//	@20 passband u16 (thousandths of the lower Nyquist)   @22..127 reserved
type AudioArgs struct {
	Format      uint8 // Audio*
	Mono        bool
	SkipLong    bool
	SampleRate  uint32
	MaxDuration float64 // seconds
	BitDepth    uint8
	Passthrough bool // FLAC inputs needing no conversion are stored as they are
	Resampler   uint8
	StopbandDB  uint8
	Passband    uint16
}

// Marshal returns the arguments' bytes.
func (a AudioArgs) Marshal() (b [ArgumentsSize]byte) {
	b[0], b[1] = ArgsVersion, a.Format
	b[2], b[3] = boolByte(a.Mono), boolByte(a.SkipLong)
	le.PutUint32(b[4:], a.SampleRate)
	le.PutUint64(b[8:], math.Float64bits(a.MaxDuration))
	b[16], b[17], b[18], b[19] = a.BitDepth, boolByte(a.Passthrough), a.Resampler, a.StopbandDB
	le.PutUint16(b[20:], a.Passband)
	return b
}

// Unmarshal decodes b.
func (a *AudioArgs) Unmarshal(b [ArgumentsSize]byte) error {
	if err := checkVersion("audio", &b); err != nil {
		return err
	}
	*a = AudioArgs{Format: b[1], Mono: b[2] == 1, SkipLong: b[3] == 1, SampleRate: le.Uint32(b[4:]),
		MaxDuration: math.Float64frombits(le.Uint64(b[8:])), BitDepth: b[16], Passthrough: b[17] == 1,
		Resampler: b[18], StopbandDB: b[19], Passband: le.Uint16(b[20:])}
	return nil
}

// Text argument flags (TextArgs.Flags).
const (
	TextFlagEnd     uint16 = 1 << 0 // an end id follows every document
	TextFlagPadLast uint16 = 1 << 1 // TEXT_PACKED: the last sequence is padded with the pad id
)

// TokenizerNameSize is the room for a tokenizer's name in TextArgs.
const TokenizerNameSize = 32

// TextArgs are a text field's arguments (docs/fields/text.md). TEXT_RAW records the version
// only; TEXT_TOKENIZED and TEXT_PACKED:
//
//	@0 version u8   @1 width u8 (bytes per id)   @2 flags u16   @4 end_id u32   @8 vocab_size u32
//	@12 seq_len u32 (TEXT_PACKED)   @16 pad_id u32   @24 tokenizer [32]byte (NUL-padded)
type TextArgs struct {
	Width     uint8
	Flags     uint16 // TextFlag*
	EndID     uint32
	VocabSize uint32 // 0 = not recorded
	SeqLen    uint32
	PadID     uint32
	Tokenizer string // at most TokenizerNameSize bytes
}

// Marshal returns the arguments' bytes.
func (a TextArgs) Marshal() (b [ArgumentsSize]byte) {
	b[0], b[1] = ArgsVersion, a.Width
	le.PutUint16(b[2:], a.Flags)
	le.PutUint32(b[4:], a.EndID)
	le.PutUint32(b[8:], a.VocabSize)
	le.PutUint32(b[12:], a.SeqLen)
	le.PutUint32(b[16:], a.PadID)
	copy(b[24:24+TokenizerNameSize], a.Tokenizer)
	return b
}

// Unmarshal decodes b.
func (a *TextArgs) Unmarshal(b [ArgumentsSize]byte) error {
	if err := checkVersion("text", &b); err != nil {
		return err
	}
	*a = decodeTextArgs(&b)
	return nil
}

// decodeTextArgs reads the fields of b without checking anything.
func decodeTextArgs(b *[ArgumentsSize]byte) TextArgs {
	return TextArgs{Width: b[1], Flags: le.Uint16(b[2:]), EndID: le.Uint32(b[4:]), VocabSize: le.Uint32(b[8:]),
		SeqLen: le.Uint32(b[12:]), PadID: le.Uint32(b[16:]),
		Tokenizer: strings.TrimRight(string(b[24:24+TokenizerNameSize]), "\x00")}
}

// NDARRAY layouts (NDArrayArgs.Layout).
const (
	NDArrayFixed uint8 = 0 // the payload is the raw C-order array; dtype and shape in the arguments
	NDArrayNPY   uint8 = 1 // the payload is a whole .npy file per sample (shapes may vary)
)

// DTypeNameSize is the room for a numpy descr in NDArrayArgs.
const DTypeNameSize = 16

// ndarrayNDimAt is the offset of the NDARRAY arguments' ndim byte.
const ndarrayNDimAt = 18

// NDArrayArgs are an NDARRAY field's arguments (docs/fields/ndarray.md):
//
//	@0 version u8   @1 layout u8   @2 dtype [16]byte (numpy descr, NUL-padded)   @18 ndim u8
//	@24 shape [8]u64
type NDArrayArgs struct {
	Layout uint8 // NDArray*
	DType  string
	Shape  []uint64 // at most MaxNDArrayDims
}

// Marshal returns the arguments' bytes; a shape longer than MaxNDArrayDims is cut there.
func (a NDArrayArgs) Marshal() (b [ArgumentsSize]byte) {
	b[0], b[1] = ArgsVersion, a.Layout
	copy(b[2:2+DTypeNameSize], a.DType)
	n := min(len(a.Shape), MaxNDArrayDims)
	b[18] = uint8(n)
	for i, d := range a.Shape[:n] {
		le.PutUint64(b[24+8*i:], d)
	}
	return b
}

// Unmarshal decodes b: a fixed layout has at most MaxNDArrayDims dimensions.
func (a *NDArrayArgs) Unmarshal(b [ArgumentsSize]byte) error {
	if err := checkVersion("ndarray", &b); err != nil {
		return err
	}
	*a = NDArrayArgs{Layout: b[1]}
	if a.Layout != NDArrayFixed {
		return nil
	}
	if ndim := int(b[ndarrayNDimAt]); ndim > MaxNDArrayDims {
		return argsErr("ndarray arguments: ndim %d (at most %d)", ndim, MaxNDArrayDims)
	}
	*a = decodeNDArrayArgs(&b)
	return nil
}

// decodeNDArrayArgs reads the fields of b; the shape is read only when ndim <= MaxNDArrayDims.
func decodeNDArrayArgs(b *[ArgumentsSize]byte) NDArrayArgs {
	a := NDArrayArgs{Layout: b[1], DType: strings.TrimRight(string(b[2:2+DTypeNameSize]), "\x00")}
	if ndim := int(b[ndarrayNDimAt]); ndim <= MaxNDArrayDims {
		a.Shape = make([]uint64, ndim)
		for i := range a.Shape {
			a.Shape[i] = le.Uint64(b[24+8*i:])
		}
	}
	return a
}

func boolByte(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}
