package pqfile

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mldf/convert/internal/quote"
)

// Default limits of a page (Limits' zero values).
const (
	// DefaultMaxPageSize bounds the uncompressed size of one page.
	DefaultMaxPageSize = 256 << 20
	// DefaultMaxPageValues bounds the values one page declares: the decoder reserves memory
	// for each (run-length encoding lets a few bytes declare billions).
	DefaultMaxPageValues = 1 << 24
)

// Limits bound what one page may declare; zero fields take the defaults.
type Limits struct {
	MaxPageSize   int64
	MaxPageValues int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxPageSize <= 0 {
		l.MaxPageSize = DefaultMaxPageSize
	}
	if l.MaxPageValues <= 0 {
		l.MaxPageValues = DefaultMaxPageValues
	}
	return l
}

// Leaf is what the page checks need of a leaf column.
type Leaf struct {
	Path           string // dotted, for messages
	MaxDef, MaxRep int
	Type           format.Type
	TypeLen        int32 // of a FIXED_LEN_BYTE_ARRAY
}

// ChunkStats is what the page checks learn of a column chunk.
type ChunkStats struct {
	// InFlight is about the most bytes the reading of the chunk holds at once: its
	// dictionary page, the largest page compressed, and twice uncompressed (the page, and
	// the values copied out of it), and for a chunk RowGroup decompresses (any codec but
	// snappy) the page as decompressed (it keeps that buffer, up to 4 MiB, for the next page).
	InFlight int64
	path     string
	codec    format.CompressionCodec
	end      int64
	pages    []pageRef
}

// pageRef is a compressed page whose body is still to check.
type pageRef struct {
	h    format.PageHeader
	head int64 // the header's offset
	body int64
}

// Checker checks column chunks' pages; one serves one goroutine. Close releases it.
type Checker struct {
	body bodyChecker
	buf  []byte
}

// Close releases the checker's decoders and buffers; the checker stays usable.
func (c *Checker) Close() {
	c.body.close()
	c.buf = nil
}

