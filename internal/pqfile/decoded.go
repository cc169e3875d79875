package pqfile

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sort"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"

	"github.com/mldf/convert/internal/quote"
)

// keepPage is the largest decoded page whose buffer a reader keeps for the next page; a larger
// one is dropped as soon as the library has read it, so that it and the library's copy of it
// are not both held while the page's values are decoded.
const keepPage = 4 << 20

// RowGroup is one row group as the library reads it, with the chunks Chunk checked served
// decoded: each compressed page body is read from the file once and decompressed once, as the
// library reads it, into exactly the size its header declares (a body that decodes to more or
// less, or whose checksum fails, is an error; nothing larger than the header's size is ever
// allocated). The library then reads the pages as uncompressed ones. A snappy page is the
// exception: its body states its decoded length up front, so it is served as it lies in the
// file, once that length is found equal to its header's, and the library decodes it into its
// own pooled buffer (a second buffer and copy of every page would double what the read
// allocates).
type RowGroup struct {
	// RG is the library's view of the row group: its column chunks in schema order.
	RG pq.RowGroup
	v  *decodedFile
}

// Err returns the first error met decoding a page, with the column and the page's offset:
// the library reports it wrapped in its own words, the caller reports this one.
func (g *RowGroup) Err() error {
	if g.v == nil {
		return nil
	}
	g.v.mu.Lock()
	defer g.v.mu.Unlock()
	return g.v.err
}

// Close releases the decoders and buffers.
func (g *RowGroup) Close() {
	if g.v == nil {
		return
	}
	g.v.mu.Lock()
	defer g.v.mu.Unlock()
	f := g.v.file
	f.spare.Lock()
	defer f.spare.Unlock()
	if d := g.v.zstd; d != nil {
		if len(f.spare.zstd) < spareDecoders {
			f.spare.zstd = append(f.spare.zstd, d)
		} else {
			d.Close()
		}
		g.v.zstd = nil
	}
	for _, c := range g.v.chunks {
		for _, b := range [][]byte{c.page, c.comp} {
			if cap(b) > 0 && cap(b) <= keepPage && f.spare.bytes+cap(b) <= spareBytes {
				f.spare.bufs = append(f.spare.bufs, b[:0])
				f.spare.bytes += cap(b)
			}
		}
		c.page, c.comp = nil, nil
	}
}

// Buffers and decoders a closed row group leaves for the next of the same file: a file read
// row group after row group makes its zstd decoders and page buffers once, not per row group.
// None owns a goroutine (the decoders decode synchronously), so dropping them is enough.
const (
	spareDecoders = 4
	spareBytes    = 8 << 20
)

// spares is a file's stock of them.
type spares struct {
	sync.Mutex
	zstd  []*zstd.Decoder
	bufs  [][]byte
	bytes int
}

// buffer returns a spare buffer of at least n bytes (length n), or a new one of capacity c.
func (v *decodedFile) buffer(n, c int) []byte {
	sp := &v.file.spare
	sp.Lock()
	defer sp.Unlock()
	for i, b := range sp.bufs {
		if cap(b) >= n {
			last := len(sp.bufs) - 1
			sp.bufs[i], sp.bufs[last] = sp.bufs[last], nil
			sp.bufs = sp.bufs[:last]
			sp.bytes -= cap(b)
			return b[:n]
		}
	}
	return make([]byte, n, c)
}

// decoder returns a spare zstd decoder, or nil.
func (f *File) decoder() *zstd.Decoder {
	f.spare.Lock()
	defer f.spare.Unlock()
	if k := len(f.spare.zstd); k > 0 {
		d := f.spare.zstd[k-1]
		f.spare.zstd = f.spare.zstd[:k-1]
		return d
	}
	return nil
}

