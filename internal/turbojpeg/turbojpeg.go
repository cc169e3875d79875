// Package turbojpeg is a small cgo wrapper over the TurboJPEG 2.x API of libjpeg-turbo: header
// reading, DCT-scaled decoding to RGB or grayscale, and RGB/grayscale encoding. Built without cgo
// (CGO_ENABLED=0) it compiles to a stub whose Available reports false and whose calls return
// ErrUnavailable.
//
// Decoders and Encoders own one TurboJPEG handle each and are not safe for concurrent use: keep
// one per worker (a sync.Pool works; a handle dropped without Close is freed by a cleanup when
// its Go value is collected). No C pointer outlives a call: decoded pixels and encoded bytes are
// written into Go memory.
package turbojpeg

import (
	"errors"
	"fmt"
)

// Errors returned by this package. Decode and Encode errors wrap ErrFatal or ErrWarning with
// libjpeg-turbo's message.
var (
	ErrUnavailable = errors.New("turbojpeg: libjpeg-turbo not available (built without cgo)")
	ErrFatal       = errors.New("turbojpeg: error")
	ErrWarning     = errors.New("turbojpeg: warning")
	ErrArgument    = errors.New("turbojpeg: invalid argument")
)

// Subsampling is a JPEG chroma subsampling (TJSAMP_*).
type Subsampling int

// Chroma subsamplings, numbered as TurboJPEG numbers them.
const (
	Samp444  Subsampling = 0
	Samp422  Subsampling = 1
	Samp420  Subsampling = 2
	SampGray Subsampling = 3
	Samp440  Subsampling = 4
	Samp411  Subsampling = 5
)

// Colorspace is a JPEG colour space (TJCS_*).
type Colorspace int

// JPEG colour spaces, numbered as TurboJPEG numbers them.
const (
	CSRGB   Colorspace = 0
	CSYCbCr Colorspace = 1
	CSGray  Colorspace = 2
	CSCMYK  Colorspace = 3
	CSYCCK  Colorspace = 4
)

// String names the colour space.
func (c Colorspace) String() string {
	switch c {
	case CSRGB:
		return "RGB"
	case CSYCbCr:
		return "YCbCr"
	case CSGray:
		return "gray"
	case CSCMYK:
		return "CMYK"
	case CSYCCK:
		return "YCCK"
	}
	return fmt.Sprintf("colorspace(%d)", int(c))
}

// PixelFormat is the layout of decoded or to-be-encoded pixels.
type PixelFormat int

// Pixel formats: interleaved 8-bit samples.
const (
	RGB  PixelFormat = iota // 3 bytes per pixel, R G B
	Gray                    // 1 byte per pixel
)

// Size returns the bytes per pixel of p.
func (p PixelFormat) Size() int {
	if p == Gray {
		return 1
	}
	return 3
}

// Header is what a JPEG's header says about the image.
type Header struct {
	Width, Height int
	Subsampling   Subsampling
	Colorspace    Colorspace
}

// ScaledSize returns the size of a w×h image decoded at scale num/8 (TurboJPEG's TJSCALED:
// rounded up).
func ScaledSize(w, h, num int) (int, int) {
	return (w*num + 7) / 8, (h*num + 7) / 8
}

// ScaleFor returns the smallest scale num/8 (num in 1..8) at which a w×h JPEG decodes to at
// least minW×minH, or 8 when no reduction keeps it that large.
func ScaleFor(w, h, minW, minH int) int {
	for num := 1; num < 8; num++ {
		sw, sh := ScaledSize(w, h, num)
		if sw >= minW && sh >= minH {
			return num
		}
	}
	return 8
}
