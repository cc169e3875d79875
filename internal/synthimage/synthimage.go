// Package synthimage writes large, valid JPEG and PNG files of one flat colour in a few
// kilobytes and milliseconds, for tests and benchmarks of how converters treat photos of tens
// or hundreds of megapixels. The files decode with libjpeg-turbo, Go's decoders and Pillow.
package synthimage

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// ErrSize is returned for dimensions a format cannot hold.
var ErrSize = errors.New("synthimage: dimensions out of range")

// JPEG returns a baseline JPEG of w×h pixels, mid-grey: colour with 4:2:0 subsampling (three
// components) or greyscale (one). Every block is coded as a zero DC difference and an
// end-of-block, one bit each, so a 100 MP image is about 2.3 MB. JPEG allows 1..65535 a side.
func JPEG(w, h int, colour bool) ([]byte, error) {
	if w < 1 || h < 1 || w > 65535 || h > 65535 {
		return nil, ErrSize
	}
	var b bytes.Buffer
	b.Write([]byte{0xFF, 0xD8})
	// Quantisation table 0: all ones.
	b.Write([]byte{0xFF, 0xDB, 0, 67, 0})
	b.Write(bytes.Repeat([]byte{1}, 64))
	nc := 1
	if colour {
		nc = 3
	}
	// Baseline frame.
	b.Write([]byte{0xFF, 0xC0, 0, byte(8 + 3*nc), 8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), byte(nc)})
	if colour {
		b.Write([]byte{1, 0x22, 0, 2, 0x11, 0, 3, 0x11, 0})
	} else {
		b.Write([]byte{1, 0x11, 0})
	}
	// Huffman tables DC 0 and AC 0, each one code of length 1 ("0"): DC category 0 (a zero
	// difference) and AC end-of-block.
	for _, class := range []byte{0x00, 0x10} {
		b.Write([]byte{0xFF, 0xC4, 0, 20, class, 1})
		b.Write(make([]byte, 15))
		b.WriteByte(0)
	}
	// Scan over every component.
	b.Write([]byte{0xFF, 0xDA, 0, byte(6 + 2*nc), byte(nc)})
	for i := 1; i <= nc; i++ {
		b.Write([]byte{byte(i), 0x00})
	}
	b.Write([]byte{0, 63, 0})
	var bits int64
	if colour {
		// Interleaved 16×16 MCUs of four luma and two chroma blocks.
		bits = int64((w+15)/16) * int64((h+15)/16) * 6 * 2
	} else {
		bits = int64((w+7)/8) * int64((h+7)/8) * 2
	}
	data := make([]byte, (bits+7)/8)
	if r := bits % 8; r != 0 {
		data[len(data)-1] = byte(1<<(8-r)) - 1 // pad the last byte with one bits
	}
	b.Write(data)
	b.Write([]byte{0xFF, 0xD9})
	return b.Bytes(), nil
}

// PNG returns an 8-bit PNG of w×h pixels, all zero: RGB (colour) or greyscale. Its rows are
// deflated as they are written, so making it takes no memory of the image's size.
func PNG(w, h int, colour bool) ([]byte, error) {
	if w < 1 || h < 1 || w > 1<<31-1 || h > 1<<31-1 {
		return nil, ErrSize
	}
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ct := byte(0)
	bpp := 1
	if colour {
		ct, bpp = 2, 3
	}
	ihdr = append(ihdr, 8, ct, 0, 0, 0)
	chunk(&b, "IHDR", ihdr)
	var z bytes.Buffer
	zw, err := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	if err != nil {
		return nil, err
	}
	row := make([]byte, 1+w*bpp) // filter byte 0, then the samples
	for range h {
		if _, err := zw.Write(row); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	chunk(&b, "IDAT", z.Bytes())
	chunk(&b, "IEND", nil)
	return b.Bytes(), nil
}

func chunk(b *bytes.Buffer, typ string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	b.Write(n[:])
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	b.WriteString(typ)
	b.Write(data)
	binary.BigEndian.PutUint32(n[:], crc.Sum32())
	b.Write(n[:])
}
