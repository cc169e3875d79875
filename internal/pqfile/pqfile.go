// Package pqfile is the one guarded way into a Parquet file. Every Parquet read of the
// repository opens its file here: the footer is walked in its raw Thrift bytes before
// parquet-go decodes it (no length may exceed its bytes, the schema's element count and
// nesting are bounded), the decoded schema elements are checked before anything relies on the
// column tree the library built from them (Root, the one schema tree of a file), the row groups are decoded a window at a time (so a file of many
// small row groups holds the state of a few), every column chunk must lie in the file and use
// a supported codec, and, before a column chunk is read, its page headers are checked against
// the chunk's and the row group's bounds (Checker.Chunk). A row group is then read through
// RowGroup, which decompresses each page once, to the size its header declares, as the library
// reads it. A panic of the library is an error naming the file.
package pqfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/mldf/convert/internal/inputfile"
	"github.com/mldf/convert/internal/quote"
)

// Errors, wrapped with the file and what is wrong.
var (
	// ErrCorrupt means the file is not valid Parquet.
	ErrCorrupt = errors.New("parquet: corrupt file")
	// ErrUnsupported means valid Parquet beyond what is read (encryption, a deprecated
	// codec, a limit); the message names it.
	ErrUnsupported = errors.New("parquet: unsupported")
)

// Limits of the footer.
const (
	// MaxSchemaDepth bounds the nesting of a schema.
	MaxSchemaDepth = 64
	// MaxSchemaElements bounds the number of schema elements (columns and groups).
	MaxSchemaElements = 1 << 20
	// windowRowGroups and windowBytes bound a window: the row groups decoded at once.
	windowRowGroups = 256
	windowBytes     = 1 << 20
	// readBuffers bounds the library's read-ahead buffers of one file, shared by its
	// columns (each gets between minReadBuffer and maxReadBuffer).
	readBuffers   = 16 << 20
	minReadBuffer = 4 << 10
	maxReadBuffer = 256 << 10
)

// File is a Parquet file whose footer passed the checks. Its row groups are decoded by
// window (Window); the schema and key-value metadata are those of the footer.
type File struct {
	name   string
	r      io.ReaderAt
	size   int64
	footer []byte // the footer's bytes (FileMetaData)
	layout *footerLayout
	first  *Window // the window of row group 0 (or the only one)
	// Schema is the footer's schema elements, KeyValue its key-value metadata.
	Schema   []format.SchemaElement
	KeyValue []format.KeyValue
	leaves   int
	whole    bool   // one window of all the row groups
	spare    spares // left by closed row groups for the next
}

// Window is a run of consecutive row groups decoded together: PF is the library's view of a
// file holding only them (its row group i is the file's row group First+i).
type Window struct {
	PF    *pq.File
	First int
}

// NumRowGroups returns the number of row groups.
func (f *File) NumRowGroups() int { return len(f.layout.rgEnd) }

// RowGroupRows returns the number of rows row group i declares.
func (f *File) RowGroupRows(i int) int64 { return f.layout.rgRows[i] }

// Name returns the file's name, as given to Open.
func (f *File) Name() string { return f.name }

// Size returns the file's size.
func (f *File) Size() int64 { return f.size }

// ReaderAt returns the file's bytes.
func (f *File) ReaderAt() io.ReaderAt { return f.r }

// Open checks the footer of the Parquet file r of size bytes (named name in errors) and
// decodes its first window of row groups; the other windows are checked too, one at a time,
// and dropped. It reads nothing but the footer.
func Open(r io.ReaderAt, size int64, name string) (f *File, err error) {
	return open(r, size, name, false)
}

