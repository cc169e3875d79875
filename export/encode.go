package export

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/png"
	"math"
	"strconv"
	"strings"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/audiofield"
	"github.com/mldf/convert/format/mldf"
)

// imageFile returns an image payload as a file and its extension: JPEG and PNG payloads
// as stored, raw pixels encoded to PNG.
func imageFile(m mldf.ImageMeta, p []byte) ([]byte, string, error) {
	switch m.Mode {
	case mldf.ImageModeJPEG:
		return p, "jpg", nil
	case mldf.ImageModePNG:
		return p, "png", nil
	case mldf.ImageModeRaw:
		b, err := rawToPNG(m, p)
		return b, "png", err
	}
	return nil, "", fmt.Errorf("%w: image mode %d (want 0 raw, 1 jpeg, 2 png)", ErrValue, m.Mode)
}

// rawToPNG encodes H×W×C uint8 pixels (C = 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA) as a PNG.
func rawToPNG(m mldf.ImageMeta, p []byte) ([]byte, error) {
	w, h, c := int(m.Width), int(m.Height), int(m.Channels)
	if c < 1 || c > 4 {
		return nil, fmt.Errorf("%w: raw image with %d channels", ErrValue, c)
	}
	if w*h*c != len(p) || w == 0 || h == 0 {
		return nil, fmt.Errorf("%w: raw image %dx%dx%d (height x width x channels) needs %d bytes, payload has %d", ErrValue, h, w, c, w*h*c, len(p))
	}
	var img image.Image
	rect := image.Rect(0, 0, w, h)
	if c == 1 {
		img = &image.Gray{Pix: p, Stride: w, Rect: rect}
	} else if c == 4 {
		img = &image.NRGBA{Pix: p, Stride: 4 * w, Rect: rect}
	} else {
		// The PNG encoder writes an opaque NRGBA image as RGB.
		n := image.NewNRGBA(rect)
		for i, j := 0, 0; i < len(p); i, j = i+c, j+4 {
			if c == 3 {
				n.Pix[j], n.Pix[j+1], n.Pix[j+2], n.Pix[j+3] = p[i], p[i+1], p[i+2], 255
			} else {
				n.Pix[j], n.Pix[j+1], n.Pix[j+2], n.Pix[j+3] = p[i], p[i], p[i], p[i+1]
			}
		}
		img = n
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("%w: encoding PNG: %w", ErrValue, err)
	}
	return buf.Bytes(), nil
}

// wavHeaderSize is the size of the canonical RIFF/WAVE header wavFile writes for PCM; IEEE
// float files carry a 12-byte fact chunk more.
const wavHeaderSize = 44

// wavFile wraps an AUDIO_WAVEFORM payload (little-endian interleaved samples of the field's
// sample format) in a RIFF/WAVE header: format tag 1 (PCM) for int16 and int32, 3 (IEEE
// float) with a fact chunk for float32.
func wavFile(args [mldf.ArgumentsSize]byte, m mldf.AudioMeta, p []byte) ([]byte, error) {
	o, err := audiofield.ParseArguments(args)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrValue, err)
	}
	var width int
	tag := uint16(1)
	switch o.Format {
	case audiofield.Int16:
		width = 2
	case audiofield.Int32:
		width = 4
	case audiofield.Float32:
		width, tag = 4, 3
	default:
		return nil, fmt.Errorf("%w: waveform sample format %s", ErrValue, o.Format)
	}
	ch := int(m.NumChannels)
	if ch == 0 || m.SampleRate == 0 {
		return nil, fmt.Errorf("%w: audio with %d channels at %d Hz", ErrValue, ch, m.SampleRate)
	}
	if want := uint64(m.NumSamples) * uint64(ch) * uint64(width); want != uint64(len(p)) {
		return nil, fmt.Errorf("%w: %d frames × %d channels of %s need %d bytes, payload has %d",
			ErrValue, m.NumSamples, ch, o.Format, want, len(p))
	}
	hdr := wavHeaderSize
	if tag == 3 {
		hdr += 12
	}
	if uint64(len(p))+uint64(hdr)-8 > math.MaxUint32 {
		return nil, fmt.Errorf("%w: %d bytes of audio do not fit a RIFF file", ErrValue, len(p))
	}
	le := binary.LittleEndian
	b := make([]byte, 0, hdr+len(p))
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, uint32(hdr-8+len(p)))
	b = append(b, "WAVEfmt "...)
	b = le.AppendUint32(b, 16)
	b = le.AppendUint16(b, tag)
	b = le.AppendUint16(b, uint16(ch))
	b = le.AppendUint32(b, m.SampleRate)
	b = le.AppendUint32(b, m.SampleRate*uint32(ch*width))
	b = le.AppendUint16(b, uint16(ch*width))
	b = le.AppendUint16(b, uint16(8*width))
	if tag == 3 {
		b = append(b, "fact"...)
		b = le.AppendUint32(b, 4)
		b = le.AppendUint32(b, m.NumSamples)
	}
	b = append(b, "data"...)
	b = le.AppendUint32(b, uint32(len(p)))
	return append(b, p...), nil
}

