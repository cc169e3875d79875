// Package parquet reads Parquet files as an ordered stream of samples, one per row, with the
// configured columns as sample values. Row groups are read in parallel and emitted in file,
// row-group and row order, page by page, so memory stays bounded however large a row group is.
//
// # Reading
//
// The library is github.com/parquet-go/parquet-go (docs/PARQUET.md says why): it decodes every
// standard encoding (PLAIN, dictionary, RLE, bit-packed, DELTA_BINARY_PACKED,
// DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT) and codec (SNAPPY, GZIP, ZSTD,
// LZ4_RAW, BROTLI), data pages v1 and v2, and checks page CRCs. The schema is the library's
// own column tree (its File.Root(): paths, repetition, the levels it decodes pages with, and
// each leaf's Index, its column's position in a row group); the only things kept beside it
// are indexes into it (the leaves by column index, each column's footer element for the
// annotations as written, a wide table's columns by name). This package reads each needed
// leaf column's values with their repetition and definition levels, and assembles rows: a flat column is a value, a nested one (structs,
// lists, maps) is assembled as JSON (the record assembly of the Dremel paper) or, for lists of
// numbers, as a .npy array.
//
// Values: BOOLEAN and integers → KindInt (unsigned as such; INT96 as nanoseconds since the
// Unix epoch); FLOAT, DOUBLE, FLOAT16 → KindFloat; DECIMAL → KindString (exact decimal text);
// STRING/ENUM → KindString; JSON → KindJSON; other byte arrays → KindBytes. A null is a
// missing column (the field's required/optional setting decides). A Hugging Face Image or
// Audio struct {bytes: binary, path: string} read as a value is its bytes, named by its path.
//
// # Bounds and bad input
//
// Files are opened through the repository's one guarded Parquet opener (internal/pqfile):
// the footer is walked in its raw bytes before it is decoded (no length it claims may exceed
// its bytes, the schema at most 64 deep), its row groups are decoded a window at a time, and
// each column chunk must lie in the file and use a supported codec. Before a row group is
// read, the page headers of its chunks are read and checked (pages inside the chunk, sizes the
// codec allows, at most Options.MaxPageSize uncompressed, value counts the page's bytes and the
// row group can hold, PLAIN data long enough); then, within the row group's share of
// Options.MaxInFlight, the row group is read: each compressed page is read from the input
// once and decompressed once, as the library reaches it, into exactly the size its header
// declares (a body that decodes to more or less, or fails its checksum, stops the read); a
// snappy page, whose body states its decoded length, is handed to the library as it lies once
// that length is checked, the others are decoded here and read by the library as uncompressed
// pages. A panic of the library becomes an error. File-level problems fail New (the
// footer, the columns) or Run (pages), naming the file, row group and row; a value that cannot
// be converted makes its sample an error (RowError) for the error policy. Encrypted files, the
// deprecated LZ4 codec, columns in other files and pages or row groups beyond the limits are
// ErrUnsupported, naming the feature.
//
// Inputs are opened through an Opener (ReadAt and a size), so object storage can plug in.
package parquet
