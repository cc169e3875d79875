// Package imagefield encodes image files into MLDF IMAGE_JPEG, IMAGE_PNG and IMAGE_RAW fields.
// It sniffs each file's header (rejecting decompression bombs before decoding), decodes with
// libjpeg-turbo where available and the Go decoders otherwise, applies EXIF orientation,
// shrinks to a maximum resolution and re-encodes, or passes suitable JPEGs through untouched.
package imagefield

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"sync"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
	"golang.org/x/image/webp"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/internal/turbojpeg"
	"github.com/mldf/convert/sample"
)

// Errors returned by the image field. Encode errors wrap one of them and name the file.
var (
	ErrOptions           = errors.New("invalid image field option")
	ErrArguments         = errors.New("invalid image field arguments")
	ErrKind              = errors.New("value is not an image file or bytes")
	ErrEmpty             = errors.New("empty image file (0 bytes)")
	ErrUnsupportedFormat = errors.New("unsupported image format")
	ErrTooManyPixels     = errors.New("image costs more pixels to decode than max_pixels allows (decompression bomb?)")
	ErrDimensions        = errors.New("image dimensions out of range")
	ErrCorrupt           = errors.New("corrupt or truncated image")
	ErrEncode            = errors.New("image encoding failed")
)

// Field is an image field. It is safe for concurrent use; libjpeg-turbo handles are pooled per
// concurrent caller.
type Field struct {
	name  string
	opts  Options
	typ   mldf.TypeID
	args  [mldf.ArgumentsSize]byte
	turbo bool // use libjpeg-turbo (when compiled in)
	rgb   bool // never take the planar (YUV) path (tests compare the two paths)
	pool  sync.Pool
}

// codec holds one worker's libjpeg-turbo handles (nil members mean the Go codecs) and
// reusable pixel buffers.
type codec struct {
	dec  *turbojpeg.Decoder
	enc  *turbojpeg.Encoder
	file []byte // the file being encoded (modes that never store the file as it is)
	buf  scratch
	yuv  yuvBufs
}

// keepScratch bounds each scratch buffer a worker keeps between images: buffers grown for
// one huge image are dropped after it, so a worker's memory goes back to what typical images
// need instead of staying at the largest image seen.
const keepScratch = 32 << 20

// trim drops the scratch buffers larger than keepScratch.
func (c *codec) trim() {
	for _, b := range []*[]byte{&c.file, &c.buf.dec, &c.buf.tmp, &c.buf.out, &c.yuv.y, &c.yuv.cb, &c.yuv.cr, &c.yuv.pad, &c.yuv.tmp} {
		if cap(*b) > keepScratch {
			*b = nil
		}
	}
	c.yuv.dec.Trim(keepScratch)
}

// New returns an image field called name with options opts (zero members take defaults).
func New(name string, opts Options) (*Field, error) {
	if err := mldf.ValidateName(name); err != nil {
		return nil, err
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("image field %q: %w", name, err)
	}
	f := &Field{name: name, opts: o, args: o.arguments(), turbo: turbojpeg.Available()}
	switch o.Mode {
	case ModePNG:
		f.typ = mldf.TypeImagePNG
	case ModeRaw:
		f.typ = mldf.TypeImageRaw
	default:
		f.typ = mldf.TypeImageJPEG
	}
	f.pool.New = func() any {
		c := &codec{}
		if !f.turbo {
			return c
		}
		if d, err := turbojpeg.NewDecoder(); err == nil {
			c.dec = d
		}
		if e, err := turbojpeg.NewEncoder(); err == nil {
			c.enc = e
		}
		return c
	}
	return f, nil
}

// Name implements encoders.Field.
func (f *Field) Name() string { return f.name }

// Type implements encoders.Field: IMAGE_JPEG for jpeg and smart, IMAGE_PNG, IMAGE_RAW.
func (f *Field) Type() mldf.TypeID { return f.typ }

// Arguments implements encoders.Field; see ParseArguments and docs/fields/image.md.
func (f *Field) Arguments() [mldf.ArgumentsSize]byte { return f.args }

// Options returns the field's options with defaults applied.
func (f *Field) Options() Options { return f.opts }

// Turbo reports whether the field decodes and encodes JPEG with libjpeg-turbo.
func (f *Field) Turbo() bool { return f.turbo }

// InC implements encoders.InC: with libjpeg-turbo, the decode, the resampler and (except
// in png mode, whose encoder is Go's) the encode run in C.
func (f *Field) InC() bool { return f.turbo && f.opts.Mode != ModePNG }

