// Package imgdec decodes a stored image's crop straight to an output size: the hot path of the
// batch loader's image decoders (RandomResizedCrop, CenterCrop, Resize).
//
// A JPEG is decoded with libjpeg-turbo through its libjpeg API (cgo) at the smallest DCT
// scale num/8 at which the crop still covers the output size (3/8, 6/8 and 7/8 are decoded
// at 4/8 and 8/8 instead, whose inverse DCTs are SIMD code), only over the crop's columns
// (jpeg_crop_scanline) and rows (jpeg_skip_scanlines above it; decoding stops below it). PNG,
// GIF, BMP, TIFF and WebP are decoded with Go's decoders; raw pixels (IMAGE_RAW) are used as
// they are. The crop is then resampled to the output size with an antialiased separable
// filter (Pillow's bilinear: a triangle whose support grows with the downscale factor; 22-bit
// fixed point), mirrored left-right when asked, into the caller's HWC uint8 buffer. Built
// without cgo, a JPEG is decoded whole by image/jpeg and then cropped the same way.
//
// A crop is resampled from its own pixels only, as torchvision's resized_crop (crop, then
// resize) does: pixels outside it never leak in at its edges.
//
// EXIF orientation is not applied: the converter stores images upright (it re-encodes a
// rotated photo, and passes through only JPEGs without a rotating orientation). libjpeg
// decodes a JPEG only down to the crop's last row, so damage below the crop goes unseen: the
// crop's own pixels are whole.
package imgdec

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"io"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
	"golang.org/x/image/webp"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/encoders/imagefield"
	"github.com/mldf/convert/format/mldf"
)

// Errors. Every error returned wraps one of them.
var (
	// ErrArgument is a bad call: a crop outside the image or empty, an output size out of
	// range, channels other than 1 or 3, a dst of the wrong length, a raw layout that does not
	// match its bytes.
	ErrArgument = errors.New("imgdec: invalid argument")
	// ErrFormat is an image in a format this package does not decode.
	ErrFormat = errors.New("imgdec: unsupported image format")
	// ErrCorrupt is an image whose bytes do not decode: truncated, garbage, damaged data
	// (a libjpeg warning that says the pixels are wrong counts), or a decoder panic.
	ErrCorrupt = errors.New("imgdec: corrupt image")
	// ErrTooLarge is an image whose header declares more pixels than the decoder's
	// MaxPixels: decoding it would cost too much time or memory (a decompression bomb?).
	ErrTooLarge = errors.New("imgdec: image too large")
)

// Limits.
const (
	// DefaultMaxPixels bounds the pixels an image's header may declare (width × height), as
	// the image field's max_pixels does when converting: 2^26, 64 Mpixels.
	DefaultMaxPixels = 1 << 26
	// MaxOutSide bounds each side of the output.
	MaxOutSide = 1 << 14
)

// Image is one stored image: an encoded file (JPEG, PNG, GIF, BMP, TIFF, WebP, recognised
// from its leading bytes) or, when Raw is set, raw pixels.
type Image struct {
	Data []byte
	// Raw marks Data as raw pixels (IMAGE_RAW, or an image field's raw per-sample mode):
	// Height rows of Width pixels of Channels (1, 3 or 4) uint8 samples, row-major, HWC.
	// The fields below are ignored for an encoded file.
	Raw                     bool
	Width, Height, Channels int
}

// FromMeta returns the Image of a stored IMAGE_* payload described by its per-sample
// metadata (manifest.GetImageMeta): raw pixels of the size it gives in the raw mode, else an
// encoded file.
func FromMeta(payload []byte, m mldf.ImageMeta) Image {
	if m.Mode == mldf.ImageModeRaw {
		return Image{Data: payload, Raw: true, Width: int(m.Width), Height: int(m.Height), Channels: int(m.Channels)}
	}
	return Image{Data: payload}
}

// Decoder decodes images. It keeps its buffers (and, with cgo, one libjpeg decompressor)
// from one call to the next: keep one per goroutine. It is not safe for concurrent use.
type Decoder struct {
	maxPixels int64
	fast      bool        // JPEG: fast IDCT and chroma upsampling (SetFastJPEG)
	jpeg      jpegDecoder // libjpeg (cgo) or image/jpeg
	buf       []byte      // the decoded crop
	rs        resampler
}

// NewDecoder returns a Decoder whose MaxPixels is DefaultMaxPixels.
func NewDecoder() *Decoder {
	return &Decoder{maxPixels: DefaultMaxPixels}
}

// SetMaxPixels sets the most pixels (width × height) an image's header may declare; n <= 0
// means no limit.
func (d *Decoder) SetMaxPixels(n int64) { d.maxPixels = n }

