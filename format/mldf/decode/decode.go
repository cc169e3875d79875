// Package decode decodes the payloads of an MLDF file to check them against their metadata:
// the content rules D1..D5 of docs/FORMAT.md §10.3, which `convert verify --decode` applies.
// JPEG goes through libjpeg-turbo when built with cgo (Go's image/jpeg otherwise, and as the
// fallback, as in encoders/imagefield), PNG through image/png, FLAC through
// encoders/audiofield's decoder (MD5 checked), and JSON, UTF-8 text and token ids through the
// manifest package's checks.
package decode

import (
	"bytes"
	"errors"
	"fmt"
	"image/jpeg"
	"image/png"
	"strings"

	"github.com/mldf/convert/encoders/audiofield"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/turbojpeg"
)

// keepBuf is the largest pixel buffer a Decoder keeps between images.
const keepBuf = 64 << 20

// MaxPixels bounds the images a Decoder decodes (width × height, 2^28: 16384×16384): a
// decoded image takes up to 4 bytes per pixel. A larger image whose header agrees with its
// metadata is reported as an error of this checker, not as a broken rule.
const MaxPixels = 1 << 28

// Decoder checks payloads (reader.PayloadDecoder). It is not safe for concurrent use: keep
// one per goroutine (reader.VerifyOptions.NewDecoder makes one per worker).
type Decoder struct {
	tj  *turbojpeg.Decoder // nil when libjpeg-turbo is not compiled in
	buf []byte             // decoded pixels, reused
}

// New returns a Decoder.
func New() (*Decoder, error) {
	d := &Decoder{}
	if turbojpeg.Available() {
		tj, err := turbojpeg.NewDecoder()
		if err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
		d.tj = tj
	}
	return d, nil
}

// NewPayloadDecoder returns New() as a reader.PayloadDecoder, for
// reader.VerifyOptions.NewDecoder.
func NewPayloadDecoder() (mldf.PayloadDecoder, error) { return New() }

// Close frees the decoder.
func (d *Decoder) Close() {
	if d.tj != nil {
		d.tj.Close()
		d.tj = nil
	}
	d.buf = nil
}

// Decode checks payload, the non-empty payload of field fd whose metadata struct is meta and
// whose rules are fr (R13 and F1..F10 hold), against rules D1..D5. It returns nil or a
// *manifest.FieldError.
func (d *Decoder) Decode(fd *mldf.FieldDesc, fr *mldf.FieldRules, meta, payload []byte) error {
	switch t := fd.Type; {
	case t >= mldf.TypeImageRaw && t <= mldf.TypeImagePNG:
		return d.image(mldf.GetImageMeta(meta), payload)
	case t == mldf.TypeAudioWaveform || t == mldf.TypeAudioCompressed:
		if m := mldf.GetAudioMeta(meta); m.Codec == mldf.AudioCodecFLAC {
			return flacCheck(m, payload)
		}
	case t == mldf.TypeJSON:
		return mldf.CheckJSON(payload)
	case t == mldf.TypeTextRaw:
		return mldf.CheckUTF8(payload)
	case t == mldf.TypeTextTokenized || t == mldf.TypeTextPacked:
		return fr.CheckTokens(mldf.GetTextMeta(meta), payload)
	}
	return nil
}

func d1(format string, args ...any) error {
	return &mldf.FieldError{Rule: "D1", Msg: fmt.Sprintf(format, args...)}
}

// image applies rule D1: a JPEG or PNG payload decodes completely to the metadata's size.
func (d *Decoder) image(m mldf.ImageMeta, p []byte) error {
	switch m.Mode {
	case mldf.ImageModeJPEG:
		return d.jpeg(m, p)
	case mldf.ImageModePNG:
		cfg, err := png.DecodeConfig(bytes.NewReader(p))
		if err != nil {
			return d1("PNG payload does not decode: %v", err)
		}
		if err := sameSize("PNG", cfg.Width, cfg.Height, m); err != nil {
			return err
		}
		if px := cfg.Width * cfg.Height; px > MaxPixels {
			return fmt.Errorf("decode: PNG of %dx%d (height x width) = %d pixels is larger than this checker decodes (%d pixels)", cfg.Height, cfg.Width, px, MaxPixels)
		}
		if _, err := png.Decode(bytes.NewReader(p)); err != nil {
			return d1("PNG payload does not decode: %v", err)
		}
	}
	return nil
}