// valueName names the value's file for errors, shortened when absurdly long.
func valueName(v sample.Value) string {
	if v.Path != "" {
		return quote.S(v.Path)
	}
	if v.Name != "" {
		return quote.S(v.Name)
	}
	return "(unnamed value)"
}

// Encode implements encoders.Field. v is a KindFile value (the file is read here) or a
// KindBytes value holding the encoded image; the format is recognised from its bytes.
func (f *Field) Encode(v sample.Value, meta []byte) ([]byte, error) {
	c := f.pool.Get().(*codec)
	defer func() {
		c.trim()
		f.pool.Put(c)
	}()
	var data []byte
	copyIn := false
	switch v.Kind {
	case sample.KindFile:
		var err error
		if f.opts.Mode == ModeSmart {
			// Most files pass through, as the payload: read each into a buffer of its own.
			data, err = v.Load() // refuses a named pipe or a device without blocking
		} else if data, err = inputfile.ReadFileInto(v.Path, c.file); err == nil {
			c.file = data // read into the worker's buffer: no allocation per image
		} else {
			err = fmt.Errorf("read %s: %w", quote.S(v.Path), err) // as Load says it
		}
		if err != nil {
			return nil, fmt.Errorf("image field %q: %w", f.name, err)
		}
	case sample.KindBytes:
		data, copyIn = v.Bytes, true
	default:
		return nil, fmt.Errorf("image field %q: %s: %w (kind %d)", f.name, valueName(v), ErrKind, v.Kind)
	}
	payload, m, err := f.encode(c, data, copyIn)
	if err != nil {
		return nil, fmt.Errorf("image field %q: %s: %w", f.name, valueName(v), err)
	}
	m.Put(meta)
	return payload, nil
}

// target returns the size that fits w×h within the field's max resolution, keeping the aspect
// ratio: the longest side becomes MaxResolution, the other is rounded, at least 1.
func (f *Field) target(w, h int) (int, int) {
	m := f.opts.MaxResolution
	if m == 0 || (w <= m && h <= m) {
		return w, h
	}
	if w >= h {
		return m, max(1, int(float64(h)*float64(m)/float64(w)+0.5))
	}
	return max(1, int(float64(w)*float64(m)/float64(h)+0.5)), m
}

// passThrough reports whether smart mode may store the image (data, with header h) as is: a
// JPEG, or with KeepPNG a PNG (see pngPassable).
func (f *Field) passThrough(h Header, data []byte, resized bool) bool {
	if f.opts.Mode != ModeSmart || resized {
		return false
	}
	if h.Format == FormatPNG {
		return f.opts.KeepPNG && pngPassable(data, f.opts.Channels)
	}
	if h.Format != FormatJPEG || !h.EndsWithEOI {
		return false
	}
	if h.Orientation > 1 || h.Precision != 8 {
		return false
	}
	switch h.Process {
	case procBaseline, procExtended, procProgressive:
	default:
		return false
	}
	return h.Components == f.opts.Channels
}