// SetFastJPEG selects how a JPEG is decoded (libjpeg-turbo builds; image/jpeg has one way):
// fast uses libjpeg's fast integer IDCT (JDCT_IFAST) and replicates chroma samples instead of
// interpolating them (no "fancy upsampling"), as TurboJPEG's TJFLAG_FASTDCT and
// TJFLAG_FASTUPSAMPLE do (FFCV decodes so); the default is the accurate integer IDCT
// (JDCT_ISLOW) with fancy upsampling, libjpeg's and Pillow's default. The pixels differ
// slightly: the fast way costs about a dB of PSNR against Pillow.
func (d *Decoder) SetFastJPEG(fast bool) { d.fast = fast }

// Close frees the decoder's native resources. The Decoder must not be used afterwards.
func (d *Decoder) Close() {
	d.jpeg.close()
	d.buf = nil
	d.rs = resampler{}
}

// keepBuffer bounds the decode buffer kept between calls: one grown for a huge crop is
// dropped after it.
const keepBuffer = 16 << 20

// Size returns the stored image's width, height and the channels it decodes to natively (1
// for grayscale, 3 for colour; alpha is dropped), from its header, without decoding pixels.
func (d *Decoder) Size(im Image) (w, h, c int, err error) {
	if im.Raw {
		if err := checkRaw(im); err != nil {
			return 0, 0, 0, err
		}
		return im.Width, im.Height, min(im.Channels, 3), nil
	}
	f, other := imagefield.DetectFormat(im.Data)
	switch f {
	case imagefield.FormatJPEG:
		return d.jpeg.size(im.Data)
	case imagefield.FormatUnknown:
		return 0, 0, 0, formatErr(im.Data, other)
	}
	return goSize(f, im.Data)
}

// DecodeResized decodes the rectangle crop of im (source pixel coordinates, within the image
// and not empty) and resamples it to outW × outH, writing HWC uint8 pixels of channels (3:
// RGB, 1: gray) into dst (len(dst) == outH*outW*channels), mirrored left-right when flip is
// set. On error dst's contents are unspecified.
func (d *Decoder) DecodeResized(im Image, crop image.Rectangle, outW, outH, channels int, flip bool, dst []byte) error {
	return d.decodeResized(im, crop, outW, outH, channels, flip, false, dst)
}

// DecodeResizedCHW is DecodeResized writing CHW pixels: one plane of outH rows of outW
// bytes per channel. The resampler writes the planes itself (no transposing pass after
// it); the pixels are DecodeResized's.
func (d *Decoder) DecodeResizedCHW(im Image, crop image.Rectangle, outW, outH, channels int, flip bool, dst []byte) error {
	return d.decodeResized(im, crop, outW, outH, channels, flip, true, dst)
}

func (d *Decoder) decodeResized(im Image, crop image.Rectangle, outW, outH, channels int, flip, planar bool, dst []byte) error {
	if outW < 1 || outH < 1 || outW > MaxOutSide || outH > MaxOutSide {
		return fmt.Errorf("%w: output size %dx%d (height x width; 1..%d a side)", ErrArgument, outH, outW, MaxOutSide)
	}
	if channels != 1 && channels != 3 {
		return fmt.Errorf("%w: %d output channels (1 or 3)", ErrArgument, channels)
	}
	if len(dst) != outW*outH*channels {
		return fmt.Errorf("%w: dst holds %d bytes, %dx%dx%d (height x width x channels) needs %d", ErrArgument, len(dst), outH, outW, channels, outW*outH*channels)
	}
	if crop.Empty() {
		return fmt.Errorf("%w: empty crop (%s)", ErrArgument, rect(crop))
	}
	defer func() {
		if cap(d.buf) > keepBuffer {
			d.buf = nil
		}
		d.rs.trim()
	}()
	if im.Raw {
		return d.raw(im, crop, outW, outH, channels, flip, planar, dst)
	}
	f, other := imagefield.DetectFormat(im.Data)
	switch f {
	case imagefield.FormatJPEG:
		return d.decodeJPEG(im.Data, crop, outW, outH, channels, flip, planar, dst)
	case imagefield.FormatUnknown:
		return formatErr(im.Data, other)
	}
	w, h, _, err := goSize(f, im.Data)
	if err != nil {
		return err
	}
	if err := d.checkSize(f.String(), w, h, crop); err != nil {
		return err
	}
	img, err := goDecode(f, im.Data)
	if err != nil {
		return err
	}
	return d.fromImage(img, crop, outW, outH, channels, flip, planar, dst)
}

// checkSize checks a header's dimensions against MaxPixels and the crop against them.
func (d *Decoder) checkSize(format string, w, h int, crop image.Rectangle) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("%w: %s header says %dx%d (height x width)", ErrCorrupt, format, h, w)
	}
	if px := int64(w) * int64(h); d.maxPixels > 0 && px > d.maxPixels {
		return fmt.Errorf("%w: %s header says %dx%d (height x width) = %d pixels, more than %d", ErrTooLarge, format, h, w, px, d.maxPixels)
	}
	if !crop.In(image.Rect(0, 0, w, h)) {
		return fmt.Errorf("%w: crop (%s) outside the %dx%d (height x width) image", ErrArgument, rect(crop), h, w)
	}
	return nil
}