// RowGroup returns row group i of window w for reading the leaf columns leaves, whose chunks
// Chunk has checked (stats[k] is leaves[k]'s). A row group whose chunks are uncompressed is the
// window's own; one with compressed chunks is served through a view of the file in which
// those chunks are uncompressed and each of their pages is decoded once, on demand.
func (f *File) RowGroup(w *Window, i int, leaves []int, stats []ChunkStats) (*RowGroup, error) {
	local := i - w.First
	rgs := w.PF.RowGroups()
	md := w.PF.Metadata()
	if local < 0 || local >= len(rgs) || len(leaves) != len(stats) {
		return nil, fmt.Errorf("parquet: %s: row group %d is not in the window", f.name, i)
	}
	plain := true
	for _, l := range leaves {
		// The library decompresses a column with the codec of its chunk in the window's
		// first row group, whatever the codec of the chunk read.
		if md.RowGroups[local].Columns[l].MetaData.Codec != format.Uncompressed || md.RowGroups[0].Columns[l].MetaData.Codec != format.Uncompressed {
			plain = false
		}
	}
	if plain {
		return &RowGroup{RG: rgs[local]}, nil
	}
	v, err := f.decodedView(md, local, leaves, stats)
	if err != nil {
		return nil, err
	}
	buf := min(maxReadBuffer, max(minReadBuffer, readBuffers/f.leaves))
	pf, err := pq.OpenFile(v, v.size, pq.SkipPageIndex(true), pq.SkipBloomFilters(true), pq.ReadBufferSize(buf))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: row group %d: %w", ErrCorrupt, f.name, i, err)
	}
	v.zstd = f.decoder()
	return &RowGroup{RG: pf.RowGroups()[0], v: v}, nil
}

// decodedFile is a Parquet file of one row group made up from another: its magic, the chunks
// read (compressed ones as uncompressed pages: re-encoded headers and bodies decoded on
// demand), and a footer naming those chunks uncompressed. It serves one reader at a time.
type decodedFile struct {
	file   *File
	name   string
	r      io.ReaderAt
	size   int64
	segs   []segment // in offset order, covering [0, size)
	chunks []*decodedChunk

	mu   sync.Mutex
	err  error
	zstd *zstd.Decoder
}

// segment is a run of the made-up file: bytes in memory, a run of the real file, or a page
// body decoded on demand.
type segment struct {
	off, n int64
	mem    []byte
	real   int64 // the offset in the real file, for a run of it (mem nil, chunk nil)
	chunk  *decodedChunk
	page   int
}

// decodedChunk is a compressed column chunk served decoded, or, a snappy one (raw), served
// as it lies once each page's decoded length is checked.
type decodedChunk struct {
	path    string
	codec   format.CompressionCodec
	raw     bool
	checked []bool // of a raw chunk: the pages whose length was checked
	end     int64  // the chunk's end in the real file
	pages   []pageRef
	cur     int    // the page decoded in page, or -1
	page    []byte // its bytes
	comp    []byte // a compressed body, while it is decoded
	// maxPage and maxComp are the largest sizes of its pages: the buffers are made that
	// large once (the page checks have bounded them).
	maxPage, maxComp int
}

