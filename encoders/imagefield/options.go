package imagefield

import (
	"fmt"
	"strings"

	"github.com/mldf/convert/format/mldf"
)

// Mode says how a field stores its images.
type Mode uint8

// Storage modes. The zero value is ModeSmart.
const (
	// ModeSmart stores a JPEG that needs no change as its original bytes and re-encodes
	// everything else to JPEG (with Options.KeepPNG, PNGs stay PNG).
	ModeSmart Mode = iota
	// ModeJPEG re-encodes every image to JPEG.
	ModeJPEG
	// ModePNG encodes every image to PNG (lossless).
	ModePNG
	// ModeRaw stores decoded pixels, height×width×channels uint8, row-major.
	ModeRaw
)

var modeNames = [...]string{"smart", "jpeg", "png", "raw"}

// String returns the mode's recipe name.
func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// ParseMode parses a recipe mode name: smart, jpeg, png or raw (case-insensitive).
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if strings.EqualFold(s, n) {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("%w: mode %q (want smart, jpeg, png or raw)", ErrOptions, s)
}

// Filter is the resampling filter used to shrink images.
type Filter uint8

// Resampling filters. The zero value, FilterDefault, means FilterBox (area averaging, like
// OpenCV's INTER_AREA when shrinking).
const (
	FilterDefault Filter = iota
	FilterNearest
	FilterBox
	FilterLinear
	FilterCatmullRom
	FilterMitchell
	FilterLanczos
)

var filterNames = [...]string{"default", "nearest", "box", "linear", "catmullrom", "mitchell", "lanczos"}

// String returns the filter's recipe name.
func (f Filter) String() string {
	if int(f) < len(filterNames) {
		return filterNames[f]
	}
	return fmt.Sprintf("filter(%d)", uint8(f))
}

// ParseFilter parses a recipe filter name: nearest, box (also "area"), linear (also
// "bilinear"), catmullrom (also "bicubic", "cubic"), mitchell, lanczos (case-insensitive).
func ParseFilter(s string) (Filter, error) {
	switch strings.ToLower(s) {
	case "area":
		return FilterBox, nil
	case "bilinear", "triangle":
		return FilterLinear, nil
	case "bicubic", "cubic":
		return FilterCatmullRom, nil
	case "lanczos3":
		return FilterLanczos, nil
	}
	for i, n := range filterNames {
		if i > 0 && strings.EqualFold(s, n) {
			return Filter(i), nil
		}
	}
	return 0, fmt.Errorf("%w: filter %q (want nearest, box, linear, catmullrom, mitchell or lanczos)", ErrOptions, s)
}

// Defaults applied to zero-valued options.
const (
	DefaultJPEGQuality = 90
	DefaultChannels    = 3
	// DefaultMaxPixels is the decompression-bomb limit and what bounds a worker's memory:
	// 2^26 pixels (8192 × 8192) of decoding cost (see MaxPixels). A JPEG resized by
	// libjpeg-turbo costs only its DCT-scaled size (a 48 MP photo resized to 256 pixels,
	// 0.75 MP), so photos of any size convert; a PNG or other image decoded whole converts up
	// to 67 MP (a 48 MP PNG does, a 100 MP one needs a higher max_pixels). Pillow, for
	// comparison, warns at 89 MP and refuses at 179 MP.
	DefaultMaxPixels = 1 << 26
	// BytesPerPixel bounds the peak memory (RSS) one worker needs for one image, per pixel of
	// its decoding cost: an image of cost P takes at most about P × BytesPerPixel bytes,
	// plus the encoded input file. Measured by bench/bigphotos.sh, peak RSS above the
	// process's baseline: 8.1 to 8.2 bytes a pixel for 8-bit RGB PNGs of 24, 48 and 100 MP
	// decoded whole (Go's decoder holds 4 bytes a pixel, the RGB copy 3, and the garbage
	// collector lets the heap grow past the live bytes); bytes allocated (testing's
	// TotalAlloc) are 4.1 to 7.1 a pixel for 8-bit images and 21 for a 16-bit interlaced PNG
	// stored as PNG, whose pixels cost 4 each. At DefaultMaxPixels a worker stays under
	// 2^26 × 9 bytes = 576 MiB; a photo resized from a baseline JPEG takes a few MB.
	BytesPerPixel = 9
)

// Options configure an image field. The zero value is valid: smart mode, no resize, quality
// 90, box filter, 3 channels, the default pixel limit.
type Options struct {
	Mode Mode
	// MaxResolution bounds the longest side in pixels; larger images shrink, keeping their
	// aspect ratio. 0 keeps every size (up to 65535, the metadata's limit).
	MaxResolution int
	// JPEGQuality is the quality of re-encoded JPEGs, 1..100; 0 means 90.
	JPEGQuality int
	// Filter is the resampling filter; FilterDefault means FilterBox.
	Filter Filter
	// Channels is 3 (RGB, the default when 0), 1 (gray) or 4 (RGBA; png and raw modes only).
	Channels int
	// MaxPixels rejects, from the header and before decoding, images whose decoding costs
	// more pixels than this, and images stored as they are (smart mode) with more pixels: 0
	// means DefaultMaxPixels, negative means no limit. The cost of a JPEG that libjpeg-turbo
	// decodes is its size at the DCT scale n/8 the resize needs (its full size when
	// progressive: every coefficient is kept); any other image, or a JPEG in the pure-Go
	// build, costs its full size, four times that for a 16-bit PNG and twice for a
	// progressive JPEG that Go's decoder decodes. It bounds each worker's memory to about
	// MaxPixels × BytesPerPixel bytes.
	MaxPixels int64
	// KeepPNG (smart mode only) stores PNG images as PNG, losslessly: a PNG that needs no
	// change (8-bit RGB, or gray for 1 channel, no transparency, no resize, intact) as its
	// original bytes, any other PNG re-encoded to PNG; other formats are stored as smart mode
	// stores them. The field then mixes per-sample modes 1 (JPEG) and 2 (PNG) under
	// IMAGE_JPEG. It is not recorded in the arguments: each sample's mode says what it holds.
	KeepPNG bool
}