// rect describes a rectangle of pixels for a message, rows first as every size is given
// (height x width): "rows 0-10, columns 5-20" (half-open ranges).
func rect(r image.Rectangle) string {
	return fmt.Sprintf("rows %d-%d, columns %d-%d", r.Min.Y, r.Max.Y, r.Min.X, r.Max.X)
}

// formatErr is the error of bytes in no format decoded here.
func formatErr(data []byte, other string) error {
	if other != "" {
		return fmt.Errorf("%w: %s", ErrFormat, other)
	}
	if len(data) == 0 {
		return fmt.Errorf("%w: empty image (0 bytes)", ErrCorrupt)
	}
	return fmt.Errorf("%w: unrecognised signature % x", ErrFormat, data[:min(len(data), 8)])
}

func checkRaw(im Image) error {
	if im.Width < 1 || im.Height < 1 || im.Channels < 1 || im.Channels > 4 || im.Channels == 2 {
		return fmt.Errorf("%w: raw image %dx%dx%d (height x width x channels)", ErrArgument, im.Height, im.Width, im.Channels)
	}
	if n := int64(im.Width) * int64(im.Height) * int64(im.Channels); n != int64(len(im.Data)) {
		return fmt.Errorf("%w: raw image %dx%dx%d (height x width x channels) needs %d bytes, has %d", ErrCorrupt, im.Height, im.Width, im.Channels, n, len(im.Data))
	}
	return nil
}

// raw resamples raw pixels: in place when they have the output's channels, else through a
// converted copy of the crop.
func (d *Decoder) raw(im Image, crop image.Rectangle, outW, outH, channels int, flip, planar bool, dst []byte) error {
	if err := checkRaw(im); err != nil {
		return err
	}
	if !crop.In(image.Rect(0, 0, im.Width, im.Height)) {
		return fmt.Errorf("%w: crop (%s) outside the %dx%d (height x width) image", ErrArgument, rect(crop), im.Height, im.Width)
	}
	stride := im.Width * im.Channels
	if im.Channels == channels {
		src := plane{pix: im.Data, stride: stride, c: channels}
		d.rs.resample(src, box(crop), crop, outW, outH, flip, planar, dst)
		return nil
	}
	cw, ch := crop.Dx(), crop.Dy()
	d.buf = grow(d.buf, cw*ch*channels)
	for y := 0; y < ch; y++ {
		row := im.Data[(crop.Min.Y+y)*stride+crop.Min.X*im.Channels:]
		out := d.buf[y*cw*channels : (y+1)*cw*channels]
		convertRow(out, channels, row, im.Channels, cw)
	}
	src := plane{pix: d.buf, stride: cw * channels, c: channels}
	r := image.Rect(0, 0, cw, ch)
	d.rs.resample(src, box(r), r, outW, outH, flip, planar, dst)
	return nil
}

// convertRow converts n pixels of sc channels (1, 3 or 4: alpha is dropped) to dc channels
// (1 or 3); gray from colour is ITU-R 601 luma, as Pillow's convert("L").
func convertRow(out []byte, dc int, in []byte, sc, n int) {
	switch {
	case sc == dc:
		copy(out[:n*dc], in[:n*sc])
	case dc == 3 && sc == 1:
		for i, v := range in[:n] {
			out[3*i], out[3*i+1], out[3*i+2] = v, v, v
		}
	case dc == 3:
		for i := 0; i < n; i++ {
			out[3*i], out[3*i+1], out[3*i+2] = in[sc*i], in[sc*i+1], in[sc*i+2]
		}
	case sc == 1: // dc == 1
		copy(out[:n], in[:n])
	default:
		for i := 0; i < n; i++ {
			out[i] = luma(in[sc*i], in[sc*i+1], in[sc*i+2])
		}
	}
}

