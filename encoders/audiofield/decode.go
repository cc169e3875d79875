package audiofield

import (
	"bytes"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/mewkiz/flac"
	"github.com/mewkiz/flac/frame"

	"github.com/mldf/convert/encoders"
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

// maxPrealloc bounds the samples allocated up front from STREAMINFO's (untrusted) count.
const maxPrealloc = 1 << 22

// DecodeFLAC decodes a FLAC stream with github.com/mewkiz/flac and verifies the MD5 of the
// decoded samples against STREAMINFO (signed little-endian, ceil(bps/8) bytes per sample,
// interleaved). It never panics: a panic inside the library on hostile input is recovered and
// reported as ErrCorrupt.
func DecodeFLAC(b []byte) (c *Clip, info FLACInfo, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("%w: decoder failed: %v", ErrCorrupt, r)
		}
	}()
	if err := checkStreamInfo(b); err != nil {
		return nil, info, err
	}
	st, err := flac.New(bytes.NewReader(b))
	if err != nil {
		return nil, info, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	si := st.Info
	bps, nch := int(si.BitsPerSample), int(si.NChannels)
	switch {
	case bps > 24:
		return nil, info, fmt.Errorf("%w: %d-bit FLAC (the decoder supports 4..24 bits)", ErrUnsupported, bps)
	case bps < 4 || nch < 1 || nch > 8 || si.SampleRate == 0:
		return nil, info, fmt.Errorf("%w: STREAMINFO says %d bits, %d channels, %d Hz", ErrCorrupt, bps, nch, si.SampleRate)
	case si.SampleRate > MaxSampleRate:
		return nil, info, fmt.Errorf("%w: STREAMINFO says %d Hz (accepted: 1..%d Hz)", ErrUnsupported, si.SampleRate, MaxSampleRate)
	}
	if si.NSamples > MaxDecodedSamples/uint64(nch) {
		return nil, info, fmt.Errorf("%w: STREAMINFO declares %d samples per channel (limit %d in all)", ErrTooLarge, si.NSamples, MaxDecodedSamples)
	}
	info.MD5 = si.MD5sum
	info.MD5Set = si.MD5sum != [16]byte{}
	c = &Clip{SampleRate: int(si.SampleRate), Channels: nch, BitDepth: bps}
	if n := si.NSamples * uint64(nch); n > 0 {
		c.Int = make([]int32, 0, min(n, maxPrealloc))
	}
	h := md5.New()
	width := (bps + 7) / 8
	var buf []byte
	for fi := 0; ; fi++ {
		if si.NSamples != 0 && uint64(len(c.Int)/nch) >= si.NSamples {
			break // all samples decoded; trailing bytes (an ID3v1 tag, say) are ignored
		}
		f, err := st.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, frame.ErrInvalidSync) {
				return nil, info, fmt.Errorf("%w: frame %d: bad frame sync code", ErrCorrupt, fi)
			}
			return nil, info, fmt.Errorf("%w: frame %d header: %v", ErrCorrupt, fi, err)
		}
		if f.BitsPerSample == 0 { // "get from STREAMINFO"
			f.BitsPerSample = si.BitsPerSample
		}
		if int(f.BitsPerSample) != bps || f.Channels.Count() != nch {
			return nil, info, fmt.Errorf("%w: frame %d has %d bits, %d channels; STREAMINFO %d bits, %d channels",
				ErrCorrupt, fi, f.BitsPerSample, f.Channels.Count(), bps, nch)
		}
		if f.SampleRate != 0 && f.SampleRate != si.SampleRate {
			return nil, info, fmt.Errorf("%w: frame %d has sample rate %d, STREAMINFO %d", ErrCorrupt, fi, f.SampleRate, si.SampleRate)
		}
		if err := f.Parse(); err != nil {
			return nil, info, fmt.Errorf("%w: frame %d: %v", ErrCorrupt, fi, err)
		}
		n := int(f.BlockSize)
		for ch, sf := range f.Subframes {
			if len(sf.Samples) != n {
				return nil, info, fmt.Errorf("%w: frame %d channel %d has %d of %d samples", ErrCorrupt, fi, ch, len(sf.Samples), n)
			}
		}
		base := len(c.Int)
		if base+n*nch > MaxDecodedSamples {
			return nil, info, fmt.Errorf("%w: more than %d samples", ErrTooLarge, MaxDecodedSamples)
		}
		c.Int = slices.Grow(c.Int, n*nch)[:base+n*nch]
		out := c.Int[base:]
		for ch, sf := range f.Subframes {
			for i, v := range sf.Samples {
				out[i*nch+ch] = v
			}
		}
		if info.MD5Set {
			buf = appendLE(buf[:0], out, width)
			h.Write(buf)
		}
	}
	frames := len(c.Int) / nch
	if frames == 0 {
		return nil, info, fmt.Errorf("%w: no audio frames", ErrCorrupt)
	}
	if si.NSamples != 0 && uint64(frames) != si.NSamples {
		return nil, info, fmt.Errorf("%w: %d samples decoded, STREAMINFO says %d", ErrCorrupt, frames, si.NSamples)
	}
	if info.MD5Set {
		var got [16]byte
		h.Sum(got[:0])
		if got != info.MD5 {
			return nil, info, fmt.Errorf("%w: %w: computed %x, STREAMINFO %x", ErrCorrupt, ErrMD5, got, info.MD5)
		}
	}
	return c, info, nil
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
