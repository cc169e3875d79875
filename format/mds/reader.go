package mds

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/mldf/convert/internal/quote"
)

// Shard is one shard named by an index.
type Shard struct {
	// Basename is the shard's file name in the dataset's directory.
	Basename string
	// Samples is its sample count; Bytes its size (-1: not given).
	Samples, Bytes int64
}

// Index is a dataset's index.json, checked.
type Index struct {
	Columns []Column
	Shards  []Shard
	// Samples is the total of the shards' samples.
	Samples int64
}

// ParseIndex parses and checks an index.json (name is used in errors): version 2, every
// shard in MDS format, uncompressed, with the same columns, known and safe encodings, and a
// plain file name; a sample count that fits uint32.
func ParseIndex(b []byte, name string) (*Index, error) {
	if len(b) > MaxIndexSize {
		return nil, fmt.Errorf("%w: %s: %d bytes, more than %d", ErrUnsupported, name, len(b), MaxIndexSize)
	}
	var raw struct {
		Version *int              `json:"version"`
		Shards  []json.RawMessage `json:"shards"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, name, err)
	}
	if raw.Version == nil || *raw.Version != 2 {
		return nil, fmt.Errorf("%w: %s: index version other than 2", ErrUnsupported, name)
	}
	if raw.Shards == nil {
		return nil, fmt.Errorf("%w: %s: no shards list", ErrCorrupt, name)
	}
	ix := &Index{}
	seen := map[string]bool{}
	for i, rs := range raw.Shards {
		var s struct {
			shardEntry
			Version *int `json:"version"`
		}
		dec := json.NewDecoder(bytes.NewReader(rs))
		if err := dec.Decode(&s); err != nil {
			return nil, fmt.Errorf("%w: %s: shard %d: %v", ErrCorrupt, name, i, err)
		}
		where := fmt.Sprintf("%s: shard %d", name, i)
		switch {
		case s.Format != "mds":
			return nil, fmt.Errorf("%w: %s: format %s (only mds is read)", ErrUnsupported, where, quote.Q(trim(s.Format)))
		case s.Version == nil || *s.Version != 2:
			return nil, fmt.Errorf("%w: %s: shard version other than 2", ErrUnsupported, where)
		case s.Compression != nil && *s.Compression != "" || s.ZipData != nil && s.RawData == nil:
			return nil, fmt.Errorf("%w: %s: compressed shards are not read (write the dataset without compression)", ErrUnsupported, where)
		case s.RawData == nil:
			return nil, fmt.Errorf("%w: %s: no raw_data", ErrCorrupt, where)
		case s.Samples < 0 || s.Samples > (MaxSizeLimit-8)/4:
			return nil, fmt.Errorf("%w: %s: %d samples", ErrCorrupt, where, s.Samples)
		case len(s.ColumnNames) == 0 || len(s.ColumnNames) > MaxColumns ||
			len(s.ColumnEncodings) != len(s.ColumnNames) || len(s.ColumnSizes) != len(s.ColumnNames):
			return nil, fmt.Errorf("%w: %s: %d column names, %d encodings, %d sizes", ErrCorrupt, where,
				len(s.ColumnNames), len(s.ColumnEncodings), len(s.ColumnSizes))
		}
		base := s.RawData.Basename
		if base == "" || base != path.Base(base) || base == "." || base == ".." || strings.ContainsAny(base, `/\`) || strings.ContainsRune(base, 0) {
			return nil, fmt.Errorf("%w: %s: file name %s is not a plain name", ErrCorrupt, where, quote.Q(trim(base)))
		}
		if seen[base] {
			return nil, fmt.Errorf("%w: %s: file %s listed twice", ErrCorrupt, where, quote.Q(trim(base)))
		}
		seen[base] = true
		var cols []Column
		for k, n := range s.ColumnNames {
			enc := s.ColumnEncodings[k]
			size, err := EncodedSize(enc)
			if err != nil {
				return nil, fmt.Errorf("%s: column %s: %w", where, quote.Q(trim(n)), err)
			}
			given := 0
			if s.ColumnSizes[k] != nil {
				given = *s.ColumnSizes[k]
			}
			if given != size {
				return nil, fmt.Errorf("%w: %s: column %s (%s) has size %d, the encoding %d", ErrCorrupt, where, quote.Q(trim(n)), quote.Q(trim(enc)), given, size)
			}
			cols = append(cols, Column{Name: n, Encoding: enc, Size: size})
		}
		if ix.Columns == nil {
			ix.Columns = cols
		} else if !sameColumns(ix.Columns, cols) {
			return nil, fmt.Errorf("%w: %s: columns differ from shard 0's", ErrUnsupported, where)
		}
		bytesGiven := s.RawData.Bytes
		if bytesGiven < 0 || bytesGiven > MaxSizeLimit {
			return nil, fmt.Errorf("%w: %s: %d bytes", ErrCorrupt, where, bytesGiven)
		}
		ix.Shards = append(ix.Shards, Shard{Basename: base, Samples: s.Samples, Bytes: bytesGiven})
		ix.Samples += s.Samples
	}
	return ix, nil
}

func sameColumns(a, b []Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ShardReader reads the samples of one shard.
type ShardReader struct {
	name    string
	r       io.ReaderAt
	cols    []Column
	offsets []uint32
	vars    int // variable-size columns
	fixed   int // bytes of the fixed-size columns
}

// OpenShard reads and checks a shard's header: its sample count is the index's, its
// offsets start after the header, never decrease and end within the file (size bytes, which
// is the index's when it gives one).
func OpenShard(r io.ReaderAt, size int64, sh Shard, cols []Column, name string) (*ShardReader, error) {
	if sh.Bytes > 0 && size != sh.Bytes {
		return nil, fmt.Errorf("%w: %s: %d bytes, the index says %d", ErrCorrupt, name, size, sh.Bytes)
	}
	if size < 8 || size > MaxSizeLimit {
		return nil, fmt.Errorf("%w: %s: %d bytes is not a shard", ErrCorrupt, name, size)
	}
	var b4 [4]byte
	if _, err := r.ReadAt(b4[:], 0); err != nil {
		return nil, fmt.Errorf("mds: %s: %w", name, err)
	}
	n := int64(binary.LittleEndian.Uint32(b4[:]))
	if n != sh.Samples {
		return nil, fmt.Errorf("%w: %s: %d samples, the index says %d", ErrCorrupt, name, n, sh.Samples)
	}
	head := 4 + 4*(n+1)
	if head > size {
		return nil, fmt.Errorf("%w: %s: %d samples do not fit %d bytes", ErrCorrupt, name, n, size)
	}
	raw := make([]byte, 4*(n+1))
	if _, err := r.ReadAt(raw, 4); err != nil && !(errors.Is(err, io.EOF) && int64(len(raw))+4 == size) {
		return nil, fmt.Errorf("mds: %s: reading the offsets: %w", name, err)
	}
	s := &ShardReader{name: name, r: r, cols: cols, offsets: make([]uint32, n+1)}
	for i := range s.offsets {
		s.offsets[i] = binary.LittleEndian.Uint32(raw[4*i:])
		switch {
		case i == 0 && int64(s.offsets[0]) < head:
			return nil, fmt.Errorf("%w: %s: the samples start at %d, inside the header (%d bytes)", ErrCorrupt, name, s.offsets[0], head)
		case i > 0 && s.offsets[i] < s.offsets[i-1]:
			return nil, fmt.Errorf("%w: %s: sample %d ends at %d, before it starts (%d)", ErrCorrupt, name, i-1, s.offsets[i], s.offsets[i-1])
		case int64(s.offsets[i]) > size:
			return nil, fmt.Errorf("%w: %s: sample %d ends at %d, past the end of the file (%d bytes)", ErrCorrupt, name, max(0, i-1), s.offsets[i], size)
		}
	}
	for _, c := range cols {
		if c.Size == 0 {
			s.vars++
		}
		s.fixed += c.Size
	}
	return s, nil
}

// Len returns the number of samples.
func (s *ShardReader) Len() int { return len(s.offsets) - 1 }

// Sample reads sample i into buf (grown as needed) and returns its columns' bytes (slices of
// the returned buffer), checking that the sizes it declares add up to its length.
func (s *ShardReader) Sample(i int, buf []byte) ([][]byte, []byte, error) {
	if i < 0 || i >= s.Len() {
		return nil, buf, fmt.Errorf("mds: %s: sample %d of %d", s.name, i, s.Len())
	}
	lo, hi := int64(s.offsets[i]), int64(s.offsets[i+1])
	n := hi - lo
	if int64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if k, err := s.r.ReadAt(buf, lo); int64(k) < n {
		return nil, buf, fmt.Errorf("mds: %s: sample %d: %w", s.name, i, err)
	}
	vals, err := Split(buf, s.cols)
	if err != nil {
		return nil, buf, fmt.Errorf("%s: sample %d: %w", s.name, i, err)
	}
	return vals, buf, nil
}

// Split splits one sample's bytes into its columns' values.
func Split(b []byte, cols []Column) ([][]byte, error) {
	vars := 0
	for _, c := range cols {
		if c.Size == 0 {
			vars++
		}
	}
	if len(b) < 4*vars {
		return nil, fmt.Errorf("%w: %d bytes hold no sizes of %d columns", ErrCorrupt, len(b), vars)
	}
	body := int64(len(b) - 4*vars)
	at, v := int64(4*vars), 0
	out := make([][]byte, len(cols))
	for k, c := range cols {
		n := int64(c.Size)
		if n == 0 {
			n = int64(binary.LittleEndian.Uint32(b[4*v:]))
			v++
		}
		if n > body-(at-int64(4*vars)) {
			return nil, fmt.Errorf("%w: column %s: %d bytes, past the end of the sample", ErrCorrupt, quote.Q(trim(c.Name)), n)
		}
		out[k] = b[at : at+n : at+n]
		at += n
	}
	if at != int64(len(b)) {
		return nil, fmt.Errorf("%w: the columns hold %d bytes of the sample's %d", ErrCorrupt, at, len(b))
	}
	return out, nil
}