// luma is ITU-R 601 luma with 16-bit weights (Pillow's and image/color's).
func luma(r, g, b byte) byte {
	return byte((19595*uint32(r) + 38470*uint32(g) + 7471*uint32(b) + 1<<15) >> 16)
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// goFormats are the Go decoders of the formats not decoded by libjpeg.
var goFormats = map[imagefield.Format]struct {
	name   string
	decode func(io.Reader) (image.Image, error)
	config func(io.Reader) (image.Config, error)
}{
	imagefield.FormatPNG:  {"image/png", png.Decode, png.DecodeConfig},
	imagefield.FormatGIF:  {"image/gif", gif.Decode, gif.DecodeConfig},
	imagefield.FormatBMP:  {"golang.org/x/image/bmp", bmp.Decode, bmp.DecodeConfig},
	imagefield.FormatTIFF: {"golang.org/x/image/tiff", tiff.Decode, tiff.DecodeConfig},
	imagefield.FormatWebP: {"golang.org/x/image/webp", webp.Decode, webp.DecodeConfig},
}

// goSize reads a header with the format's Go decoder.
func goSize(f imagefield.Format, data []byte) (w, h, c int, err error) {
	dec, ok := goFormats[f]
	if !ok {
		return 0, 0, 0, fmt.Errorf("%w: %s", ErrFormat, f)
	}
	var cfg image.Config
	err = encoders.Guard(dec.name, func() (err error) {
		cfg, err = dec.config(bytes.NewReader(data))
		return err
	})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%w: %s header: %w", ErrCorrupt, f, err)
	}
	c = 3
	switch cfg.ColorModel {
	case color.GrayModel, color.Gray16Model:
		c = 1
	}
	return cfg.Width, cfg.Height, c, nil
}

// goDecode decodes data with its format's Go decoder; a panic of the decoder on these bytes
// is an ErrCorrupt error.
func goDecode(f imagefield.Format, data []byte) (img image.Image, err error) {
	dec := goFormats[f]
	err = encoders.Guard(dec.name, func() (err error) {
		img, err = dec.decode(bytes.NewReader(data))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, f, err)
	}
	return img, nil
}

// fromImage converts crop of a decoded image to channels and resamples it.
func (d *Decoder) fromImage(img image.Image, crop image.Rectangle, outW, outH, channels int, flip, planar bool, dst []byte) error {
	b := img.Bounds()
	r := crop.Add(b.Min)
	if !r.In(b) {
		return fmt.Errorf("%w: decoded (%s), header promised a crop (%s) inside it", ErrCorrupt, rect(b), rect(crop))
	}
	cw, ch := r.Dx(), r.Dy()
	d.buf = grow(d.buf, cw*ch*channels)
	for y := 0; y < ch; y++ {
		imageRow(d.buf[y*cw*channels:(y+1)*cw*channels], channels, img, r.Min.X, r.Min.Y+y, cw)
	}
	src := plane{pix: d.buf, stride: cw * channels, c: channels}
	rr := image.Rect(0, 0, cw, ch)
	d.rs.resample(src, box(rr), rr, outW, outH, flip, planar, dst)
	return nil
}

// imageRow writes n pixels of img's row y from x0 to out as c channels (alpha dropped,
// 16-bit samples keep their high byte, CMYK and YCbCr become RGB).
func imageRow(out []byte, c int, img image.Image, x0, y, n int) {
	switch m := img.(type) {
	case *image.YCbCr:
		if c == 1 {
			o := m.YOffset(x0, y)
			copy(out[:n], m.Y[o:o+n])
			return
		}
		for i := 0; i < n; i++ {
			yi, ci := m.YOffset(x0+i, y), m.COffset(x0+i, y)
			out[3*i], out[3*i+1], out[3*i+2] = color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
		}
		return
	case *image.Gray:
		o := m.PixOffset(x0, y)
		convertRow(out, c, m.Pix[o:o+n], 1, n)
		return
	case *image.NRGBA:
		o := m.PixOffset(x0, y)
		convertRow(out, c, m.Pix[o:o+4*n], 4, n)
		return
	case *image.CMYK:
		o := m.PixOffset(x0, y)
		for i := 0; i < n; i++ {
			p := m.Pix[o+4*i : o+4*i+4]
			r, g, b := color.CMYKToRGB(p[0], p[1], p[2], p[3])
			put(out, c, i, r, g, b)
		}
		return
	case *image.Paletted:
		o := m.PixOffset(x0, y)
		for i := 0; i < n; i++ {
			var r, g, b byte // an index past the palette is black, as image/png draws it
			if k := int(m.Pix[o+i]); k < len(m.Palette) {
				p := color.NRGBAModel.Convert(m.Palette[k]).(color.NRGBA)
				r, g, b = p.R, p.G, p.B
			}
			put(out, c, i, r, g, b)
		}
		return
	}
	for i := 0; i < n; i++ {
		p := color.NRGBA64Model.Convert(img.At(x0+i, y)).(color.NRGBA64)
		put(out, c, i, byte(p.R>>8), byte(p.G>>8), byte(p.B>>8))
	}
}

func put(out []byte, c, i int, r, g, b byte) {
	if c == 1 {
		out[i] = luma(r, g, b)
		return
	}
	out[3*i], out[3*i+1], out[3*i+2] = r, g, b
}

// box is an integer rectangle as a resampling box.
func box(r image.Rectangle) fbox {
	return fbox{float64(r.Min.X), float64(r.Min.Y), float64(r.Max.X), float64(r.Max.Y)}
}
