package pqfile

import (
	"bytes"
	"fmt"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// bodyChecker checks that a compressed page body decodes to the size its header declares,
// without producing more: the library's decoders trust a snappy length header (up to 4 GiB),
// grow their output for as long as a gzip, brotli or zstd stream expands, and double their
// buffer without end on corrupt LZ4. One checker serves one row group's reads.
type bodyChecker struct {
	buf  []byte
	zstd *zstd.Decoder
}

func (c *bodyChecker) close() {
	if c.zstd != nil {
		c.zstd.Close()
		c.zstd = nil
	}
	c.buf = nil
}

// check verifies that body, compressed with codec, decodes to exactly want bytes.
func (c *bodyChecker) check(codec format.CompressionCodec, body []byte, want int) error {
	switch codec {
	case format.Uncompressed:
		return nil
	case format.Snappy:
		n, err := snappy.DecodedLen(body)
		if err != nil {
			return err
		}
		if n != want {
			return fmt.Errorf("snappy data of %d bytes where the header says %d", n, want)
		}
		return nil // the library allocates n and fails on corrupt data
	case format.Lz4Raw:
		if cap(c.buf) < want {
			c.buf = make([]byte, want)
		}
		n, err := lz4.UncompressBlock(body, c.buf[:want])
		if err != nil {
			return fmt.Errorf("lz4: %w", err)
		}
		if n != want {
			return fmt.Errorf("lz4 data of %d bytes where the header says %d", n, want)
		}
		return nil
	}
	r, done, err := streamReader(codec, body, &c.zstd)
	if err != nil {
		return err
	}
	defer done()
	n, err := io.Copy(io.Discard, io.LimitReader(r, int64(want)+1))
	if err != nil {
		return err
	}
	if n != int64(want) {
		return fmt.Errorf("%s data of %d bytes (or more) where the header says %d", codec, n, want)
	}
	return nil
}

// streamReader returns a reader of src decompressed with a stream codec (gzip, brotli or
// zstd), and done, which releases it. *zd is made on first use and reused after: one zstd
// decoder per reader of a column, as both the page decoder and the body checker hold.
func streamReader(codec format.CompressionCodec, src []byte, zd **zstd.Decoder) (r io.Reader, done func(), err error) {
	done = func() {}
	switch codec {
	case format.Gzip:
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, done, fmt.Errorf("gzip: %w", err)
		}
		return zr, func() { zr.Close() }, nil
	case format.Brotli:
		return brotli.NewReader(bytes.NewReader(src)), done, nil
	case format.Zstd:
		if *zd == nil {
			d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
			if err != nil {
				return nil, done, err
			}
			*zd = d
		}
		if err := (*zd).Reset(bytes.NewReader(src)); err != nil {
			return nil, done, fmt.Errorf("zstd: %w", err)
		}
		return *zd, done, nil
	}
	return nil, done, fmt.Errorf("codec %s", codec)
}