// Chunk reads the page headers of the column chunk m (of a row group of rows rows) in r
// without the pages, before the library decodes them: each header must decode within the
// chunk, each page must lie inside it, with sizes the codec allows, at most lim.MaxPageSize
// bytes uncompressed and lim.MaxPageValues values; a dictionary must fit its page; a column
// that is not repeated holds one value per row; the data pages must hold the number of
// values the chunk declares. With Bodies (each compressed body decodes to exactly its
// declared size), the library then never allocates for a size these checks have not bounded.
func (c *Checker) Chunk(r io.ReaderAt, m *format.ColumnMetaData, rows int64, leaf Leaf, lim Limits) (ChunkStats, error) {
	lim = lim.withDefaults()
	var st ChunkStats
	path := quote.Q(leaf.Path)
	start := ChunkStart(m)
	end := start + m.TotalCompressedSize
	if cap(c.buf) < 4096 {
		c.buf = make([]byte, 4096)
	}
	buf := c.buf[:cap(c.buf)]
	if leaf.MaxRep == 0 && m.NumValues != rows {
		return st, fmt.Errorf("%w: column %s: the column chunk declares %d values for %d rows", ErrCorrupt, path, m.NumValues, rows)
	}
	var values, dict, maxComp, maxUncomp int64
	for off, page := start, 0; off < end; page++ {
		win := min(int64(len(buf)), end-off)
		var h format.PageHeader
		var hlen int
		for {
			if int64(len(buf)) < win {
				buf = make([]byte, win)
				c.buf = buf
			}
			if n, err := r.ReadAt(buf[:win], off); int64(n) < win {
				return st, fmt.Errorf("%w: column %s: reading page %d at offset %d: %v", ErrCorrupt, path, page, off, err)
			}
			var err error
			hlen, err = ThriftSize(buf[:win])
			if errors.Is(err, ErrShort) && win < end-off {
				win = min(win*4, end-off)
				continue
			}
			if err == nil {
				err = thrift.Unmarshal(&thrift.CompactProtocol{}, buf[:hlen], &h)
			}
			if err != nil {
				return st, fmt.Errorf("%w: column %s: the header of page %d (offset %d) does not decode: %v", ErrCorrupt, path, page, off, err)
			}
			break
		}
		body := off + int64(hlen)
		if m.Codec != format.Uncompressed {
			st.pages = append(st.pages, pageRef{h: h, head: off, body: body})
		}
		switch {
		case h.CompressedPageSize < 0 || h.UncompressedPageSize < 0:
			return st, fmt.Errorf("%w: column %s: page %d has a negative size", ErrCorrupt, path, page)
		case int64(h.CompressedPageSize) > end-body:
			return st, fmt.Errorf("%w: column %s: page %d (%d bytes at offset %d) runs past its column chunk (%d bytes left)", ErrCorrupt, path, page, h.CompressedPageSize, body, end-body)
		case m.Codec == format.Uncompressed && h.CompressedPageSize != h.UncompressedPageSize:
			return st, fmt.Errorf("%w: column %s: uncompressed page %d claims %d bytes but holds %d", ErrCorrupt, path, page, h.UncompressedPageSize, h.CompressedPageSize)
		case int64(h.UncompressedPageSize) > lim.MaxPageSize:
			return st, fmt.Errorf("%w: column %s: page %d holds %d bytes uncompressed, more than the limit of %d", ErrUnsupported, path, page, h.UncompressedPageSize, lim.MaxPageSize)
		}
		var n int64 // the values the page declares
		switch h.Type {
		case format.DictionaryPage:
			d, ok := h.DictionaryPageHeader.Get()
			if !ok || d.NumValues < 0 {
				return st, fmt.Errorf("%w: column %s: dictionary page %d has no valid header", ErrCorrupt, path, page)
			}
			if need := plainSize(leaf, int64(d.NumValues)); int64(h.UncompressedPageSize) < need {
				return st, fmt.Errorf("%w: column %s: dictionary page %d holds %d bytes for %d values that need %d", ErrCorrupt, path, page, h.UncompressedPageSize, d.NumValues, need)
			}
			n = int64(d.NumValues)
			dict += int64(h.UncompressedPageSize) + 16*n // the values and their offsets
		case format.DataPage:
			d, ok := h.DataPageHeader.Get()
			if !ok || d.NumValues < 0 {
				return st, fmt.Errorf("%w: column %s: data page %d has no valid header", ErrCorrupt, path, page)
			}
			if d.Encoding == format.Plain && leaf.MaxDef == 0 && leaf.MaxRep == 0 {
				if need := plainSize(leaf, int64(d.NumValues)); int64(h.UncompressedPageSize) < need {
					return st, fmt.Errorf("%w: column %s: page %d holds %d bytes for %d required values that need %d", ErrCorrupt, path, page, h.UncompressedPageSize, d.NumValues, need)
				}
			}
			n = int64(d.NumValues)
			values += n
		case format.DataPageV2:
			d, ok := h.DataPageHeaderV2.Get()
			if !ok || d.NumValues < 0 || d.NumRows < 0 || d.DefinitionLevelsByteLength < 0 || d.RepetitionLevelsByteLength < 0 ||
				int64(d.DefinitionLevelsByteLength)+int64(d.RepetitionLevelsByteLength) > int64(h.CompressedPageSize) {
				return st, fmt.Errorf("%w: column %s: data page v2 %d has no valid header", ErrCorrupt, path, page)
			}
			if int64(d.NumRows) > rows {
				return st, fmt.Errorf("%w: column %s: data page %d declares %d rows, its row group %d", ErrCorrupt, path, page, d.NumRows, rows)
			}
			if d.Encoding == format.Plain && d.NumNulls >= 0 && d.NumNulls <= d.NumValues {
				data := int64(h.UncompressedPageSize) - int64(d.DefinitionLevelsByteLength) - int64(d.RepetitionLevelsByteLength)
				if need := plainSize(leaf, int64(d.NumValues-d.NumNulls)); data < need {
					return st, fmt.Errorf("%w: column %s: page %d holds %d bytes of values for %d values that need %d", ErrCorrupt, path, page, data, d.NumValues-d.NumNulls, need)
				}
			}
			n = int64(d.NumValues)
			values += n
		}
		if n > lim.MaxPageValues {
			return st, fmt.Errorf("%w: column %s: page %d declares %d values, more than the limit of %d", ErrUnsupported, path, page, n, lim.MaxPageValues)
		}
		if values > m.NumValues {
			return st, fmt.Errorf("%w: column %s: the pages hold more values than the column chunk declares (%d)", ErrCorrupt, path, m.NumValues)
		}
		if h.Type != format.DictionaryPage {
			// The decoder holds the page's values decoded (up to 16 bytes each with levels).
			maxUncomp = max(maxUncomp, int64(h.UncompressedPageSize)+16*n)
			maxComp = max(maxComp, int64(h.CompressedPageSize))
		}
		off = body + int64(h.CompressedPageSize)
	}
	if values != m.NumValues {
		return st, fmt.Errorf("%w: column %s: the pages hold %d values, the column chunk declares %d", ErrCorrupt, path, values, m.NumValues)
	}
	st.InFlight = dict + maxComp + 2*maxUncomp
	if m.Codec != format.Uncompressed && m.Codec != format.Snappy { // RowGroup decodes these
		st.InFlight += min(maxUncomp, keepPage)
	}
	st.codec, st.end, st.path = m.Codec, end, leaf.Path
	return st, nil
}