func open(r io.ReaderAt, size int64, name string, whole bool) (f *File, err error) {
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, fmt.Errorf("%w: %s: reading the footer: %v", ErrCorrupt, name, p)
		}
	}()
	if size < 12 {
		return nil, fmt.Errorf("%w: %s: %d bytes is too short for a Parquet file", ErrCorrupt, name, size)
	}
	var head, tail [8]byte
	if _, err := r.ReadAt(head[:4], 0); err != nil {
		return nil, fmt.Errorf("parquet: %s: %w", name, err)
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil && !(errors.Is(err, io.EOF)) {
		return nil, fmt.Errorf("parquet: %s: %w", name, err)
	}
	switch {
	case string(head[:4]) == "PARE" || string(tail[4:]) == "PARE":
		return nil, fmt.Errorf("%w: %s: encrypted Parquet (modular encryption) is not supported", ErrUnsupported, name)
	case string(head[:4]) != "PAR1":
		return nil, fmt.Errorf("%w: %s: not a Parquet file (no PAR1 magic at the start)", ErrCorrupt, name)
	case string(tail[4:]) != "PAR1":
		return nil, fmt.Errorf("%w: %s: no PAR1 magic at the end (truncated file?)", ErrCorrupt, name)
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 {
		return nil, fmt.Errorf("%w: %s: the footer claims %d bytes, the file has %d (truncated file?)", ErrCorrupt, name, n, size)
	}
	// Walk the footer before the library decodes it: no length it claims may exceed its
	// bytes, and the schema's size and depth are bounded.
	fb := make([]byte, n)
	if _, err := r.ReadAt(fb, size-8-n); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("parquet: %s: reading the footer: %w", name, err)
	}
	end, err := ThriftSize(fb)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: the footer does not decode: %w", ErrCorrupt, name, err)
	}
	layout, err := walkFooter(fb[:end], MaxSchemaElements, MaxSchemaDepth)
	if err != nil {
		if !errors.Is(err, ErrUnsupported) {
			err = fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		return nil, fmt.Errorf("%s: the footer: %w", name, err)
	}
	f = &File{name: name, r: r, size: size, footer: fb, layout: layout, leaves: max(1, layout.elements), whole: whole}
	if f.first, err = f.open(0); err != nil {
		return nil, err
	}
	md := f.first.PF.Metadata()
	if err := checkSchema(md.Schema); err != nil {
		return nil, fmt.Errorf("%s: the schema: %w", name, err)
	}
	f.Schema, f.KeyValue = md.Schema, md.KeyValueMetadata
	f.leaves = max(1, len(f.first.PF.Schema().Columns()))
	for i := f.windowEnd(0); i < f.NumRowGroups(); i = f.windowEnd(i) {
		if _, err := f.open(i); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// OpenTable opens a small Parquet table read whole (a feature table of an archive): the
// footer is checked as by Open, and so are the pages of every column chunk; PF then reads
// every row group.
func OpenTable(r io.ReaderAt, size int64, name string) (*File, error) {
	f, err := open(r, size, name, true)
	if err != nil {
		return nil, err
	}
	if err := f.CheckPages(Limits{}); err != nil {
		return nil, err
	}
	return f, nil
}

// OpenPath is OpenTable on the local file at path, a regular file (a named pipe or a device
// is refused without blocking in open(2)); the caller closes the returned file when done
// with the table.
func OpenPath(path string) (*File, *os.File, error) {
	fd, st, err := inputfile.OpenRegular(path)
	if err != nil {
		return nil, nil, fmt.Errorf("parquet: %w", err)
	}
	f, err := OpenTable(fd, st.Size(), path)
	if err != nil {
		fd.Close()
		return nil, nil, err
	}
	return f, fd, nil
}

// PF returns the library's view of the file's first window: of the whole file when opened
// by OpenTable (or when all its row groups fit in one window).
func (f *File) PF() *pq.File { return f.first.PF }

// windowEnd returns the end of the window starting at row group i.
func (f *File) windowEnd(i int) int {
	l := f.layout
	if i == 0 && (f.whole || l.listEnd-l.rgStart <= windowBytes && len(l.rgEnd) <= windowRowGroups) {
		return len(l.rgEnd)
	}
	start := l.rgStart
	if i > 0 {
		start = l.rgEnd[i-1]
	}
	j := i + 1
	for j < len(l.rgEnd) && j-i < windowRowGroups && l.rgEnd[j]-start <= windowBytes {
		j++
	}
	return j
}

// Window returns the window holding row group i (the first is kept; the others are decoded
// again for each call).
func (f *File) Window(i int) (*Window, error) {
	if i < 0 || i >= f.NumRowGroups() {
		return nil, fmt.Errorf("parquet: %s: row group %d of %d", f.name, i, f.NumRowGroups())
	}
	if i < f.windowEnd(0) {
		return f.first, nil
	}
	// Windows start at the ends of the ones before: find the one holding i.
	lo := f.windowEnd(0)
	for {
		hi := f.windowEnd(lo)
		if i < hi {
			return f.open(lo)
		}
		lo = hi
	}
}

// Next returns the window after w (nil, nil after the last), without searching for it.
func (f *File) Next(w *Window) (*Window, error) {
	lo := w.First + len(w.PF.RowGroups())
	if lo >= f.NumRowGroups() {
		return nil, nil
	}
	return f.open(lo)
}

// open decodes the window starting at row group lo and checks its column chunks.
func (f *File) open(lo int) (w *Window, err error) {
	defer func() {
		if p := recover(); p != nil {
			w, err = nil, fmt.Errorf("%w: %s: reading the footer: %v", ErrCorrupt, f.name, p)
		}
	}()
	hi := f.windowEnd(lo)
	r, size := f.r, f.size
	if lo > 0 || hi < f.NumRowGroups() {
		r, size = f.splice(lo, hi)
	}
	buf := min(maxReadBuffer, max(minReadBuffer, readBuffers/f.leaves))
	pf, err := pq.OpenFile(r, size, pq.SkipPageIndex(true), pq.SkipBloomFilters(true), pq.ReadBufferSize(buf))
	if err != nil {
		if strings.Contains(err.Error(), "DecryptionConfig") { // the library has no error value for it
			return nil, fmt.Errorf("%w: %s: encrypted Parquet (signed plaintext footer) is not supported", ErrUnsupported, f.name)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, f.name, err)
	}
	if err := f.check(pf, lo); err != nil {
		return nil, err
	}
	return &Window{PF: pf, First: lo}, nil
}

// splice returns a view of the file whose footer lists only row groups [lo, hi): the file's
// bytes up to its footer, then the footer with the other row groups' structs left out.
func (f *File) splice(lo, hi int) (io.ReaderAt, int64) {
	l := f.layout
	start := l.rgStart
	if lo > 0 {
		start = l.rgEnd[lo-1]
	}
	k := hi - lo
	tail := make([]byte, 0, l.rgList+16+l.rgEnd[hi-1]-start+len(f.footer)-l.listEnd+8)
	tail = append(tail, f.footer[:l.rgList]...)
	if k < 15 {
		tail = append(tail, byte(k<<4)|12)
	} else {
		tail = append(tail, 0xf0|12)
		tail = binary.AppendUvarint(tail, uint64(k))
	}
	// The row groups' ordinals, when the writer set them, must count from 0 in the window
	// (the library checks that each equals its position): then the window's row group
	// structs are re-encoded with their ordinals in the window.
	rgs := make([]format.RowGroup, 0, k)
	ordinals := false
	for i, s := lo, start; i < hi; i++ {
		var rg format.RowGroup
		if err := thrift.Unmarshal(&thrift.CompactProtocol{}, f.footer[s:l.rgEnd[i]], &rg); err != nil {
			ordinals = false // the library reports it
			break
		}
		ordinals = ordinals || rg.Ordinal != 0
		rgs = append(rgs, rg)
		s = l.rgEnd[i]
	}
	var enc []byte
	for j := 0; ordinals && j < len(rgs); j++ {
		rgs[j].Ordinal = int16(j)
		b, err := thrift.Marshal(&thrift.CompactProtocol{}, &rgs[j])
		if err != nil {
			ordinals = false
		}
		enc = append(enc, b...)
	}
	if ordinals {
		tail = append(tail, enc...)
	} else {
		tail = append(tail, f.footer[start:l.rgEnd[hi-1]]...)
	}
	tail = append(tail, f.footer[l.listEnd:]...)
	tail = binary.LittleEndian.AppendUint32(tail, uint32(len(tail)))
	tail = append(tail, "PAR1"...)
	cut := f.size - 8 - int64(len(f.footer))
	return &spliced{r: f.r, cut: cut, tail: tail}, cut + int64(len(tail))
}

// spliced is a file's bytes up to cut followed by tail.
type spliced struct {
	r    io.ReaderAt
	cut  int64
	tail []byte
}

func (s *spliced) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	if off < s.cut {
		k := int(min(int64(len(p)), s.cut-off))
		m, err := s.r.ReadAt(p[:k], off)
		n += m
		if m < k {
			return n, err
		}
		off += int64(k)
	}
	if n == len(p) {
		return n, nil
	}
	i := off - s.cut
	if i >= int64(len(s.tail)) {
		return n, io.EOF
	}
	m := copy(p[n:], s.tail[i:])
	n += m
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// check checks what the window's footer says of its column chunks.
func (f *File) check(pf *pq.File, lo int) error {
	md := pf.Metadata()
	if md.EncryptionAlgorithm.Value != nil {
		return fmt.Errorf("%w: %s: encrypted columns are not supported", ErrUnsupported, f.name)
	}
	if md.NumRows < 0 {
		return fmt.Errorf("%w: %s: the footer claims %d rows", ErrCorrupt, f.name, md.NumRows)
	}
	cols := len(pf.Schema().Columns())
	for k, rg := range md.RowGroups {
		i := lo + k
		if len(rg.Columns) != cols {
			return fmt.Errorf("%w: %s: row group %d has %d column chunks, the schema %d columns", ErrCorrupt, f.name, i, len(rg.Columns), cols)
		}
		if rg.NumRows < 0 {
			return fmt.Errorf("%w: %s: row group %d claims %d rows", ErrCorrupt, f.name, i, rg.NumRows)
		}
		for j := range rg.Columns {
			c := &rg.Columns[j]
			m := &c.MetaData
			path := quote.Q(strings.Join(m.PathInSchema, "."))
			start := ChunkStart(m)
			if start < 0 || m.TotalCompressedSize < 0 || start > f.size || m.TotalCompressedSize > f.size-start {
				return fmt.Errorf("%w: %s: row group %d, column %s lies outside the file (offset %d, %d bytes, file %d bytes)",
					ErrCorrupt, f.name, i, path, start, m.TotalCompressedSize, f.size)
			}
			if m.NumValues < 0 {
				return fmt.Errorf("%w: %s: row group %d, column %s claims %d values", ErrCorrupt, f.name, i, path, m.NumValues)
			}
			switch m.Codec {
			case format.Uncompressed, format.Snappy, format.Gzip, format.Brotli, format.Zstd, format.Lz4Raw:
			case format.Lz4:
				return fmt.Errorf("%w: %s: column %s uses the deprecated LZ4 codec (Hadoop-framed; LZ4_RAW is supported)", ErrUnsupported, f.name, path)
			default:
				return fmt.Errorf("%w: %s: column %s uses codec %s", ErrUnsupported, f.name, path, m.Codec)
			}
			if c.FilePath != "" {
				return fmt.Errorf("%w: %s: column %s is stored in another file (%s)", ErrUnsupported, f.name, path, quote.Q(c.FilePath))
			}
			if c.CryptoMetadata.Value != nil || len(c.EncryptedColumnMetadata) > 0 {
				return fmt.Errorf("%w: %s: encrypted column %s is not supported", ErrUnsupported, f.name, path)
			}
		}
	}
	return nil
}

// ChunkStart returns the offset of a column chunk's first page (its dictionary page, if any).
func ChunkStart(m *format.ColumnMetaData) int64 {
	start := m.DataPageOffset
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
		start = m.DictionaryPageOffset
	}
	return start
}
