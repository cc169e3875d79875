package audiofield

import (
	"errors"
	"fmt"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/internal/flacdec"
	"github.com/mldf/convert/internal/wav"
)

// Errors of the decoders and fields. They are wrapped with the file name and details; test
// with errors.Is. WAV errors are those of internal/wav (wav.ErrTruncated and so on).
var (
	ErrFormat       = errors.New("audio: not a WAV or FLAC file")
	ErrCorrupt      = errors.New("audio: corrupt FLAC stream")
	ErrMD5          = errors.New("audio: FLAC MD5 mismatch (decoded samples differ from STREAMINFO)")
	ErrNoStreamInfo = errors.New("audio: FLAC stream does not start with a STREAMINFO block")
	ErrUnsupported  = errors.New("audio: unsupported audio")
	ErrSegment      = errors.New("audio: invalid segment")
	ErrTooLong      = fmt.Errorf("audio: longer than max_duration (%w)", encoders.ErrFiltered)
	ErrTooLarge     = errors.New("audio: too many samples for the format")
	ErrValue        = errors.New("audio: value is not an audio file")
	ErrEmpty        = errors.New("audio: no samples")
)

// Clip is decoded audio: interleaved frames as integers (Int, at BitDepth) or floats (Float,
// nominal range [-1, 1]).
type Clip struct {
	SampleRate int
	Channels   int
	// BitDepth is the integer sample depth (values in [-2^(BitDepth-1), 2^(BitDepth-1))), or
	// 32 for float samples.
	BitDepth int
	IsFloat  bool
	Int      []int32
	Float    []float32
}

// Frames returns the number of frames (samples per channel).
func (c *Clip) Frames() int {
	if c.Channels == 0 {
		return 0
	}
	if c.IsFloat {
		return len(c.Float) / c.Channels
	}
	return len(c.Int) / c.Channels
}

// Container is the detected file format of an audio input.
type Container uint8

// Containers recognised by Sniff.
const (
	ContainerUnknown Container = iota
	ContainerWAV
	ContainerFLAC
)

// Sniff tells the container from the first bytes: "RIFF"/"RIFX" is WAV, "fLaC" (optionally
// after an ID3v2 tag) is FLAC.
func Sniff(b []byte) Container {
	switch {
	case len(b) >= 4 && (string(b[:4]) == "RIFF" || string(b[:4]) == "RIFX"):
		return ContainerWAV
	case len(b) >= 4 && string(b[:4]) == "fLaC":
		return ContainerFLAC
	case len(b) >= 10 && string(b[:3]) == "ID3":
		return ContainerFLAC // the FLAC decoder skips the tag and checks the signature
	}
	return ContainerUnknown
}

// Decode decodes a WAV or FLAC file held in b (the format is sniffed from its bytes). FLAC
// streams are checked against their STREAMINFO MD5. Errors do not name the file; callers do.
func Decode(b []byte) (*Clip, error) {
	switch Sniff(b) {
	case ContainerWAV:
		a, err := wav.Decode(b)
		if err != nil {
			return nil, err
		}
		return &Clip{SampleRate: a.SampleRate, Channels: a.Channels, BitDepth: a.BitDepth,
			IsFloat: a.IsFloat, Int: a.Int, Float: a.Float}, nil
	case ContainerFLAC:
		c, _, err := DecodeFLAC(b)
		return c, err
	}
	n := min(len(b), 4)
	return nil, fmt.Errorf("%w (starts with %q)", ErrFormat, b[:n])
}

// FLACInfo is what DecodeFLAC reports about the stream besides the samples.
type FLACInfo struct {
	// MD5Set is false when STREAMINFO's MD5 is all zero ("not computed"); the check is then
	// skipped.
	MD5Set bool
	MD5    [16]byte
}

// MaxDecodedSamples bounds the samples (all channels) one FLAC stream may decode to: a small
// hostile stream of constant subframes could otherwise expand into gigabytes. 2^30 samples is
// over 3 hours of 48 kHz stereo; longer clips cannot be stored in one 4 GiB payload anyway.
const MaxDecodedSamples = 1 << 30

