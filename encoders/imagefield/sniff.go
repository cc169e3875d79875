package imagefield

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"

	"github.com/mldf/convert/encoders"
)

// Format is an image container format recognised by its leading bytes.
type Format uint8

// Recognised formats.
const (
	FormatUnknown Format = iota
	FormatJPEG
	FormatPNG
	FormatGIF
	FormatBMP
	FormatTIFF
	FormatWebP
)

var formatNames = [...]string{"unknown", "JPEG", "PNG", "GIF", "BMP", "TIFF", "WebP"}

// String names the format.
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("format(%d)", uint8(f))
}

// JPEG coding processes, from the SOF marker.
const (
	procBaseline    = iota // SOF0
	procExtended           // SOF1
	procProgressive        // SOF2
	procLossless           // SOF3
	procArithmetic         // SOF9, SOF10, SOF11
	procOther              // hierarchical (SOF5-7, SOF13-15)
)

// Header is what the leading bytes of an image file say, read without decoding pixels.
type Header struct {
	Format        Format
	Width, Height int

	// JPEG only.
	Process     int  // proc* constant
	Precision   int  // bits per sample
	Components  int  // 1 gray, 3 YCbCr/RGB, 4 CMYK/YCCK
	Adobe       bool // an Adobe APP14 segment is present
	Transform   int  // its colour transform byte (0 none/CMYK/RGB, 1 YCbCr, 2 YCCK)
	Orientation int  // EXIF orientation 1..8, 0 when absent or invalid
	EndsWithEOI bool // the file ends with an EOI marker (possibly followed by zero padding)
}

// Sniffing errors.
var (
	errShortHeader = errors.New("header truncated")
	errBadMarker   = errors.New("bad JPEG marker")
)

var otherSignatures = []struct {
	off  int
	sig  string
	name string
}{
	{4, "ftypavif", "AVIF"}, {4, "ftypavis", "AVIF"}, {4, "ftypheic", "HEIC"}, {4, "ftypheix", "HEIC"},
	{4, "ftypmif1", "HEIF"}, {4, "ftypmsf1", "HEIF"},
	{0, "\x00\x00\x00\x0cjP  ", "JPEG 2000"}, {0, "\xff\x4f\xff\x51", "JPEG 2000"},
	{0, "\xff\x0a", "JPEG XL"}, {0, "\x00\x00\x00\x0cJXL ", "JPEG XL"},
	{0, "8BPS", "Photoshop PSD"}, {0, "\x00\x00\x01\x00", "ICO"}, {0, "%PDF", "PDF"},
	{0, "<svg", "SVG"}, {0, "<?xml", "XML/SVG"}, {0, "P6", "PPM"}, {0, "P5", "PGM"},
	{0, "qoif", "QOI"}, {0, "\x76\x2f\x31\x01", "OpenEXR"}, {0, "#?RADIANCE", "Radiance HDR"},
}

