package imagefield

import (
	"encoding/binary"
	"hash/crc32"
)

// pngPassable reports whether the PNG data may be stored as it is in a field of ch channels
// (Options.KeepPNG): every decoder must give the field's pixels, so the IHDR says 8-bit
// samples of colour type RGB (ch 3) or gray (ch 1), the standard compression and filter
// methods, and no chunk adds transparency (tRNS) or animation (acTL); and the file must be
// intact: chunks from IHDR to a final IEND, each whole with a matching CRC, at least one
// IDAT, nothing after IEND. A PNG that fails any of these is decoded (and a damaged one
// rejected) rather than copied.
func pngPassable(data []byte, ch int) bool {
	const sigLen = 8
	// Signature, then IHDR: length 13, type, width, height, bit depth, colour type,
	// compression, filter, interlace, CRC.
	if len(data) < sigLen+12+13 || binary.BigEndian.Uint32(data[sigLen:]) != 13 || string(data[sigLen+4:sigLen+8]) != "IHDR" {
		return false
	}
	depth, colour, compression, filter, interlace := data[24], data[25], data[26], data[27], data[28]
	if depth != 8 || compression != 0 || filter != 0 || interlace > 1 {
		return false
	}
	switch {
	case ch == 3 && colour == 2, ch == 1 && colour == 0:
	default:
		return false
	}
	idat := false
	for p := sigLen; ; {
		if len(data)-p < 12 {
			return false // no IEND: cut short
		}
		n := uint64(binary.BigEndian.Uint32(data[p:]))
		if n > 1<<31-1 || n > uint64(len(data)-p-12) {
			return false
		}
		end := p + 8 + int(n)
		if crc32.ChecksumIEEE(data[p+4:end]) != binary.BigEndian.Uint32(data[end:]) {
			return false
		}
		switch string(data[p+4 : p+8]) {
		case "tRNS", "acTL":
			return false
		case "IDAT":
			idat = true
		case "IEND":
			return idat && end+4 == len(data)
		}
		p = end + 4
	}
}