// Bodies checks that each compressed page body of a chunk Chunk has passed decodes to
// exactly the size its header declares, producing no more (the library's decoders trust a
// snappy length header, grow their output for as long as a gzip, brotli or zstd stream
// expands, and double their buffer without end on corrupt LZ4). It decodes one page at a
// time, so a caller that budgets memory runs it within the chunk's InFlight share.
func (c *Checker) Bodies(r io.ReaderAt, st *ChunkStats, leaf Leaf, lim Limits) error {
	lim = lim.withDefaults()
	for i := range st.pages {
		p := &st.pages[i]
		if err := c.checkBody(r, st.codec, &p.h, p.body, st.end, lim.MaxPageSize); err != nil {
			return fmt.Errorf("%w: column %s: the page at offset %d: %v", ErrCorrupt, quote.Q(leaf.Path), p.body, err)
		}
	}
	return nil
}

// plainSize is the least number of bytes n PLAIN values of a leaf take (4 per BYTE_ARRAY, for
// its length).
func plainSize(leaf Leaf, n int64) int64 {
	switch leaf.Type {
	case format.Boolean:
		return (n + 7) / 8
	case format.Int32, format.Float, format.ByteArray:
		return 4 * n
	case format.Int64, format.Double:
		return 8 * n
	case format.Int96:
		return 12 * n
	case format.FixedLenByteArray:
		return int64(leaf.TypeLen) * n
	}
	return 0
}

// checkBody checks that a compressed page body decodes to the size its header declares (see
// bodyChecker). The sizes are checked first: the body lies in the chunk, the size is bounded.
func (c *Checker) checkBody(r io.ReaderAt, codec format.CompressionCodec, h *format.PageHeader, body, end, maxPage int64) error {
	if codec == format.Uncompressed || h.CompressedPageSize < 0 || h.UncompressedPageSize < 0 ||
		int64(h.CompressedPageSize) > end-body || int64(h.UncompressedPageSize) > maxPage {
		return nil // the size checks report these
	}
	skip, want, ok := compressedPart(h)
	if !ok {
		return nil
	}
	n := int(h.CompressedPageSize) - skip
	if codec == format.Snappy {
		n = min(n, 10) // the varint of the decoded length is all the check reads
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, body+int64(skip)); err != nil {
		return fmt.Errorf("reading the page: %w", err)
	}
	return c.body.check(codec, b, want)
}

// compressedPart returns where the compressed part of a page's body starts (after the
// levels of a data page v2, which are not compressed) and the size it decodes to; ok is
// false when nothing of the body is decompressed (or its sizes are wrong: Chunk reports
// those).
func compressedPart(h *format.PageHeader) (skip, want int, ok bool) {
	skip, want = 0, int(h.UncompressedPageSize)
	if v2, set := h.DataPageHeaderV2.Get(); set && h.Type == format.DataPageV2 {
		levels := int(v2.DefinitionLevelsByteLength) + int(v2.RepetitionLevelsByteLength)
		if v2.DefinitionLevelsByteLength < 0 || v2.RepetitionLevelsByteLength < 0 || levels > int(h.CompressedPageSize) || levels > want {
			return 0, 0, false
		}
		if isCompressed, set := v2.IsCompressed.Get(); set && !isCompressed {
			return 0, 0, false
		}
		skip, want = levels, want-levels
		if want == 0 && int(h.CompressedPageSize) == levels {
			return 0, 0, false // no values: nothing to decompress
		}
	}
	return skip, want, true
}

// CheckPages checks the pages of every column chunk of every row group (see Checker.Chunk).
func (f *File) CheckPages(lim Limits) error {
	leaves := f.Leaves()
	var c Checker
	defer c.Close()
	for lo := 0; lo < f.NumRowGroups(); {
		w, err := f.Window(lo)
		if err != nil {
			return err
		}
		for k, rg := range w.PF.Metadata().RowGroups {
			for j := range rg.Columns {
				if j >= len(leaves) {
					return fmt.Errorf("%w: %s: row group %d has more column chunks than the schema columns", ErrCorrupt, f.name, lo+k)
				}
				st, err := c.Chunk(f.r, &rg.Columns[j].MetaData, rg.NumRows, leaves[j], lim)
				if err == nil {
					err = c.Bodies(f.r, &st, leaves[j], lim)
				}
				if err != nil {
					return fmt.Errorf("%s: row group %d: %w", f.name, lo+k, err)
				}
			}
		}
		lo += len(w.PF.Metadata().RowGroups)
	}
	return nil
}
