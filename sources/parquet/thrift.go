package parquet

import (
	"errors"
	"fmt"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// errShort means a Thrift structure runs past the bytes given (more may be needed).
var errShort = errors.New("thrift: structure runs past the bytes given")

// maxThriftDepth bounds the nesting of a Thrift structure.
const maxThriftDepth = 64

// thriftSize walks one Thrift compact-protocol struct at the start of b without decoding it
// and returns its length in bytes. It checks what a decoder would allocate for: every string
// length and every list, set and map size must fit in the bytes that remain, so decoding a
// structure that passes allocates memory in proportion to its bytes, not to the numbers it
// claims. It returns errShort when b ends inside the struct.
func thriftSize(b []byte) (int, error) {
	w := thriftWalker{b: b}
	if err := w.structure(0); err != nil {
		return 0, err
	}
	return w.i, nil
}

type thriftWalker struct {
	b []byte
	i int
}

func (w *thriftWalker) byte() (byte, error) {
	if w.i >= len(w.b) {
		return 0, errShort
	}
	c := w.b[w.i]
	w.i++
	return c, nil
}

func (w *thriftWalker) uvarint() (uint64, error) {
	var v uint64
	for shift := 0; shift < 70; shift += 7 {
		c, err := w.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w: a varint longer than 10 bytes", ErrCorrupt)
}

// need checks that n more bytes (at least) can follow.
func (w *thriftWalker) need(n uint64) error {
	if n > uint64(len(w.b)-w.i) {
		return errShort
	}
	return nil
}

func (w *thriftWalker) structure(depth int) error {
	if depth > maxThriftDepth {
		return fmt.Errorf("%w: Thrift structure nested deeper than %d", ErrCorrupt, maxThriftDepth)
	}
	for {
		h, err := w.byte()
		if err != nil {
			return err
		}
		typ := h & 0x0f
		if typ == 0 {
			return nil // stop
		}
		if h>>4 == 0 { // a full field id follows
			if _, err := w.uvarint(); err != nil {
				return err
			}
		}
		if err := w.value(typ, depth); err != nil {
			return err
		}
	}
}

func (w *thriftWalker) value(typ byte, depth int) error {
	switch typ {
	case 1, 2: // boolean in a field header
		return nil
	case 3:
		_, err := w.byte()
		return err
	case 4, 5, 6:
		_, err := w.uvarint()
		return err
	case 7:
		if err := w.need(8); err != nil {
			return err
		}
		w.i += 8
		return nil
	case 8:
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		if err := w.need(n); err != nil {
			return err
		}
		w.i += int(n)
		return nil
	case 9, 10:
		h, err := w.byte()
		if err != nil {
			return err
		}
		n, elem := uint64(h>>4), h&0x0f
		if n == 15 {
			if n, err = w.uvarint(); err != nil {
				return err
			}
		}
		if err := w.need(n); err != nil { // every element takes at least one byte
			return err
		}
		for range n {
			if elem == 1 || elem == 2 { // booleans in a list take a byte each
				if _, err := w.byte(); err != nil {
					return err
				}
				continue
			}
			if err := w.value(elem, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 11:
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		kv, err := w.byte()
		if err != nil {
			return err
		}
		if err := w.need(2 * n); err != nil {
			return err
		}
		for range n {
			for _, t := range []byte{kv >> 4, kv & 0x0f} {
				if t == 1 || t == 2 {
					if _, err := w.byte(); err != nil {
						return err
					}
				} else if err := w.value(t, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	case 12:
		return w.structure(depth + 1)
	}
	return fmt.Errorf("%w: Thrift type %d", ErrCorrupt, typ)
}

// checkChunk reads the page headers of one column chunk without the pages, before the
// library decodes them: each header must decode within the chunk, each page must lie inside
// it, with sizes the codec allows and at most maxPage bytes uncompressed, and the data pages
// must hold the number of values the chunk's metadata declares. The library then never
// allocates for a size these checks have not bounded.
func (f *file) checkChunk(chk *bodyChecker, rg int, leaf *Node, maxPage int64) error {
	m := &f.pf.Metadata().RowGroups[rg].Columns[leaf.leafIndex].MetaData
	start := m.DataPageOffset
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
		start = m.DictionaryPageOffset
	}
	end := start + m.TotalCompressedSize
	buf := make([]byte, 4096)
	var values int64
	for off, page := start, 0; off < end; page++ {
		win := min(int64(len(buf)), end-off)
		var h format.PageHeader
		var hlen int
		for {
			if int64(len(buf)) < win {
				buf = make([]byte, win)
			}
			if n, err := f.blob.ReadAt(buf[:win], off); int64(n) < win {
				return fmt.Errorf("%w: column %q: reading page %d at offset %d: %v", ErrCorrupt, leaf.Path, page, off, err)
			}
			var err error
			hlen, err = thriftSize(buf[:win])
			if errors.Is(err, errShort) && win < end-off {
				win = min(win*4, end-off)
				continue
			}
			if err == nil {
				err = thrift.Unmarshal(&thrift.CompactProtocol{}, buf[:hlen], &h)
			}
			if err != nil {
				return fmt.Errorf("%w: column %q: the header of page %d (offset %d) does not decode: %v", ErrCorrupt, leaf.Path, page, off, err)
			}
			break
		}
		body := off + int64(hlen)
		if err := f.checkBody(chk, m.Codec, &h, body, end, maxPage); err != nil {
			return fmt.Errorf("%w: column %q: page %d (offset %d): %v", ErrCorrupt, leaf.Path, page, off, err)
		}
		switch {
		case h.CompressedPageSize < 0 || h.UncompressedPageSize < 0:
			return fmt.Errorf("%w: column %q: page %d has a negative size", ErrCorrupt, leaf.Path, page)
		case int64(h.CompressedPageSize) > end-body:
			return fmt.Errorf("%w: column %q: page %d (%d bytes at offset %d) runs past its column chunk (%d bytes left)", ErrCorrupt, leaf.Path, page, h.CompressedPageSize, body, end-body)
		case m.Codec == format.Uncompressed && h.CompressedPageSize != h.UncompressedPageSize:
			return fmt.Errorf("%w: column %q: uncompressed page %d claims %d bytes but holds %d", ErrCorrupt, leaf.Path, page, h.UncompressedPageSize, h.CompressedPageSize)
		case int64(h.UncompressedPageSize) > maxPage:
			return fmt.Errorf("%w: column %q: page %d holds %d bytes uncompressed, more than the limit of %d (Options.MaxPageSize)", ErrUnsupported, leaf.Path, page, h.UncompressedPageSize, maxPage)
		}
		switch h.Type {
		case format.DataPage:
			d, ok := h.DataPageHeader.Get()
			if !ok || d.NumValues < 0 {
				return fmt.Errorf("%w: column %q: data page %d has no valid header", ErrCorrupt, leaf.Path, page)
			}
			if d.Encoding == format.Plain && leaf.maxDef == 0 && leaf.maxRep == 0 {
				if need := plainSize(leaf, int64(d.NumValues)); int64(h.UncompressedPageSize) < need {
					return fmt.Errorf("%w: column %q: page %d holds %d bytes for %d required values that need %d", ErrCorrupt, leaf.Path, page, h.UncompressedPageSize, d.NumValues, need)
				}
			}
			values += int64(d.NumValues)
		case format.DataPageV2:
			d, ok := h.DataPageHeaderV2.Get()
			if !ok || d.NumValues < 0 || d.NumRows < 0 || d.DefinitionLevelsByteLength < 0 || d.RepetitionLevelsByteLength < 0 ||
				int64(d.DefinitionLevelsByteLength)+int64(d.RepetitionLevelsByteLength) > int64(h.CompressedPageSize) {
				return fmt.Errorf("%w: column %q: data page v2 %d has no valid header", ErrCorrupt, leaf.Path, page)
			}
			if d.Encoding == format.Plain && d.NumNulls >= 0 && d.NumNulls <= d.NumValues {
				data := int64(h.UncompressedPageSize) - int64(d.DefinitionLevelsByteLength) - int64(d.RepetitionLevelsByteLength)
				if need := plainSize(leaf, int64(d.NumValues-d.NumNulls)); data < need {
					return fmt.Errorf("%w: column %q: page %d holds %d bytes of values for %d values that need %d", ErrCorrupt, leaf.Path, page, data, d.NumValues-d.NumNulls, need)
				}
			}
			values += int64(d.NumValues)
		}
		off = body + int64(h.CompressedPageSize)
	}
	if values != m.NumValues {
		return fmt.Errorf("%w: column %q: the pages hold %d values, the column chunk declares %d", ErrCorrupt, leaf.Path, values, m.NumValues)
	}
	return nil
}

// plainSize is the least number of bytes n PLAIN values of a leaf take (4 per BYTE_ARRAY, for
// its length).
func plainSize(leaf *Node, n int64) int64 {
	switch leaf.phys {
	case format.Boolean:
		return (n + 7) / 8
	case format.Int32, format.Float, format.ByteArray:
		return 4 * n
	case format.Int64, format.Double:
		return 8 * n
	case format.Int96:
		return 12 * n
	case format.FixedLenByteArray:
		return int64(leaf.typeLen) * n
	}
	return 0
}

// checkBody checks that a compressed page body decodes to the size its header declares (see
// bodyChecker). The sizes are checked first: the body lies in the chunk, the size is bounded.
func (f *file) checkBody(chk *bodyChecker, codec format.CompressionCodec, h *format.PageHeader, body, end, maxPage int64) error {
	if codec == format.Uncompressed || h.CompressedPageSize < 0 || h.UncompressedPageSize < 0 ||
		int64(h.CompressedPageSize) > end-body || int64(h.UncompressedPageSize) > maxPage {
		return nil // the size checks report these
	}
	skip, want := 0, int(h.UncompressedPageSize)
	if v2, ok := h.DataPageHeaderV2.Get(); ok && h.Type == format.DataPageV2 {
		levels := int(v2.DefinitionLevelsByteLength) + int(v2.RepetitionLevelsByteLength)
		if v2.DefinitionLevelsByteLength < 0 || v2.RepetitionLevelsByteLength < 0 || levels > int(h.CompressedPageSize) || levels > want {
			return nil
		}
		if isCompressed, set := v2.IsCompressed.Get(); set && !isCompressed {
			return nil
		}
		skip, want = levels, want-levels
		if want == 0 && int(h.CompressedPageSize) == levels {
			return nil // no values: nothing to decompress
		}
	}
	n := int(h.CompressedPageSize) - skip
	if codec == format.Snappy {
		n = min(n, 10) // the varint of the decoded length is all the check reads
	}
	b := make([]byte, n)
	if _, err := f.blob.ReadAt(b, body+int64(skip)); err != nil {
		return fmt.Errorf("reading the page: %w", err)
	}
	return chk.check(codec, b, want)
}
