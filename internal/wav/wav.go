// Package wav decodes RIFF/RIFX WAVE files into interleaved samples: integer PCM as int32 at
// its container bit depth, IEEE float as float32. It reads the whole file from memory with one
// plain loop over the data chunk and reports truncated or inconsistent files as errors.
//
// Supported: PCM 8-bit (unsigned) / 16 / 24 / 32-bit, IEEE float 32/64, G.711 u-law and a-law
// (decoded to 16-bit PCM), WAVE_FORMAT_EXTENSIBLE with those sub-formats, any channel count,
// little-endian RIFF and big-endian RIFX, any chunks before or after "data".
package wav

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
)

// Errors returned by Decode. They are wrapped with detail; test with errors.Is.
var (
	ErrNotWAV      = errors.New("wav: not a RIFF/RIFX WAVE file")
	ErrTruncated   = errors.New("wav: truncated file")
	ErrNoFormat    = errors.New("wav: no fmt chunk before data")
	ErrNoData      = errors.New("wav: no data chunk")
	ErrFormat      = errors.New("wav: invalid format chunk")
	ErrUnsupported = errors.New("wav: unsupported encoding")
)

// Bounds of what a header may declare. Rates outside MinSampleRate..MaxSampleRate are
// refused with ErrFormat: 768 kHz is the highest rate of real audio hardware, and a rate is
// what resampling tables are built from (a header declaring 16.7 MHz made one of 1.7 GB).
const (
	MinSampleRate = 1
	MaxSampleRate = 768000
)

// Encoding is how the samples of a WAV file were stored.
type Encoding uint8

// Encodings of the source file. Decode turns ULaw and ALaw into 16-bit PCM.
const (
	PCM   Encoding = 1
	Float Encoding = 3
	ALaw  Encoding = 6
	ULaw  Encoding = 7
)

// String returns the encoding's name (pcm, float, a-law, u-law).
func (e Encoding) String() string {
	switch e {
	case PCM:
		return "pcm"
	case Float:
		return "float"
	case ALaw:
		return "a-law"
	case ULaw:
		return "u-law"
	}
	return fmt.Sprintf("encoding(%d)", uint8(e))
}

// Format describes the decoded samples and the file they came from.
type Format struct {
	SampleRate int
	Channels   int
	// BitDepth is the bit depth of the decoded samples: 8, 16, 24 or 32 for integers (the
	// container width; values lie in [-2^(BitDepth-1), 2^(BitDepth-1))), 32 for float.
	BitDepth int
	// ValidBits is the number of meaningful bits the file declares (<= BitDepth for PCM;
	// 64 for a float64 source).
	ValidBits int
	// IsFloat says the samples are in Audio.Float (nominal range [-1, 1]); else Audio.Int.
	IsFloat bool
	// Source is the file's encoding; BigEndian is true for RIFX; Extensible for
	// WAVE_FORMAT_EXTENSIBLE.
	Source     Encoding
	BigEndian  bool
	Extensible bool
	// Width is the number of bytes one sample of one channel takes in the file.
	Width int
}

// Audio is a decoded WAV file: interleaved frames in Int or Float (per Format.IsFloat).
type Audio struct {
	Format
	Frames int
	Int    []int32
	Float  []float32
}