// npyFile returns a .npy (format 1.0) holding data as a C-order array of dtype descr and
// the given shape.
func npyFile(descr string, shape []uint64, data []byte) []byte {
	return append(mldf.AppendNPYHeader(make([]byte, 0, 128+len(data)), descr, shape), data...)
}

// ndarrayFile returns an NDARRAY payload as a .npy file: fixed-layout payloads get a header
// built from the field arguments; npy-file payloads are already .npy files.
func ndarrayFile(args [mldf.ArgumentsSize]byte, p []byte) ([]byte, error) {
	if args[0] != 1 {
		return nil, fmt.Errorf("%w: NDARRAY arguments version %d (want 1)", ErrValue, args[0])
	}
	switch args[1] {
	case encoders.NDArrayNPYFiles:
		if _, err := encoders.ParseNPY(p); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrValue, err)
		}
		return p, nil
	case encoders.NDArrayFixed:
	default:
		return nil, fmt.Errorf("%w: NDARRAY layout %d", ErrValue, args[1])
	}
	descr := strings.TrimRight(string(args[2:18]), "\x00")
	ndim := int(args[18])
	if ndim > encoders.MaxDims {
		return nil, fmt.Errorf("%w: NDARRAY with %d dimensions (at most %d)", ErrValue, ndim, encoders.MaxDims)
	}
	shape := make([]uint64, ndim)
	for i := range shape {
		shape[i] = binary.LittleEndian.Uint64(args[24+8*i:])
	}
	b := npyFile(descr, shape, p)
	// ParseNPY checks the dtype and that the data matches the shape.
	if _, err := encoders.ParseNPY(b); err != nil {
		return nil, fmt.Errorf("%w: dtype %q shape %v: %w", ErrValue, descr, shape, err)
	}
	return b, nil
}

// tokensFile returns the ids of a TEXT_TOKENIZED or TEXT_PACKED payload as a 1-D .npy of
// unsigned ids: <u2 for 16-bit ids, <u4 for 32-bit ones.
func tokensFile(m mldf.TextMeta, p []byte) ([]byte, error) {
	var descr string
	var width int
	switch m.Encoding {
	case mldf.TextTokens16:
		descr, width = "<u2", 2
	case mldf.TextTokens32:
		descr, width = "<u4", 4
	default:
		return nil, fmt.Errorf("%w: text encoding %d holds no token ids", ErrValue, m.Encoding)
	}
	if len(p)%width != 0 {
		return nil, fmt.Errorf("%w: %d bytes of %d-byte token ids", ErrValue, len(p), width)
	}
	return npyFile(descr, []uint64{uint64(len(p) / width)}, p), nil
}

// formatFloat writes x so that parsing it gives x back exactly ("NaN", "+Inf", "-Inf" too).
func formatFloat(x float64) []byte { return strconv.AppendFloat(nil, x, 'g', -1, 64) }