// withDefaults validates o and fills in its defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Mode > ModeRaw {
		return o, fmt.Errorf("%w: mode %d", ErrOptions, o.Mode)
	}
	if o.KeepPNG && o.Mode != ModeSmart {
		return o, fmt.Errorf("%w: keep_png needs mode smart, not %s", ErrOptions, o.Mode)
	}
	if o.MaxResolution < 0 || o.MaxResolution > 65535 {
		return o, fmt.Errorf("%w: max_resolution %d (want 0..65535)", ErrOptions, o.MaxResolution)
	}
	if o.JPEGQuality == 0 {
		o.JPEGQuality = DefaultJPEGQuality
	}
	if o.JPEGQuality < 1 || o.JPEGQuality > 100 {
		return o, fmt.Errorf("%w: jpeg_quality %d (want 1..100)", ErrOptions, o.JPEGQuality)
	}
	if o.Filter == FilterDefault {
		o.Filter = FilterBox
	}
	if o.Filter > FilterLanczos {
		return o, fmt.Errorf("%w: filter %d", ErrOptions, o.Filter)
	}
	if o.Channels == 0 {
		o.Channels = DefaultChannels
	}
	switch o.Channels {
	case 1, 3:
	case 4:
		if o.Mode == ModeJPEG || o.Mode == ModeSmart {
			return o, fmt.Errorf("%w: channels 4 needs mode png or raw (JPEG has no alpha)", ErrOptions)
		}
	default:
		return o, fmt.Errorf("%w: channels %d (want 1, 3 or 4)", ErrOptions, o.Channels)
	}
	if o.MaxPixels == 0 {
		o.MaxPixels = DefaultMaxPixels
	}
	if o.MaxPixels < 0 {
		o.MaxPixels = -1
	}
	return o, nil
}

// ArgumentsVersion is the version of the descriptor arguments layout written by this package.
const ArgumentsVersion = mldf.ArgsVersion

// Wire ids of the modes in the arguments (mldf.ImageArgs.Mode).
var modeToArg = [...]byte{ModeSmart: mldf.ImageArgSmart, ModeJPEG: mldf.ImageArgJPEG, ModePNG: mldf.ImageArgPNG, ModeRaw: mldf.ImageArgRaw}

// chroma subsampling of re-encoded colour JPEGs, recorded in the arguments.
const argSubsampling420 = 0

// arguments encodes o (with defaults applied) as the descriptor arguments, mldf.ImageArgs
// (docs/fields/image.md).
func (o Options) arguments() [mldf.ArgumentsSize]byte {
	return mldf.ImageArgs{Mode: modeToArg[o.Mode], JPEGQuality: uint8(o.JPEGQuality), Channels: uint8(o.Channels),
		MaxResolution: uint32(o.MaxResolution), Filter: uint8(o.Filter), Flags: mldf.ImageFlagExifOrientation,
		Subsampling: argSubsampling420, MaxPixels: o.MaxPixels}.Marshal()
}

// ParseArguments decodes the descriptor arguments of an image field (the reader side) into
// the options that wrote it, with defaults applied. It rejects unknown versions, values out
// of range and non-zero reserved bytes.
func ParseArguments(a [mldf.ArgumentsSize]byte) (Options, error) {
	if a[0] != ArgumentsVersion {
		return Options{}, fmt.Errorf("%w: arguments version %d (this reader reads %d)", ErrArguments, a[0], ArgumentsVersion)
	}
	var ia mldf.ImageArgs
	if err := ia.Unmarshal(a); err != nil {
		return Options{}, fmt.Errorf("%w: %w", ErrArguments, err)
	}
	var o Options
	switch ia.Mode {
	case mldf.ImageArgRaw:
		o.Mode = ModeRaw
	case mldf.ImageArgJPEG:
		o.Mode = ModeJPEG
	case mldf.ImageArgPNG:
		o.Mode = ModePNG
	case mldf.ImageArgSmart:
		o.Mode = ModeSmart
	default:
		return Options{}, fmt.Errorf("%w: mode byte %d", ErrArguments, ia.Mode)
	}
	o.JPEGQuality = int(ia.JPEGQuality)
	o.Channels = int(ia.Channels)
	o.MaxResolution = int(ia.MaxResolution)
	o.Filter = Filter(ia.Filter)
	o.MaxPixels = ia.MaxPixels
	if o.JPEGQuality == 0 || o.Channels == 0 || o.Filter == FilterDefault || o.MaxPixels == 0 {
		return Options{}, fmt.Errorf("%w: quality %d, channels %d, filter %d, max_pixels %d: zero where a value is required",
			ErrArguments, o.JPEGQuality, o.Channels, o.Filter, o.MaxPixels)
	}
	if ia.Flags&^mldf.ImageFlagExifOrientation != 0 || ia.Subsampling != argSubsampling420 {
		return Options{}, fmt.Errorf("%w: unknown flags %#x or subsampling %d or reserved bytes set", ErrArguments, ia.Flags, ia.Subsampling)
	}
	o2, err := o.withDefaults()
	if err != nil {
		return Options{}, fmt.Errorf("%w: %w", ErrArguments, err)
	}
	return o2, nil
}