// ReadFile reads and decodes the WAV file at path; errors name the file.
func ReadFile(path string) (*Audio, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	a, err := Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// Header parses the chunks of a WAV file without decoding samples. It returns the format, the
// number of frames, and the data chunk's bytes (whole frames only).
func Header(b []byte) (f Format, data []byte, err error) {
	if len(b) < 12 {
		if len(b) >= 4 && (string(b[:4]) == "RIFF" || string(b[:4]) == "RIFX") {
			return f, nil, fmt.Errorf("%w: %d-byte file ends inside the RIFF header", ErrTruncated, len(b))
		}
		return f, nil, fmt.Errorf("%w: %d bytes", ErrNotWAV, len(b))
	}
	var bo binary.ByteOrder
	switch string(b[:4]) {
	case "RIFF":
		bo = binary.LittleEndian
	case "RIFX":
		bo = binary.BigEndian
		f.BigEndian = true
	default:
		return f, nil, fmt.Errorf("%w: signature %q", ErrNotWAV, b[:4])
	}
	if string(b[8:12]) != "WAVE" {
		return f, nil, fmt.Errorf("%w: form type %q", ErrNotWAV, b[8:12])
	}
	// The RIFF size is ignored: streaming writers leave it wrong. Chunks run to the end of b.
	var haveFmt bool
	var blockAlign int
	p := 12
	for {
		if p == len(b) || (p == len(b)-1 && b[p] == 0) { // end, or a final pad byte
			if !haveFmt {
				return f, nil, ErrNoFormat
			}
			return f, nil, ErrNoData
		}
		if len(b)-p < 8 {
			return f, nil, fmt.Errorf("%w: chunk header at offset %d has %d of 8 bytes", ErrTruncated, p, len(b)-p)
		}
		id := string(b[p : p+4])
		size := int64(bo.Uint32(b[p+4:]))
		body := p + 8
		rest := int64(len(b) - body)
		switch id {
		case "fmt ":
			if size > rest {
				return f, nil, fmt.Errorf("%w: fmt chunk declares %d bytes, %d present", ErrTruncated, size, rest)
			}
			if blockAlign, err = parseFmt(&f, bo, b[body:body+int(size)]); err != nil {
				return f, nil, err
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return f, nil, ErrNoFormat
			}
			if size == math.MaxUint32 && rest < size { // unknown length (streamed): to EOF
				size = rest
			}
			if size > rest {
				return f, nil, fmt.Errorf("%w: data chunk declares %d bytes, only %d present", ErrTruncated, size, rest)
			}
			n := int(size) / blockAlign * blockAlign // a partial last frame is dropped
			return f, b[body : body+n], nil
		default:
			if size > rest {
				return f, nil, fmt.Errorf("%w: %q chunk declares %d bytes, %d present", ErrTruncated, id, size, rest)
			}
		}
		p = body + int(size) + int(size&1)
		if p > len(b) {
			p = len(b) // odd final chunk without its pad byte
		}
	}
}

var subformatTail = [8]byte{0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71}

// parseFmt fills f from a fmt chunk body and returns the block alignment.
func parseFmt(f *Format, bo binary.ByteOrder, c []byte) (int, error) {
	if len(c) < 16 {
		return 0, fmt.Errorf("%w: fmt chunk is %d bytes (need 16)", ErrFormat, len(c))
	}
	tag := bo.Uint16(c[0:])
	ch := int(bo.Uint16(c[2:]))
	rate := bo.Uint32(c[4:])
	blockAlign := int(bo.Uint16(c[12:]))
	bits := int(bo.Uint16(c[14:]))
	valid := bits
	if tag == 0xFFFE {
		if len(c) < 40 {
			return 0, fmt.Errorf("%w: WAVE_FORMAT_EXTENSIBLE fmt chunk is %d bytes (need 40)", ErrFormat, len(c))
		}
		f.Extensible = true
		if vb := int(bo.Uint16(c[18:])); vb != 0 {
			valid = vb
		}
		g := c[24:40]
		code := bo.Uint32(g[0:])
		if bo.Uint16(g[4:]) != 0 || bo.Uint16(g[6:]) != 0x0010 || [8]byte(g[8:16]) != subformatTail || code > 0xFFFF {
			return 0, fmt.Errorf("%w: unknown sub-format GUID %x", ErrUnsupported, g)
		}
		tag = uint16(code)
	}
	switch {
	case ch == 0:
		return 0, fmt.Errorf("%w: 0 channels", ErrFormat)
	case rate < MinSampleRate || rate > MaxSampleRate:
		return 0, fmt.Errorf("%w: sample rate %d Hz (accepted: %d..%d Hz)", ErrFormat, rate, MinSampleRate, MaxSampleRate)
	case bits == 0:
		return 0, fmt.Errorf("%w: 0 bits per sample", ErrFormat)
	case valid > bits:
		return 0, fmt.Errorf("%w: %d valid bits in a %d-bit container", ErrFormat, valid, bits)
	}
	width := (bits + 7) / 8
	if blockAlign != ch*width {
		return 0, fmt.Errorf("%w: block align %d, want %d channels x %d bytes", ErrFormat, blockAlign, ch, width)
	}
	f.Channels, f.SampleRate, f.ValidBits, f.Width = ch, int(rate), valid, width
	f.Source = Encoding(tag)
	switch Encoding(tag) {
	case PCM:
		if width > 4 {
			return 0, fmt.Errorf("%w: %d-bit integer PCM (at most 32)", ErrUnsupported, bits)
		}
		f.BitDepth = width * 8
	case Float:
		if bits != 32 && bits != 64 {
			return 0, fmt.Errorf("%w: %d-bit float (32 or 64)", ErrUnsupported, bits)
		}
		f.BitDepth, f.IsFloat = 32, true
	case ULaw, ALaw:
		if bits != 8 {
			return 0, fmt.Errorf("%w: %d-bit %s (want 8)", ErrFormat, bits, Encoding(tag))
		}
		f.BitDepth, f.ValidBits = 16, 16
	default:
		return 0, fmt.Errorf("%w: format tag %#04x", ErrUnsupported, tag)
	}
	return blockAlign, nil
}

// Decode decodes a whole WAV file held in b.
func Decode(b []byte) (*Audio, error) {
	f, data, err := Header(b)
	if err != nil {
		return nil, err
	}
	width := f.Width
	n := len(data) / width
	a := &Audio{Format: f, Frames: n / f.Channels}
	if f.IsFloat {
		a.Float = make([]float32, n)
		decodeFloat(a.Float, data, width, f.BigEndian)
		return a, nil
	}
	a.Int = make([]int32, n)
	switch f.Source {
	case ULaw:
		for i, c := range data {
			a.Int[i] = int32(ulaw(c))
		}
	case ALaw:
		for i, c := range data {
			a.Int[i] = int32(alaw(c))
		}
	default:
		decodeInt(a.Int, data, width, f.BigEndian)
	}
	return a, nil
}

func decodeInt(dst []int32, d []byte, width int, big bool) {
	switch {
	case width == 1: // 8-bit WAV is unsigned
		for i, c := range d {
			dst[i] = int32(c) - 128
		}
	case width == 2 && !big:
		d = d[:2*len(dst)]
		for i := range dst {
			dst[i] = int32(int16(uint16(d[2*i]) | uint16(d[2*i+1])<<8))
		}
	case width == 2:
		d = d[:2*len(dst)]
		for i := range dst {
			dst[i] = int32(int16(uint16(d[2*i+1]) | uint16(d[2*i])<<8))
		}
	case width == 3 && !big:
		d = d[:3*len(dst)]
		for i := range dst {
			j := 3 * i
			dst[i] = int32(uint32(d[j])<<8|uint32(d[j+1])<<16|uint32(d[j+2])<<24) >> 8
		}
	case width == 3:
		d = d[:3*len(dst)]
		for i := range dst {
			j := 3 * i
			dst[i] = int32(uint32(d[j+2])<<8|uint32(d[j+1])<<16|uint32(d[j])<<24) >> 8
		}
	case width == 4 && !big:
		d = d[:4*len(dst)]
		for i := range dst {
			dst[i] = int32(binary.LittleEndian.Uint32(d[4*i:]))
		}
	default:
		d = d[:4*len(dst)]
		for i := range dst {
			dst[i] = int32(binary.BigEndian.Uint32(d[4*i:]))
		}
	}
}

func decodeFloat(dst []float32, d []byte, width int, big bool) {
	var bo binary.ByteOrder = binary.LittleEndian
	if big {
		bo = binary.BigEndian
	}
	if width == 4 {
		d = d[:4*len(dst)]
		for i := range dst {
			dst[i] = math.Float32frombits(bo.Uint32(d[4*i:]))
		}
		return
	}
	d = d[:8*len(dst)]
	for i := range dst {
		dst[i] = float32(math.Float64frombits(bo.Uint64(d[8*i:])))
	}
}

// ulaw decodes one G.711 u-law byte to 16-bit linear PCM.
func ulaw(c byte) int16 {
	c = ^c
	t := (int32(c&0x0F) << 3) + 0x84
	t <<= (c & 0x70) >> 4
	if c&0x80 != 0 {
		return int16(0x84 - t)
	}
	return int16(t - 0x84)
}

// alaw decodes one G.711 a-law byte to 16-bit linear PCM.
func alaw(c byte) int16 {
	c ^= 0x55
	t := int32(c&0x0F) << 4
	seg := (c & 0x70) >> 4
	switch seg {
	case 0:
		t += 8
	case 1:
		t += 0x108
	default:
		t += 0x108
		t <<= seg - 1
	}
	if c&0x80 != 0 {
		return int16(t)
	}
	return int16(-t)
}

// Encode writes a canonical WAV file (fmt chunk, then data) for tests and fixtures. f gives
// SampleRate, Channels, Source (PCM or Float), ValidBits (8, 16, 24, 32 for PCM; 32 or 64 for
// Float), BigEndian (RIFX) and Extensible. Samples come from ints (PCM, in the ValidBits range;
// 8-bit as signed -128..127) or floats (Float).
func Encode(f Format, ints []int32, floats []float32) ([]byte, error) {
	bits := f.ValidBits
	switch {
	case f.Source == PCM && (bits == 8 || bits == 16 || bits == 24 || bits == 32):
	case f.Source == Float && (bits == 32 || bits == 64):
	default:
		return nil, fmt.Errorf("%w: cannot encode %s at %d bits", ErrUnsupported, f.Source, bits)
	}
	if f.Channels <= 0 || f.SampleRate <= 0 {
		return nil, fmt.Errorf("%w: %d channels at %d Hz", ErrFormat, f.Channels, f.SampleRate)
	}
	n := len(ints)
	if f.Source == Float {
		n = len(floats)
	}
	w := bits / 8
	var bo interface {
		binary.ByteOrder
		binary.AppendByteOrder
	} = binary.LittleEndian
	magic := "RIFF"
	if f.BigEndian {
		bo, magic = binary.BigEndian, "RIFX"
	}
	fmtLen := 16
	if f.Extensible {
		fmtLen = 40
	}
	out := make([]byte, 0, 12+8+fmtLen+8+n*w+1)
	out = append(out, magic...)
	out = bo.AppendUint32(out, 0) // patched below
	out = append(out, "WAVEfmt "...)
	out = bo.AppendUint32(out, uint32(fmtLen))
	tag := uint16(f.Source)
	if f.Extensible {
		tag = 0xFFFE
	}
	out = bo.AppendUint16(out, tag)
	out = bo.AppendUint16(out, uint16(f.Channels))
	out = bo.AppendUint32(out, uint32(f.SampleRate))
	out = bo.AppendUint32(out, uint32(f.SampleRate*f.Channels*w))
	out = bo.AppendUint16(out, uint16(f.Channels*w))
	out = bo.AppendUint16(out, uint16(bits))
	if f.Extensible {
		out = bo.AppendUint16(out, 22)
		out = bo.AppendUint16(out, uint16(bits))
		out = bo.AppendUint32(out, 0)
		out = bo.AppendUint32(out, uint32(f.Source))
		out = bo.AppendUint16(out, 0)
		out = bo.AppendUint16(out, 0x0010)
		out = append(out, subformatTail[:]...)
	}
	out = append(out, "data"...)
	out = bo.AppendUint32(out, uint32(n*w))
	for i := 0; i < n; i++ {
		switch {
		case f.Source == Float && w == 4:
			out = bo.AppendUint32(out, math.Float32bits(floats[i]))
		case f.Source == Float:
			out = bo.AppendUint64(out, math.Float64bits(float64(floats[i])))
		case w == 1:
			out = append(out, byte(ints[i]+128))
		case w == 2:
			out = bo.AppendUint16(out, uint16(ints[i]))
		case w == 3 && f.BigEndian:
			v := uint32(ints[i])
			out = append(out, byte(v>>16), byte(v>>8), byte(v))
		case w == 3:
			v := uint32(ints[i])
			out = append(out, byte(v), byte(v>>8), byte(v>>16))
		default:
			out = bo.AppendUint32(out, uint32(ints[i]))
		}
	}
	if len(out)%2 == 1 {
		out = append(out, 0)
	}
	bo.PutUint32(out[4:], uint32(len(out)-8))
	return out, nil
}