// DecodeFLAC decodes a FLAC stream with internal/flacdec and verifies the MD5 of the
// decoded samples against STREAMINFO (signed little-endian, ceil(bps/8) bytes per sample,
// interleaved), every frame's CRCs and the sample count. It never panics on hostile input.
func DecodeFLAC(b []byte) (c *Clip, info FLACInfo, err error) {
	si, info, err := flacHeader(b)
	if err != nil {
		return nil, info, err
	}
	samples, _, err := flacdec.DecodeOptions(b, flacdec.Options{MaxSamples: MaxDecodedSamples})
	if err = flacError(err); err != nil {
		return nil, info, err
	}
	return &Clip{SampleRate: si.SampleRate, Channels: si.Channels, BitDepth: si.BitsPerSample, Int: samples}, info, nil
}

// flacError maps an error of internal/flacdec to the package's errors.
func flacError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flacdec.ErrTooLarge):
		return fmt.Errorf("%w: %w", ErrTooLarge, err)
	case errors.Is(err, flacdec.ErrMD5):
		return fmt.Errorf("%w: %w: %w", ErrCorrupt, ErrMD5, err)
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, err)
}

// flacHeader checks the metadata of a FLAC stream against the limits of the audio fields.
func flacHeader(b []byte) (si flacdec.Info, info FLACInfo, err error) {
	if err := checkStreamInfo(b); err != nil {
		return si, info, err
	}
	si, _, err = flacdec.ParseInfo(b)
	if err != nil {
		return si, info, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	bps, nch := si.BitsPerSample, si.Channels
	switch {
	case bps > 24:
		return si, info, fmt.Errorf("%w: %d-bit FLAC (the audio fields take 4..24 bits)", ErrUnsupported, bps)
	case si.SampleRate == 0:
		return si, info, fmt.Errorf("%w: STREAMINFO says %d bits, %d channels, %d Hz", ErrCorrupt, bps, nch, si.SampleRate)
	case si.SampleRate > MaxSampleRate:
		return si, info, fmt.Errorf("%w: STREAMINFO says %d Hz (accepted: 1..%d Hz)", ErrUnsupported, si.SampleRate, MaxSampleRate)
	}
	if si.TotalSamples > MaxDecodedSamples/uint64(nch) {
		return si, info, fmt.Errorf("%w: STREAMINFO declares %d samples per channel (limit %d in all)", ErrTooLarge, si.TotalSamples, MaxDecodedSamples)
	}
	info.MD5 = si.MD5
	info.MD5Set = si.MD5Set()
	return si, info, nil
}

// checkStreamInfo checks that the first metadata block is a 34-byte STREAMINFO, which the
// library reports only with a confusing message.
func checkStreamInfo(b []byte) error {
	p := 0
	if len(b) >= 10 && string(b[:3]) == "ID3" {
		size := int(b[6]&0x7f)<<21 | int(b[7]&0x7f)<<14 | int(b[8]&0x7f)<<7 | int(b[9]&0x7f)
		p = 10 + size
	}
	if len(b) < p+8 || string(b[p:p+4]) != "fLaC" {
		return fmt.Errorf("%w: no fLaC signature", ErrCorrupt)
	}
	typ := b[p+4] & 0x7f
	length := int(b[p+5])<<16 | int(b[p+6])<<8 | int(b[p+7])
	if typ != 0 {
		return fmt.Errorf("%w (first block has type %d)", ErrNoStreamInfo, typ)
	}
	if length != 34 {
		return fmt.Errorf("%w: STREAMINFO block length %d, want 34", ErrCorrupt, length)
	}
	if len(b) < p+8+34 {
		return fmt.Errorf("%w: stream ends inside STREAMINFO", ErrCorrupt)
	}
	return nil
}

// appendLE appends samples as signed little-endian integers of width bytes.
func appendLE(dst []byte, s []int32, width int) []byte {
	switch width {
	case 1:
		for _, v := range s {
			dst = append(dst, byte(v))
		}
	case 2:
		for _, v := range s {
			dst = append(dst, byte(v), byte(v>>8))
		}
	case 3:
		for _, v := range s {
			dst = append(dst, byte(v), byte(v>>8), byte(v>>16))
		}
	default:
		for _, v := range s {
			dst = append(dst, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
		}
	}
	return dst
}