// encode encodes the image data with the codec c. copyIn means data is not the field's to
// keep: a payload that is data itself is copied.
func (f *Field) encode(c *codec, data []byte, copyIn bool) ([]byte, mldf.ImageMeta, error) {
	var m mldf.ImageMeta
	if len(data) == 0 {
		return nil, m, ErrEmpty
	}
	hdr, err := SniffHeader(data)
	if err != nil {
		if errors.Is(err, ErrUnsupportedFormat) {
			return nil, m, err
		}
		return nil, m, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if hdr.Width <= 0 || hdr.Height <= 0 {
		return nil, m, fmt.Errorf("%w: %s header says %dx%d (height x width)", ErrDimensions, hdr.Format, hdr.Height, hdr.Width)
	}
	// Sizes in the displayed (oriented) frame.
	ow, oh := hdr.Width, hdr.Height
	if hdr.Orientation >= 5 {
		ow, oh = oh, ow
	}
	tw, th := f.target(ow, oh)
	// Target in the stored (unoriented) frame.
	sw, sh := tw, th
	if hdr.Orientation >= 5 {
		sw, sh = th, tw
	}
	pass := f.passThrough(hdr, data, tw != ow || th != oh)
	// The pixel budget, from the header and before anything is decoded: what decoding this
	// image costs (see decodeCost); a JPEG stored as it is costs its size, which a reader
	// decodes.
	cost := decodeCost{pixels: int64(hdr.Width) * int64(hdr.Height), how: "stored as it is"}
	if !pass {
		cost = f.decodeCost(c, hdr, data, sw, sh)
	}
	if err := f.checkCost(hdr, cost); err != nil {
		return nil, m, err
	}
	if px := int64(tw) * int64(th); f.opts.MaxPixels > 0 && px > f.opts.MaxPixels {
		// The stored image is what a reader decodes (rule F3), and may be a little larger than
		// the DCT-scaled decode it is enlarged from (see dctShort).
		return nil, m, fmt.Errorf("%w: %s of %dx%d would be stored at %dx%d (height x width) = %d pixels, max_pixels is %d (set max_resolution)",
			ErrTooManyPixels, hdr.Format, hdr.Height, hdr.Width, th, tw, px, f.opts.MaxPixels)
	}
	if tw > 65535 || th > 65535 {
		return nil, m, fmt.Errorf("%w: %dx%d (height x width) exceeds 65535 pixels a side (set max_resolution)", ErrDimensions, th, tw)
	}
	if pass {
		m = mldf.ImageMeta{Height: uint16(oh), Width: uint16(ow), Channels: uint8(hdr.Components), Mode: mldf.ImageModeJPEG}
		if hdr.Format == FormatPNG {
			m.Channels, m.Mode = uint8(f.opts.Channels), mldf.ImageModePNG
		}
		if copyIn {
			data = bytes.Clone(data)
		}
		return data, m, nil
	}
	var warned error // a libjpeg-turbo warning from the planar path: its pixels are not trusted
	if f.canYUV(c, hdr) {
		out, m, ok, err := f.encodeYUV(c, data, hdr, sw, sh)
		if ok {
			return out, m, nil
		}
		warned = err
	}
	px, num, err := f.decode(c, data, hdr, sw, sh, warned)
	if err != nil {
		return nil, m, err
	}
	ah := axis{full: hdr.Width, num: num, sub: 1, src: px.w, target: sw, outSub: 1, dst: sw}
	av := axis{full: hdr.Height, num: num, sub: 1, src: px.h, target: sh, outSub: 1, dst: sh}
	px = resizeAxes(px, ah, av, f.opts.Filter, &c.buf)
	px = orient(px, hdr.Orientation)
	out, mode, err := f.store(c, px, f.opts.KeepPNG && hdr.Format == FormatPNG)
	if err != nil {
		return nil, m, err
	}
	m = mldf.ImageMeta{Height: uint16(px.h), Width: uint16(px.w), Channels: uint8(px.c), Mode: mode}
	return out, m, nil
}

// decode decodes data to a pixbuf of the field's channel count at DCT scale num/8 (see
// dctScale; 8 for the Go decoders).
//
// A JPEG that libjpeg-turbo decodes with any warning is not taken from it (TurboJPEG reports
// only the first warning, and a harmless one can hide a truncated scan after it): a warning
// that says the data is damaged rejects the image at once (ErrCorrupt); any other goes to Go's
// decoder, which decodes the image or rejects it. warned, when set, is such a warning from
// the planar path: the image goes straight to that decision.
func (f *Field) decode(c *codec, data []byte, hdr Header, sw, sh int, warned error) (px pixbuf, num int, err error) {
	ch := f.opts.Channels
	turboErr := warned
	if turboErr == nil && hdr.Format == FormatJPEG && c.dec != nil && hdr.Components != 4 {
		num = f.dctScale(hdr, sw, sh)
		px, err := f.decodeTurbo(c, data, num)
		if err == nil {
			return px, num, nil
		}
		turboErr = err
	}
	if errors.Is(turboErr, turbojpeg.ErrDamaged) {
		return pixbuf{}, 0, fmt.Errorf("%w: %s: %w", ErrCorrupt, hdr.Format, turboErr)
	}
	if turboErr != nil {
		// Go's decoder decodes the whole image: a JPEG that fit the budget only at a DCT
		// scale does not get it this way.
		if err := f.checkCost(hdr, wholeCost(hdr, data)); err != nil {
			return pixbuf{}, 0, fmt.Errorf("%w; Go's decoder would decode it whole after libjpeg-turbo warned: %v", err, turboErr)
		}
	}
	img, err := decodeGo(data, hdr.Format)
	if err != nil {
		if turboErr != nil {
			return pixbuf{}, 0, fmt.Errorf("%w: %s: %w (libjpeg-turbo: %v)", ErrCorrupt, hdr.Format, err, turboErr)
		}
		return pixbuf{}, 0, fmt.Errorf("%w: %s: %w", ErrCorrupt, hdr.Format, err)
	}
	if b := img.Bounds(); b.Dx() != hdr.Width || b.Dy() != hdr.Height {
		return pixbuf{}, 0, fmt.Errorf("%w: %s decoded to %dx%d, header says %dx%d (height x width)", ErrCorrupt, hdr.Format, b.Dy(), b.Dx(),
			hdr.Height, hdr.Width)
	}
	return fromDecoded(img, ch), 8, nil
}

// decodeCost is what decoding one image costs a worker, in pixels of the decoded frame (each
// pixel about BytesPerPixel bytes at most), and how it is decoded, for messages.
type decodeCost struct {
	pixels int64
	how    string
}

// decodeCost returns what decoding the image with header hdr (data its bytes) for the target
// sw×sh (stored frame) costs, before anything is decoded. A JPEG that libjpeg-turbo decodes
// (the cgo build) is decoded at a DCT scale n/8 (dctScale): a 48 MP photo resized to 256
// pixels costs its 1/8 scale, 0.75 MP. A progressive JPEG also keeps every DCT coefficient of
// the whole image while it decodes (2 bytes each, 1.5 or 3 a pixel), so it costs its full
// size. Every other image (PNG, GIF, BMP, TIFF, WebP, a CMYK JPEG, any JPEG in the pure-Go
// build) is decoded whole; a 16-bit PNG costs four times its pixels (Go's decoder holds 8
// bytes a pixel, and a copy is made at 8 bits), a progressive JPEG twice (Go's decoder keeps
// every coefficient as 4 bytes).
func (f *Field) decodeCost(c *codec, hdr Header, data []byte, sw, sh int) decodeCost {
	full := int64(hdr.Width) * int64(hdr.Height)
	if hdr.Format == FormatJPEG && c.dec != nil && hdr.Components != 4 {
		num := f.dctScale(hdr, sw, sh)
		w, h := turbojpeg.ScaledSize(hdr.Width, hdr.Height, num)
		if hdr.Process == procProgressive {
			return decodeCost{pixels: max(full, int64(w)*int64(h)), how: "progressive JPEG: every coefficient is kept"}
		}
		return decodeCost{pixels: int64(w) * int64(h), how: fmt.Sprintf("decoded at %d/8 scale, %dx%d", num, h, w)}
	}
	return wholeCost(hdr, data)
}

// wholeCost is decodeCost for an image decoded whole by Go's decoders.
func wholeCost(hdr Header, data []byte) decodeCost {
	full := int64(hdr.Width) * int64(hdr.Height)
	switch {
	case hdr.Format == FormatPNG && len(data) > 24 && data[24] == 16:
		return decodeCost{pixels: 4 * full, how: "16-bit PNG, decoded whole: each pixel costs 4"}
	case hdr.Format == FormatJPEG && hdr.Process == procProgressive:
		return decodeCost{pixels: 2 * full, how: "progressive JPEG, decoded whole by Go's decoder: each pixel costs 2"}
	}
	return decodeCost{pixels: full, how: "decoded whole"}
}

// HeaderFactor bounds the pixels an image's header may declare to HeaderFactor × max_pixels,
// whatever its decoding costs: a JPEG decoded at 1/8 scale costs 1/64 of its pixels, but
// libjpeg-turbo still reads every coefficient of it, so the header bounds the time one image
// takes. At DefaultMaxPixels that is 2^30 pixels (a 32768 × 32768 JPEG); a 100000 × 100000
// header is refused before anything is decoded.
const HeaderFactor = 16

// checkCost returns an error wrapping ErrTooManyPixels when cost is over the field's
// max_pixels, or the header declares more than HeaderFactor times as many pixels.
func (f *Field) checkCost(hdr Header, cost decodeCost) error {
	if f.opts.MaxPixels <= 0 {
		return nil
	}
	if full := int64(hdr.Width) * int64(hdr.Height); full/HeaderFactor > f.opts.MaxPixels {
		return fmt.Errorf("%w: %s header says %dx%d (height x width) = %d pixels, more than %d × max_pixels (%d) that any decode may scale down from",
			ErrTooManyPixels, hdr.Format, hdr.Height, hdr.Width, full, HeaderFactor, f.opts.MaxPixels)
	}
	if cost.pixels <= f.opts.MaxPixels {
		return nil
	}
	return fmt.Errorf("%w: %s of %dx%d (height x width) costs %d pixels to decode (%s), max_pixels is %d "+
		"(raising it lets a worker take up to %d bytes for each pixel of it)",
		ErrTooManyPixels, hdr.Format, hdr.Height, hdr.Width, cost.pixels, cost.how, f.opts.MaxPixels, BytesPerPixel)
}

// dctShort is how much smaller than the target (in percent of each side) a DCT-scaled decode
// may be: the resampler then enlarges it a little (see axis) instead of shrinking a decode at
// the next larger scale. On the benchmark's 500×375 photos resized to 256×192 that is a 4/8
// decode (250×188, libjpeg-turbo's fast 4×4 IDCT) instead of 5/8 (313×235, a slower IDCT
// without SIMD): 20 % less decoding time, and closer to area averaging of the full image
// (bench/imgpsnr.py measures it). The nearest filter takes no enlargement.
const dctShort = 3

// dctScale returns the DCT scale num/8 at which to decode a JPEG with header hdr for the
// target sw×sh (stored frame).
func (f *Field) dctScale(hdr Header, sw, sh int) int {
	if f.opts.Filter == FilterNearest {
		return turbojpeg.ScaleFor(hdr.Width, hdr.Height, sw, sh)
	}
	return turbojpeg.ScaleFor(hdr.Width, hdr.Height, sw-sw*dctShort/100, sh-sh*dctShort/100)
}

func (f *Field) decodeTurbo(c *codec, data []byte, num int) (pixbuf, error) {
	d := c.dec
	ch := f.opts.Channels
	pf := turbojpeg.RGB
	if ch == 1 {
		pf = turbojpeg.Gray
	}
	pix, w, h, err := d.Decode(data, num, pf, c.buf.dec)
	if cap(pix) > cap(c.buf.dec) {
		c.buf.dec = pix[:0]
	}
	if err != nil {
		// Pixels that come with a warning are not trusted (see decode).
		return pixbuf{}, err
	}
	px := pixbuf{pix: pix, w: w, h: h, c: pf.Size()}
	return convertChannels(px, ch), nil
}

// goDecoders are the Go decoders of each format (the standard library's and x/image's),
// with the names a reject of a panic in them gives.
var goDecoders = map[Format]struct {
	name   string
	decode func(io.Reader) (image.Image, error)
	config func(io.Reader) (image.Config, error)
}{
	FormatJPEG: {"image/jpeg", jpeg.Decode, jpeg.DecodeConfig},
	FormatPNG:  {"image/png", png.Decode, png.DecodeConfig},
	FormatGIF:  {"image/gif", gif.Decode, gif.DecodeConfig},
	FormatBMP:  {"golang.org/x/image/bmp", bmp.Decode, bmp.DecodeConfig},
	FormatTIFF: {"golang.org/x/image/tiff", tiff.Decode, tiff.DecodeConfig},
	FormatWebP: {"golang.org/x/image/webp", webp.Decode, webp.DecodeConfig},
}

// decodeGo decodes data with the Go decoder of its format. A panic of that decoder on these
// bytes is the sample's error (encoders.DecoderPanic), not the run's.
func decodeGo(data []byte, f Format) (img image.Image, err error) {
	d, ok := goDecoders[f]
	if !ok {
		return nil, ErrUnsupportedFormat
	}
	err = encoders.Guard(d.name, func() (err error) {
		img, err = d.decode(bytes.NewReader(data))
		return err
	})
	return img, err
}

// store encodes px in the field's mode (as PNG when asPNG) and returns the payload and the
// per-sample mode.
func (f *Field) store(c *codec, px pixbuf, asPNG bool) ([]byte, uint8, error) {
	switch {
	case f.opts.Mode == ModeRaw:
		// px may live in the worker's scratch buffers: the payload is a copy.
		return bytes.Clone(px.pix), mldf.ImageModeRaw, nil
	case f.opts.Mode == ModePNG || asPNG:
		var buf bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(&buf, toImage(px)); err != nil {
			return nil, 0, fmt.Errorf("%w: PNG: %w", ErrEncode, err)
		}
		return buf.Bytes(), mldf.ImageModePNG, nil
	}
	if c.enc != nil {
		pf := turbojpeg.RGB
		if px.c == 1 {
			pf = turbojpeg.Gray
		}
		out, err := c.enc.Encode(px.pix, px.w, px.h, pf, f.opts.JPEGQuality, turbojpeg.Samp420)
		if err != nil {
			return nil, 0, fmt.Errorf("%w: JPEG: %w", ErrEncode, err)
		}
		return out, mldf.ImageModeJPEG, nil
	}
	var buf bytes.Buffer
	buf.Grow(px.w * px.h / 2)
	if err := jpeg.Encode(&buf, toImage(px), &jpeg.Options{Quality: f.opts.JPEGQuality}); err != nil {
		return nil, 0, fmt.Errorf("%w: JPEG: %w", ErrEncode, err)
	}
	return buf.Bytes(), mldf.ImageModeJPEG, nil
}