// decodedView lays out the made-up file of row group local of md.
func (f *File) decodedView(md *format.FileMetaData, local int, leaves []int, stats []ChunkStats) (*decodedFile, error) {
	v := &decodedFile{file: f, name: f.name, r: f.r}
	v.segs = append(v.segs, segment{off: 0, n: 4, mem: []byte("PAR1")})
	off := int64(4)
	rg := md.RowGroups[local]
	cols := make([]format.ColumnChunk, len(rg.Columns))
	copy(cols, rg.Columns)
	for j := range cols {
		m := &cols[j].MetaData
		// A chunk not read: empty, at the start of the data.
		m.Codec, m.DataPageOffset, m.DictionaryPageOffset, m.TotalCompressedSize = format.Uncompressed, 4, 0, 0
		m.IndexPageOffset, m.BloomFilterOffset, m.BloomFilterLength, m.KeyValueMetadata = 0, 0, 0, nil
		cols[j].FileOffset, cols[j].OffsetIndexOffset, cols[j].OffsetIndexLength = 4, 0, 0
		cols[j].ColumnIndexOffset, cols[j].ColumnIndexLength = 0, 0
	}
	for k, l := range leaves {
		orig := &rg.Columns[l].MetaData
		m := &cols[l].MetaData
		st := &stats[k]
		start := ChunkStart(orig)
		base := off
		codec := format.Uncompressed // as the view serves the chunk
		switch {
		case orig.Codec == format.Uncompressed:
			n := orig.TotalCompressedSize
			v.segs = append(v.segs, segment{off: off, n: n, real: start})
			off += n
			m.DataPageOffset = base + orig.DataPageOffset - start
			if orig.DictionaryPageOffset > 0 {
				m.DictionaryPageOffset = base + orig.DictionaryPageOffset - start
			}
		case orig.Codec == format.Snappy && servesRaw(st.pages):
			// The chunk as it lies (one run, so that a read of the library is one read of
			// the file), each page's body checked as it is first read.
			c := &decodedChunk{path: st.path, codec: orig.Codec, raw: true, end: st.end, pages: st.pages, cur: -1,
				checked: make([]bool, len(st.pages))}
			v.chunks = append(v.chunks, c)
			codec = format.Snappy
			n := orig.TotalCompressedSize
			v.segs = append(v.segs, segment{off: off, n: n, real: start, chunk: c})
			off += n
			m.DataPageOffset = base + orig.DataPageOffset - start
			if orig.DictionaryPageOffset > 0 {
				m.DictionaryPageOffset = base + orig.DictionaryPageOffset - start
			}
		default:
			c := &decodedChunk{path: st.path, codec: orig.Codec, end: st.end, pages: st.pages, cur: -1}
			for _, ref := range c.pages {
				c.maxPage = max(c.maxPage, int(ref.h.UncompressedPageSize), int(ref.h.CompressedPageSize))
				c.maxComp = max(c.maxComp, int(ref.h.CompressedPageSize))
			}
			v.chunks = append(v.chunks, c)
			m.DataPageOffset = -1
			for p := range c.pages {
				ref := &c.pages[p]
				h := ref.h
				n := int64(h.UncompressedPageSize)
				if !decodes(&h) {
					n = int64(h.CompressedPageSize)
				}
				h.CompressedPageSize, h.CRC = int32(n), 0
				hb, err := thrift.Marshal(&thrift.CompactProtocol{}, &h)
				if err != nil {
					return nil, fmt.Errorf("%w: %s: column %s: re-encoding a page header: %w", ErrCorrupt, f.name, quote.Q(st.path), err)
				}
				if ref.head == orig.DictionaryPageOffset && orig.DictionaryPageOffset > 0 {
					m.DictionaryPageOffset = off
				}
				if ref.head == orig.DataPageOffset {
					m.DataPageOffset = off
				}
				v.segs = append(v.segs, segment{off: off, n: int64(len(hb)), mem: hb})
				off += int64(len(hb))
				v.segs = append(v.segs, segment{off: off, n: n, chunk: c, page: p})
				off += n
			}
			if m.DataPageOffset < 0 {
				m.DataPageOffset = base
			}
		}
		m.Codec = codec
		first := m.DataPageOffset
		if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < first {
			first = m.DictionaryPageOffset
		}
		m.TotalCompressedSize = off - first
		cols[l].FileOffset = base
	}
	out := *md
	rg.Columns = cols
	rg.FileOffset, rg.Ordinal = 4, 0
	out.RowGroups = []format.RowGroup{rg}
	out.NumRows = rg.NumRows
	out.KeyValueMetadata = nil
	fb, err := thrift.Marshal(&thrift.CompactProtocol{}, &out)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: re-encoding the footer: %w", ErrCorrupt, f.name, err)
	}
	tail := append(fb, 0, 0, 0, 0)
	putUint32(tail[len(fb):], uint32(len(fb)))
	tail = append(tail, "PAR1"...)
	v.segs = append(v.segs, segment{off: off, n: int64(len(tail)), mem: tail})
	v.size = off + int64(len(tail))
	return v, nil
}

func putUint32(b []byte, x uint32) {
	b[0], b[1], b[2], b[3] = byte(x), byte(x>>8), byte(x>>16), byte(x>>24)
}

// servesRaw reports whether a snappy chunk's pages can be served as they lie: the library
// decodes every page of it but the data pages v2 marked uncompressed, and so fails on one
// holding nothing but levels (no snappy stream at all), which a decoded chunk serves.
func servesRaw(pages []pageRef) bool {
	for i := range pages {
		h := &pages[i].h
		if v2, ok := h.DataPageHeaderV2.Get(); ok && h.Type == format.DataPageV2 && !decodes(h) {
			if c, set := v2.IsCompressed.Get(); !set || c {
				return false
			}
		}
	}
	return true
}