// DetectFormat recognises the container format from data's leading bytes. For an unsupported
// but known format it returns FormatUnknown and the format's name.
func DetectFormat(data []byte) (Format, string) {
	switch {
	case len(data) >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF:
		return FormatJPEG, ""
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return FormatPNG, ""
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return FormatGIF, ""
	case bytes.HasPrefix(data, []byte("BM")) && len(data) >= 26:
		return FormatBMP, ""
	case bytes.HasPrefix(data, []byte("II*\x00")), bytes.HasPrefix(data, []byte("MM\x00*")):
		return FormatTIFF, ""
	case len(data) >= 12 && string(data[0:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return FormatWebP, ""
	}
	for _, s := range otherSignatures {
		if len(data) >= s.off+len(s.sig) && string(data[s.off:s.off+len(s.sig)]) == s.sig {
			return FormatUnknown, s.name
		}
	}
	return FormatUnknown, ""
}

// SniffHeader reads the format and dimensions of an encoded image from its header, without
// decoding pixels, so a decompression bomb can be rejected before any large allocation. For
// JPEG it also reports the coding process, components, Adobe transform and EXIF orientation.
func SniffHeader(data []byte) (Header, error) {
	f, other := DetectFormat(data)
	h := Header{Format: f}
	var err error
	switch f {
	case FormatJPEG:
		return sniffJPEG(data)
	case FormatPNG:
		// IHDR must be the first chunk: length 13, "IHDR", width, height.
		if len(data) < 24 {
			return h, fmt.Errorf("PNG: %w", errShortHeader)
		}
		if string(data[12:16]) != "IHDR" {
			return h, fmt.Errorf("PNG: first chunk is %q, not IHDR", data[12:16])
		}
		w, ht := binary.BigEndian.Uint32(data[16:]), binary.BigEndian.Uint32(data[20:])
		if w > 1<<31-1 || ht > 1<<31-1 {
			return h, fmt.Errorf("PNG: dimensions %dx%d (height x width) out of range", ht, w)
		}
		h.Width, h.Height = int(w), int(ht)
		return h, nil
	case FormatGIF:
		if len(data) < 10 {
			return h, fmt.Errorf("GIF: %w", errShortHeader)
		}
		h.Width, h.Height = int(binary.LittleEndian.Uint16(data[6:])), int(binary.LittleEndian.Uint16(data[8:]))
		return h, nil
	case FormatBMP, FormatTIFF, FormatWebP:
		// x/image's header parsers, on untrusted bytes: a panic in one rejects the sample.
		d := goDecoders[f]
		var c image.Config
		err = encoders.Guard(d.name, func() (err error) {
			c, err = d.config(bytes.NewReader(data))
			return err
		})
		h.Width, h.Height = c.Width, c.Height
	default:
		if other != "" {
			return h, fmt.Errorf("%w: %s", ErrUnsupportedFormat, other)
		}
		n := min(len(data), 8)
		return h, fmt.Errorf("%w: unrecognised signature % x", ErrUnsupportedFormat, data[:n])
	}
	if err != nil {
		return h, fmt.Errorf("%s header: %w", f, err)
	}
	if h.Width < 0 || h.Height < 0 {
		return h, fmt.Errorf("%s: dimensions %dx%d (height x width) out of range", f, h.Height, h.Width)
	}
	return h, nil
}

func sniffJPEG(data []byte) (Header, error) {
	h := Header{Format: FormatJPEG, Process: -1}
	i := 2 // after SOI
	for {
		// Markers may be preceded by any number of 0xFF fill bytes.
		if i >= len(data) {
			return h, fmt.Errorf("JPEG: %w before the start of scan", errShortHeader)
		}
		if data[i] != 0xFF {
			return h, fmt.Errorf("JPEG: %w: byte %#02x at offset %d", errBadMarker, data[i], i)
		}
		for i < len(data) && data[i] == 0xFF {
			i++
		}
		if i >= len(data) {
			return h, fmt.Errorf("JPEG: %w before the start of scan", errShortHeader)
		}
		m := data[i]
		i++
		switch {
		case m == 0xD8 || m == 0x01 || (m >= 0xD0 && m <= 0xD7):
			continue // standalone markers
		case m == 0xD9:
			return h, fmt.Errorf("JPEG: end of image before the start of scan")
		case m == 0x00:
			return h, fmt.Errorf("JPEG: %w: stuffed zero at offset %d", errBadMarker, i-1)
		}
		if i+2 > len(data) {
			return h, fmt.Errorf("JPEG: %w in marker %#02x", errShortHeader, m)
		}
		n := int(binary.BigEndian.Uint16(data[i:]))
		if n < 2 || i+n > len(data) {
			return h, fmt.Errorf("JPEG: %w: marker %#02x segment of %d bytes at offset %d", errShortHeader, m, n, i)
		}
		seg := data[i+2 : i+n]
		i += n
		switch {
		case m == 0xDA: // SOS
			if h.Process < 0 {
				return h, fmt.Errorf("JPEG: start of scan before any frame header")
			}
			h.EndsWithEOI = endsWithEOI(data)
			return h, nil
		case m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC:
			if h.Process >= 0 {
				return h, fmt.Errorf("JPEG: more than one frame header")
			}
			if len(seg) < 6 {
				return h, fmt.Errorf("JPEG: frame header: %w", errShortHeader)
			}
			h.Precision = int(seg[0])
			h.Height = int(binary.BigEndian.Uint16(seg[1:]))
			h.Width = int(binary.BigEndian.Uint16(seg[3:]))
			h.Components = int(seg[5])
			if len(seg) < 6+3*h.Components {
				return h, fmt.Errorf("JPEG: frame header with %d components: %w", h.Components, errShortHeader)
			}
			switch m {
			case 0xC0:
				h.Process = procBaseline
			case 0xC1:
				h.Process = procExtended
			case 0xC2:
				h.Process = procProgressive
			case 0xC3:
				h.Process = procLossless
			case 0xC9, 0xCA, 0xCB:
				h.Process = procArithmetic
			default:
				h.Process = procOther
			}
		case m == 0xE1 && h.Orientation == 0 && len(seg) >= 6 && string(seg[:6]) == "Exif\x00\x00":
			h.Orientation = exifOrientation(seg[6:])
		case m == 0xEE && len(seg) >= 12 && string(seg[:5]) == "Adobe":
			h.Adobe = true
			h.Transform = int(seg[11])
		}
	}
}

// endsWithEOI reports whether data ends with FF D9, allowing trailing zero padding.
func endsWithEOI(data []byte) bool {
	j := len(data)
	for j > 0 && data[j-1] == 0 && len(data)-j < 4096 {
		j--
	}
	return j >= 2 && data[j-2] == 0xFF && data[j-1] == 0xD9
}

// exifOrientation returns the Orientation tag (0x0112) of IFD0 in a TIFF-structured EXIF
// block, or 0 when it is absent or invalid.
func exifOrientation(t []byte) int {
	if len(t) < 8 {
		return 0
	}
	var bo binary.ByteOrder
	switch string(t[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return 0
	}
	off := int(bo.Uint32(t[4:]))
	if off < 8 || off > len(t)-2 {
		return 0
	}
	n := int(bo.Uint16(t[off:]))
	p := off + 2
	for k := 0; k < n && p+12 <= len(t); k, p = k+1, p+12 {
		if bo.Uint16(t[p:]) != 0x0112 {
			continue
		}
		typ, count := bo.Uint16(t[p+2:]), bo.Uint32(t[p+4:])
		if typ != 3 || count != 1 { // SHORT, one value
			return 0
		}
		v := int(bo.Uint16(t[p+8:]))
		if v < 1 || v > 8 {
			return 0
		}
		return v
	}
	return 0
}
