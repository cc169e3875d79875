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
	"strings"
)

// Errors returned by this package. Decode and Encode errors wrap ErrFatal or ErrWarning with
// libjpeg-turbo's message; a warning that says the pixel data is incomplete or wrong also
// wraps ErrDamaged.
var (
	ErrUnavailable = errors.New("turbojpeg: libjpeg-turbo not available (built without cgo)")
	ErrFatal       = errors.New("turbojpeg: error")
	ErrWarning     = errors.New("turbojpeg: warning")
	ErrArgument    = errors.New("turbojpeg: invalid argument")
	// ErrDamaged marks a warning that means the decoded pixels are incomplete or wrong (a
	// truncated scan, a bad Huffman code, a lost restart marker); see DamagingWarning.
	ErrDamaged = errors.New("turbojpeg: damaged image data")
)

// Warnings. TurboJPEG 2.1 tells a warning from a fatal error (tjGetErrorCode) but not one
// warning from another: it returns libjpeg's formatted English message, and only the FIRST
// warning of a decode (libjpeg prints the first and counts the rest). So a harmless first
// warning ("extraneous bytes before marker") can hide a later damaging one (a truncated
// scan): pixels that come with any warning must not be trusted as they are. A caller decodes
// such an image again with a stricter decoder, or rejects it; ErrDamaged lets it skip that
// second decode when the first warning already says the data is damaged.
//
// damagingWarnings are the libjpeg warnings (JWRN_* in jerror.h of libjpeg-turbo 2.1.5, the
// version we link) whose text says the pixel data is damaged, lower-cased, up to the first
// formatted value. They are matched case-insensitively: libjpeg writes "Premature end of
// JPEG file" but "Corrupt JPEG data: premature end of data segment".
var damagingWarnings = []string{
	"corrupt jpeg data: premature end of data segment", // JWRN_HIT_MARKER: scan cut, marker found
	"premature end of jpeg file",                       // JWRN_JPEG_EOF: input ended in the scan
	"corrupt jpeg data: bad huffman code",              // JWRN_HUFF_BAD_CODE
	"corrupt jpeg data: bad arithmetic code",           // JWRN_ARITH_BAD_CODE
	"corrupt jpeg data: found marker 0x",               // JWRN_MUST_RESYNC: restart marker lost
	"inconsistent progression sequence for component ", // JWRN_BOGUS_PROGRESSION
	"invalid sos parameters for sequential jpeg",       // JWRN_NOT_SEQUENTIAL
	"unknown adobe color transform code ",              // JWRN_ADOBE_XFORM: colours guessed
	"application transferred too many scanlines",       // JWRN_TOO_MUCH_DATA
}

// harmlessWarnings are the libjpeg 2.1.5 warnings that leave the pixels intact.
var harmlessWarnings = []string{
	"corrupt jpeg data: ",                   // JWRN_EXTRANEOUS_DATA: "%u extraneous bytes before marker 0x%02x"
	"warning: unknown jfif revision number", // JWRN_JFIF_MAJOR
	"corrupt jpeg data: bad icc marker",     // JWRN_BOGUS_ICC
}

// DamagingWarning reports whether a libjpeg warning message says the decoded pixels are
// damaged. It is false for the warnings known to be harmless and, to stay on the safe side of
// a wording change in another libjpeg-turbo version, true for any message it does not know.
func DamagingWarning(msg string) bool {
	m := strings.ToLower(strings.TrimSpace(msg))
	for _, w := range damagingWarnings {
		if strings.HasPrefix(m, w) {
			return true
		}
	}
	for _, w := range harmlessWarnings {
		if strings.HasPrefix(m, w) && (w != "corrupt jpeg data: " || strings.Contains(m, " extraneous bytes before marker 0x")) {
			return false
		}
	}
	return true
}

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

// Planes is a planar YCbCr (YUV) image as JPEG stores it: a luma plane Y and, unless
// Subsampling is SampGray, two chroma planes Cb and Cr subsampled by Subsampling. Plane rows
// are YStride (luma) and CStride (chroma) bytes apart. Width and Height are the image size;
// the planes are padded as TurboJPEG pads them (see PlaneSizes): the luma plane is
// PlaneSizes' yw×yh samples (the image plus edge padding up to a whole chroma sample) and each
// chroma plane cw×ch.
type Planes struct {
	Width, Height int
	Subsampling   Subsampling
	Y, Cb, Cr     []byte
	YStride       int
	CStride       int

	buf []byte // backing store reused by Decoder.DecodeYUV
}

// samplingFactors returns the luma samples per chroma sample across and down for s.
func samplingFactors(s Subsampling) (hf, vf int, ok bool) {
	switch s {
	case Samp444, SampGray:
		return 1, 1, true
	case Samp422:
		return 2, 1, true
	case Samp420:
		return 2, 2, true
	case Samp440:
		return 1, 2, true
	case Samp411:
		return 4, 1, true
	}
	return 0, 0, false
}

// PlaneSizes returns the plane sizes TurboJPEG uses for a w×h image with subsampling s (its
// tjPlaneWidth and tjPlaneHeight): the luma plane yw×yh (w and h rounded up to a whole chroma
// sample) and the chroma planes cw×ch (zero for SampGray). ok is false for an unknown s.
func PlaneSizes(w, h int, s Subsampling) (yw, yh, cw, ch int, ok bool) {
	hf, vf, ok := samplingFactors(s)
	if !ok || w <= 0 || h <= 0 {
		return 0, 0, 0, 0, false
	}
	yw, yh = (w+hf-1)/hf*hf, (h+vf-1)/vf*vf
	if s == SampGray {
		return yw, yh, 0, 0, true
	}
	return yw, yh, yw / hf, yh / vf, true
}

// Alloc sets p to a w×h image with subsampling s and packed planes (YStride = yw, CStride =
// cw from PlaneSizes), reusing p's backing store when it is large enough. Plane contents are
// unspecified.
func (p *Planes) Alloc(w, h int, s Subsampling) error {
	yw, yh, cw, ch, ok := PlaneSizes(w, h, s)
	if !ok {
		return fmt.Errorf("%w: %dx%d (height x width) planes with subsampling %d", ErrArgument, h, w, s)
	}
	ny, nc := yw*yh, cw*ch
	n := ny + 2*nc
	if cap(p.buf) < n {
		p.buf = make([]byte, n)
	}
	b := p.buf[:n]
	p.Width, p.Height, p.Subsampling = w, h, s
	p.Y, p.YStride, p.CStride = b[:ny:ny], yw, cw
	p.Cb, p.Cr = nil, nil
	if nc > 0 {
		p.Cb, p.Cr = b[ny:ny+nc:ny+nc], b[ny+nc:n:n]
	}
	return nil
}

// Trim drops p's backing store when it holds more than max bytes (a buffer kept for one huge
// image); p must be filled again (Alloc, DecodeYUV) before use.
func (p *Planes) Trim(max int) {
	if cap(p.buf) > max {
		*p = Planes{}
	}
}