// decodes reports whether a page's body is decompressed (a data page v2 may store its values
// uncompressed, or hold nothing but levels).
func decodes(h *format.PageHeader) bool {
	if v2, ok := h.DataPageHeaderV2.Get(); ok && h.Type == format.DataPageV2 {
		if c, set := v2.IsCompressed.Get(); set && !c {
			return false
		}
		levels := int64(v2.DefinitionLevelsByteLength) + int64(v2.RepetitionLevelsByteLength)
		if int64(h.UncompressedPageSize) == levels && int64(h.CompressedPageSize) == levels {
			return false
		}
	}
	return true
}

// ReadAt serves the made-up file's bytes, decoding a page body the first time it is read.
func (v *decodedFile) ReadAt(p []byte, off int64) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.err != nil {
		return 0, v.err
	}
	if off < 0 {
		return 0, fmt.Errorf("parquet: %s: read at offset %d", v.name, off)
	}
	i := sort.Search(len(v.segs), func(i int) bool { return v.segs[i].off+v.segs[i].n > off })
	n := 0
	for ; n < len(p) && i < len(v.segs); i++ {
		s := &v.segs[i]
		at := off + int64(n) - s.off
		want := min(int64(len(p)-n), s.n-at)
		if want <= 0 {
			continue
		}
		dst := p[n : n+int(want)]
		switch {
		case s.mem != nil:
			copy(dst, s.mem[at:])
		case s.chunk == nil || s.chunk.raw:
			if k, err := v.r.ReadAt(dst, s.real+at); k < len(dst) {
				if err == nil || errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return n + k, err
			}
			if s.chunk != nil {
				if err := v.checkRaw(s.chunk, dst, s.real+at); err != nil {
					v.err = err
					return n, err
				}
			}
		default:
			c := s.chunk
			if c.cur != s.page {
				if err := v.decode(c, s.page); err != nil {
					v.err = err
					return n, err
				}
			}
			copy(dst, c.page[at:])
			if at+want == s.n && len(c.page) > keepPage {
				c.page, c.cur = nil, -1 // read whole: the library holds its own copy now
			}
		}
		n += int(want)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// checkRaw checks, for each page of the raw chunk c whose body dst (the bytes just read from
// the file at offset off) reaches, that its snappy body states the decoded size its header
// declares, before the library decodes it (its decoder would allocate whatever the body
// states). The few bytes of the length are read again only when dst does not hold them.
func (v *decodedFile) checkRaw(c *decodedChunk, dst []byte, off int64) error {
	end := off + int64(len(dst))
	p := sort.Search(len(c.pages), func(i int) bool {
		return c.pages[i].body+int64(c.pages[i].h.CompressedPageSize) > off
	})
	for ; p < len(c.pages) && c.pages[p].body < end; p++ {
		if c.checked[p] {
			continue
		}
		if err := v.checkRawPage(c, p, dst, off); err != nil {
			return fmt.Errorf("%w: column %s: the page at offset %d: %v", ErrCorrupt, quote.Q(c.path), c.pages[p].body, err)
		}
		c.checked[p] = true
	}
	return nil
}

func (v *decodedFile) checkRawPage(c *decodedChunk, p int, dst []byte, off int64) error {
	ref := &c.pages[p]
	skip, want, ok := compressedPart(&ref.h)
	if !ok {
		return nil
	}
	at := ref.body + int64(skip)
	k := min(int64(ref.h.CompressedPageSize)-int64(skip), 10) // the varint of the decoded length
	var head []byte
	if at >= off && at+k <= off+int64(len(dst)) {
		head = dst[at-off : at-off+k]
	} else {
		var b [10]byte
		head = b[:k]
		if got, err := v.r.ReadAt(head, at); int64(got) < k {
			return fmt.Errorf("reading the page: %w", err)
		}
	}
	got, err := snappy.DecodedLen(head)
	if err == nil && got != want {
		err = fmt.Errorf("snappy data of %d bytes where the header says %d", got, want)
	}
	return err
}

// decode reads page p of c from the file and decodes it into c.page.
func (v *decodedFile) decode(c *decodedChunk, p int) error {
	ref := &c.pages[p]
	h := &ref.h
	c.cur = -1
	if err := v.decodeBody(c, h, ref.body); err != nil {
		return fmt.Errorf("%w: column %s: the page at offset %d: %v", ErrCorrupt, quote.Q(c.path), ref.body, err)
	}
	c.cur = p
	return nil
}

func (v *decodedFile) decodeBody(c *decodedChunk, h *format.PageHeader, body int64) error {
	size := int64(h.CompressedPageSize)
	if size < 0 || size > c.end-body || h.UncompressedPageSize < 0 {
		return fmt.Errorf("a size out of bounds") // Chunk refuses these
	}
	if cap(c.comp) < int(size) {
		c.comp = v.buffer(int(size), max(int(size), min(c.maxComp, keepPage)))
	}
	comp := c.comp[:size]
	if k, err := v.r.ReadAt(comp, body); k < len(comp) {
		return fmt.Errorf("reading the page: %w", err)
	}
	if h.CRC != 0 {
		if got := crc32.ChecksumIEEE(comp); got != uint32(h.CRC) {
			return fmt.Errorf("crc32 checksum mismatch: want=0x%08X got=0x%08X", uint32(h.CRC), got)
		}
	}
	defer func() {
		if len(c.comp) > keepPage {
			c.comp = nil
		}
	}()
	want := int(h.UncompressedPageSize)
	if !decodes(h) {
		want = len(comp)
	}
	if cap(c.page) < want {
		c.page = v.buffer(want, max(want, min(c.maxPage, keepPage)))
	}
	c.page = c.page[:want]
	if !decodes(h) {
		copy(c.page, comp)
		return nil
	}
	skip := 0
	if v2, ok := h.DataPageHeaderV2.Get(); ok && h.Type == format.DataPageV2 {
		skip = int(v2.DefinitionLevelsByteLength) + int(v2.RepetitionLevelsByteLength)
		if skip > want || skip > len(comp) {
			return fmt.Errorf("levels of %d bytes in a page of %d bytes", skip, want)
		}
	}
	copy(c.page, comp[:skip])
	return v.inflate(c.codec, comp[skip:], c.page[skip:])
}

// inflate decodes src, compressed with codec, into exactly dst: data that decodes to more
// or fewer bytes is an error, and no more than len(dst) bytes are produced.
func (v *decodedFile) inflate(codec format.CompressionCodec, src, dst []byte) error {
	want := len(dst)
	switch codec {
	case format.Snappy:
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return err
		}
		if n != want {
			return fmt.Errorf("snappy data of %d bytes where the header says %d", n, want)
		}
		out, err := snappy.Decode(dst, src)
		if err != nil {
			return fmt.Errorf("snappy: %w", err)
		}
		if len(out) != want || (want > 0 && &out[0] != &dst[0]) {
			return fmt.Errorf("snappy data of %d bytes where the header says %d", len(out), want)
		}
		return nil
	case format.Lz4Raw:
		n, err := lz4.UncompressBlock(src, dst)
		if err != nil {
			return fmt.Errorf("lz4: %w", err)
		}
		if n != want {
			return fmt.Errorf("lz4 data of %d bytes where the header says %d", n, want)
		}
		return nil
	}
	r, done, err := streamReader(codec, src, &v.zstd)
	if err != nil {
		return err
	}
	defer done()
	n, err := io.ReadFull(r, dst)
	if err == nil {
		// The stream must end here (and a gzip stream's checksum is checked at its end).
		var one [1]byte
		var k int
		if k, err = r.Read(one[:]); k == 0 && err == nil {
			k, err = io.ReadFull(r, one[:])
		}
		switch {
		case k > 0:
			n++
		case err == io.EOF:
			return nil
		default:
			return fmt.Errorf("%s: %w", codec, err)
		}
	}
	if err == nil || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("%s data of %d bytes (or more) where the header says %d", codec, n, want)
	}
	return fmt.Errorf("%s: %w", codec, err)
}