func sameSize(format string, w, h int, m mldf.ImageMeta) error {
	if w != int(m.Width) || h != int(m.Height) {
		return d1("%s payload is %dx%d (height x width), the metadata says %dx%d", format, h, w, m.Height, m.Width)
	}
	return nil
}

// jpeg decodes a JPEG payload with libjpeg-turbo, or with Go's decoder when libjpeg-turbo is
// missing, fails, or warns of a premature end (a truncated scan). A JPEG passes when either
// decodes it completely.
func (d *Decoder) jpeg(m mldf.ImageMeta, p []byte) error {
	if px := int(m.Width) * int(m.Height); px > MaxPixels {
		return fmt.Errorf("decode: JPEG of %dx%d (height x width) = %d pixels is larger than this checker decodes (%d pixels)", m.Height, m.Width, px, MaxPixels)
	}
	var turboErr error
	if d.tj != nil {
		hdr, err := d.tj.Header(p)
		if err == nil {
			if err := sameSize("JPEG", hdr.Width, hdr.Height, m); err != nil {
				return err
			}
			pf := turbojpeg.RGB
			if m.Channels == 1 {
				pf = turbojpeg.Gray
			}
			if need := hdr.Width * hdr.Height * pf.Size(); cap(d.buf) < need {
				d.buf = make([]byte, need)
			}
			_, _, _, err = d.tj.Decode(p, 8, pf, d.buf[:cap(d.buf)])
			if cap(d.buf) > keepBuf {
				d.buf = nil
			}
			if err == nil || (errors.Is(err, turbojpeg.ErrWarning) && !prematureEnd(err)) {
				return nil
			}
		}
		turboErr = err
	}
	img, err := jpeg.Decode(bytes.NewReader(p))
	if err != nil {
		if turboErr != nil {
			return d1("JPEG payload does not decode: libjpeg-turbo: %v; Go: %v", turboErr, err)
		}
		return d1("JPEG payload does not decode: %v", err)
	}
	b := img.Bounds()
	return sameSize("JPEG", b.Dx(), b.Dy(), m)
}

// prematureEnd reports whether a libjpeg warning says the data ended early ("Premature end
// of JPEG file", "premature end of data segment"): the picture is incomplete.
func prematureEnd(err error) bool {
	return strings.Contains(strings.ToLower(err.Error()), "premature end")
}

// flacCheck applies rule D2: a FLAC payload decodes (its MD5 matching when set) to the
// metadata's frames, channels, bit depth and sample rate.
func flacCheck(m mldf.AudioMeta, p []byte) error {
	c, _, err := audiofield.DecodeFLAC(p)
	if err != nil {
		return &mldf.FieldError{Rule: "D2", Msg: fmt.Sprintf("FLAC payload does not decode: %v", err)}
	}
	if c.Frames() != int(m.NumSamples) || c.Channels != int(m.NumChannels) || c.BitDepth != int(m.BitDepth) || c.SampleRate != int(m.SampleRate) {
		return &mldf.FieldError{Rule: "D2", Msg: fmt.Sprintf(
			"FLAC payload holds %d frames × %d channels of %d bits at %d Hz, the metadata says %d × %d of %d bits at %d Hz",
			c.Frames(), c.Channels, c.BitDepth, c.SampleRate, m.NumSamples, m.NumChannels, m.BitDepth, m.SampleRate)}
	}
	return nil
}

// Check that Decoder implements reader.PayloadDecoder.
var _ mldf.PayloadDecoder = (*Decoder)(nil)
