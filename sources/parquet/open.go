package parquet

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"

	pq "github.com/parquet-go/parquet-go"

	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sources"
	"github.com/parquet-go/parquet-go/format"
)

// Blob is an opened input: random access to its bytes and its size. A file on disk is one; a
// ranged reader over an object in a bucket is another.
type Blob interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// Opener opens an input by name. The default opens local files; object storage plugs in here
// (the reader needs nothing but ReadAt and the size).
type Opener func(name string) (Blob, error)

// OpenFile is the default Opener: a local file.
func OpenFile(name string) (Blob, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory", name)
	}
	return &osBlob{File: f, size: st.Size()}, nil
}

// StoreOpener returns an Opener for local paths and URLs: a local file (or file:// URL)
// through OpenFile, an object in a bucket through store's ranged reads (each ReadAt one
// ranged GET, retried and resumed under ctx), so footers and column chunks are read where
// they lie, never the whole object.
func StoreOpener(ctx context.Context, store *objstore.Client) Opener {
	return func(name string) (Blob, error) {
		if !sources.IsURL(name) {
			return OpenFile(sources.LocalPath(name))
		}
		return store.OpenReaderAt(ctx, name)
	}
}

type osBlob struct {
	*os.File
	size int64
}

func (b *osBlob) Size() int64 { return b.size }

// file is an opened Parquet file: its blob, the library's view of it and our schema tree.
type file struct {
	name   string
	blob   Blob
	pf     *pq.File
	schema *Schema
	meta   map[string]string // key-value metadata
}

// readBufferSize is the library's read-ahead per column chunk stream.
const readBufferSize = 256 << 10

// openFile opens and checks the footer of a Parquet file. Every size the footer claims is
// checked against the file's size before anything is allocated for it, and a panic of the
// library becomes an error naming the file.
func openFile(open Opener, name string) (f *file, err error) {
	blob, err := open(name)
	if err != nil {
		return nil, fmt.Errorf("parquet: %s: %w", name, err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: reading the footer: %v", ErrCorrupt, name, r)
		}
		if err != nil {
			blob.Close()
		}
	}()
	size := blob.Size()
	if size < 12 {
		return nil, fmt.Errorf("%w: %s: %d bytes is too short for a Parquet file", ErrCorrupt, name, size)
	}
	var head, tail [8]byte
	if _, err := blob.ReadAt(head[:4], 0); err != nil {
		return nil, fmt.Errorf("parquet: %s: %w", name, err)
	}
	if _, err := blob.ReadAt(tail[:], size-8); err != nil {
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
	footer := int64(binary.LittleEndian.Uint32(tail[:4]))
	if footer > size-12 {
		return nil, fmt.Errorf("%w: %s: the footer claims %d bytes, the file has %d (truncated file?)", ErrCorrupt, name, footer, size)
	}
	// Walk the footer before the library decodes it: no length it claims may exceed its bytes.
	fb := make([]byte, footer)
	if _, err := blob.ReadAt(fb, size-8-footer); err != nil {
		return nil, fmt.Errorf("parquet: %s: reading the footer: %w", name, err)
	}
	if _, err := thriftSize(fb); err != nil {
		return nil, fmt.Errorf("%w: %s: the footer does not decode: %w", ErrCorrupt, name, err)
	}
	pf, err := pq.OpenFile(blob, size, pq.SkipPageIndex(true), pq.SkipBloomFilters(true), pq.ReadBufferSize(readBufferSize))
	if err != nil {
		if strings.Contains(err.Error(), "DecryptionConfig") { // the library has no error value for it
			return nil, fmt.Errorf("%w: %s: encrypted Parquet (signed plaintext footer) is not supported", ErrUnsupported, name)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, name, err)
	}
	md := pf.Metadata()
	if md.EncryptionAlgorithm.Value != nil {
		return nil, fmt.Errorf("%w: %s: encrypted columns are not supported", ErrUnsupported, name)
	}
	schema, err := buildSchema(md.Schema)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if md.NumRows < 0 {
		return nil, fmt.Errorf("%w: %s: the footer claims %d rows", ErrCorrupt, name, md.NumRows)
	}
	var rows int64
	for i, rg := range md.RowGroups {
		if len(rg.Columns) != len(schema.Leaves) {
			return nil, fmt.Errorf("%w: %s: row group %d has %d column chunks, the schema %d columns", ErrCorrupt, name, i, len(rg.Columns), len(schema.Leaves))
		}
		if rg.NumRows < 0 {
			return nil, fmt.Errorf("%w: %s: row group %d claims %d rows", ErrCorrupt, name, i, rg.NumRows)
		}
		for j, c := range rg.Columns {
			m := c.MetaData
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			if start < 0 || m.TotalCompressedSize < 0 || start > size || m.TotalCompressedSize > size-start {
				return nil, fmt.Errorf("%w: %s: row group %d, column %q lies outside the file (offset %d, %d bytes, file %d bytes)",
					ErrCorrupt, name, i, schema.Leaves[j].Path, start, m.TotalCompressedSize, size)
			}
			if m.NumValues < 0 {
				return nil, fmt.Errorf("%w: %s: row group %d, column %q claims %d values", ErrCorrupt, name, i, schema.Leaves[j].Path, m.NumValues)
			}
			switch m.Codec {
			case format.Uncompressed, format.Snappy, format.Gzip, format.Brotli, format.Zstd, format.Lz4Raw:
			case format.Lz4:
				return nil, fmt.Errorf("%w: %s: column %q uses the deprecated LZ4 codec (Hadoop-framed; LZ4_RAW is supported)", ErrUnsupported, name, schema.Leaves[j].Path)
			default:
				return nil, fmt.Errorf("%w: %s: column %q uses codec %s", ErrUnsupported, name, schema.Leaves[j].Path, m.Codec)
			}
			if c.FilePath != "" {
				return nil, fmt.Errorf("%w: %s: column %q is stored in another file (%q)", ErrUnsupported, name, schema.Leaves[j].Path, c.FilePath)
			}
			if c.CryptoMetadata.Value != nil || len(c.EncryptedColumnMetadata) > 0 {
				return nil, fmt.Errorf("%w: %s: encrypted column %q is not supported", ErrUnsupported, name, schema.Leaves[j].Path)
			}
		}
		rows += rg.NumRows
	}
	// The row groups' counts are what is read (some writers leave the footer's total at 0).
	_ = rows
	kv := map[string]string{}
	for _, e := range md.KeyValueMetadata {
		kv[e.Key] = e.Value
	}
	return &file{name: name, blob: blob, pf: pf, schema: schema, meta: kv}, nil
}

func (f *file) close() { f.blob.Close() }
