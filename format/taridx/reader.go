package taridx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/internal/inputfile"
)

// Index is a parsed, validated TARIDX file.
type Index struct {
	Header     Header
	Exts       []string // extension names by extid ("" is a valid extension)
	CrashStems []string // CrashStems[i] is the stem with crash id i+1
	Rows       []Row

	keysOnce sync.Once
	keys     map[rowKey][]int
}

type rowKey struct {
	hash  uint64
	crash uint32
}

// Parse decodes and validates a TARIDX file held in b. Beyond the spec's MUSTs (magic, the
// row count) it checks hdr_size, rec_size, the block offsets, the extension and crash
// counts, every row's extid and crashid, n_stems <= n_rows, and that a set contiguity flag
// is true. It splits both text blocks on '\n' exactly, so empty extensions load (the
// reference's own loader splits on whitespace and rejects them). Allocation is bounded by
// len(b), whatever the header claims.
func Parse(b []byte) (*Index, error) {
	if len(b) < HeaderSize {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrCorrupt, len(b), HeaderSize)
	}
	h := decodeHeader(b)
	if string(h.Magic[:]) != Magic {
		return nil, fmt.Errorf("%w: %q", ErrMagic, h.Magic[:])
	}
	if h.Major != VersionMajor {
		return nil, fmt.Errorf("%w: %d.%d (this reader understands %d.x)", ErrVersion, h.Major, h.Minor, VersionMajor)
	}
	if h.HdrSize != HeaderSize || h.RecSize != RowSize {
		return nil, fmt.Errorf("%w: hdr_size %d rec_size %d, want %d and %d", ErrCorrupt, h.HdrSize, h.RecSize, HeaderSize, RowSize)
	}
	n := uint64(len(b))
	if h.OffCrash < HeaderSize || h.OffArr < h.OffCrash || h.OffArr > n {
		return nil, fmt.Errorf("%w: off_crash %d off_arr %d in a %d-byte file", ErrCorrupt, h.OffCrash, h.OffArr, n)
	}
	if (n-h.OffArr)%RowSize != 0 {
		return nil, fmt.Errorf("%w: row array of %d bytes is not a multiple of %d", ErrCorrupt, n-h.OffArr, RowSize)
	}
	if rows := (n - h.OffArr) / RowSize; rows != h.NRows {
		return nil, fmt.Errorf("%w: n_rows %d but the file holds %d rows", ErrCorrupt, h.NRows, rows)
	}
	if h.NStems > h.NRows {
		return nil, fmt.Errorf("%w: n_stems %d exceeds n_rows %d", ErrCorrupt, h.NStems, h.NRows)
	}
	exts, err := splitBlock(b[HeaderSize:h.OffCrash], uint64(h.NExt), "extension")
	if err != nil {
		return nil, err
	}
	crash, err := splitBlock(b[h.OffCrash:h.OffArr], uint64(h.NCrash), "crash")
	if err != nil {
		return nil, err
	}
	ix := &Index{Header: h, Exts: exts, CrashStems: crash, Rows: make([]Row, h.NRows)}
	arr := b[h.OffArr:]
	for i := range ix.Rows {
		r := decodeRow(arr[i*RowSize:])
		if uint32(r.ExtID) >= h.NExt {
			return nil, fmt.Errorf("%w: row %d: extid %d, n_ext %d", ErrCorrupt, i, r.ExtID, h.NExt)
		}
		if r.CrashID > h.NCrash {
			return nil, fmt.Errorf("%w: row %d: crashid %d, n_crash %d", ErrCorrupt, i, r.CrashID, h.NCrash)
		}
		ix.Rows[i] = r
	}
	if h.Contiguous() && !contiguous(ix.Rows, h.NStems) {
		return nil, fmt.Errorf("%w: flags say contiguous but the rows do not form n_stems=%d runs", ErrCorrupt, h.NStems)
	}
	return ix, nil
}

// splitBlock splits a '\n'-joined text block into exactly want entries. An empty block is
// zero entries when want is 0 and one empty entry when want is 1.
func splitBlock(b []byte, want uint64, what string) ([]string, error) {
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%w: %s block is not UTF-8", ErrCorrupt, what)
	}
	got := uint64(bytes.Count(b, []byte{'\n'})) + 1
	if len(b) == 0 && want == 0 {
		got = 0
	}
	if got != want {
		return nil, fmt.Errorf("%w: %s block holds %d entries, header says %d", ErrCorrupt, what, got, want)
	}
	if want == 0 {
		return nil, nil
	}
	return strings.Split(string(b), "\n"), nil
}

// Load reads and parses the TARIDX file at path.
func Load(path string) (*Index, error) {
	b, err := inputfile.ReadFile(path) // a named pipe is refused, never waited on
	if err != nil {
		return nil, fmt.Errorf("taridx: %w", err)
	}
	ix, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ix, nil
}

// Ext returns the extension of row i.
func (ix *Index) Ext(i int) string { return ix.Exts[ix.Rows[i].ExtID] }

// Find returns the rows whose stem is stem, in row order.
func (ix *Index) Find(stem string) []int {
	ix.keysOnce.Do(func() {
		ix.keys = make(map[rowKey][]int)
		for i, r := range ix.Rows {
			k := rowKey{r.KeyHash, r.CrashID}
			ix.keys[k] = append(ix.keys[k], i)
		}
	})
	k := rowKey{hash: xxhash.Sum64String(stem)}
	for i, c := range ix.CrashStems {
		if c == stem {
			k.crash = uint32(i + 1)
			break
		}
	}
	return ix.keys[k]
}

// Shards returns the number of shards the rows refer to: the largest fid plus one.
func (ix *Index) Shards() int {
	m := -1
	for _, r := range ix.Rows {
		m = max(m, int(r.FID))
	}
	return m + 1
}

// Reader gives random access to the members an Index describes, reading the shard files.
// It is safe for concurrent use.
type Reader struct {
	*Index
	path   string
	shards []string

	mu    sync.Mutex
	files []*os.File
	sizes []int64
}

// Open loads the index at path and prepares access to its members in the given shard files
// (shards[fid]). Shard files are opened on first use. It fails when a row names a fid
// beyond the shards given; shards may be nil to only inspect the index.
func Open(path string, shards []string) (*Reader, error) {
	ix, err := Load(path)
	if err != nil {
		return nil, err
	}
	if shards != nil {
		if n := ix.Shards(); n > len(shards) {
			return nil, fmt.Errorf("%w: %s: rows refer to %d shards, %d given", ErrShard, path, n, len(shards))
		}
	}
	return &Reader{Index: ix, path: path, shards: shards,
		files: make([]*os.File, len(shards)), sizes: make([]int64, len(shards))}, nil
}

func (r *Reader) shard(fid int) (*os.File, int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if fid >= len(r.shards) {
		return nil, 0, fmt.Errorf("%w: %s: fid %d, %d shards given", ErrShard, r.path, fid, len(r.shards))
	}
	if r.files[fid] == nil {
		f, st, err := inputfile.OpenRegular(r.shards[fid])
		if err != nil {
			return nil, 0, fmt.Errorf("taridx: %w", err)
		}
		r.files[fid], r.sizes[fid] = f, st.Size()
	}
	return r.files[fid], r.sizes[fid], nil
}

// Open returns a reader of row i's payload: the Size bytes after its header block.
func (r *Reader) Open(i int) (*io.SectionReader, error) {
	if i < 0 || i >= len(r.Rows) {
		return nil, fmt.Errorf("%w: %s: row %d of %d", ErrRow, r.path, i, len(r.Rows))
	}
	row := r.Rows[i]
	f, size, err := r.shard(int(row.FID))
	if err != nil {
		return nil, err
	}
	if row.Offset > uint64(size) || uint64(size)-row.Offset < BlockSize || uint64(size)-row.Offset-BlockSize < row.Size {
		return nil, fmt.Errorf("%w: %s: row %d: member at offset %d with %d bytes runs past the end of %s (%d bytes)",
			ErrShard, r.path, i, row.Offset, row.Size, r.shards[row.FID], size)
	}
	return io.NewSectionReader(f, int64(row.Offset)+BlockSize, int64(row.Size)), nil
}

// ReadMember returns row i's payload.
func (r *Reader) ReadMember(i int) ([]byte, error) {
	sr, err := r.Open(i)
	if err != nil {
		return nil, err
	}
	b := make([]byte, sr.Size())
	if _, err := io.ReadFull(sr, b); err != nil {
		return nil, fmt.Errorf("taridx: %s: row %d: %w", r.shards[r.Rows[i].FID], i, err)
	}
	return b, nil
}

// MemberName returns the name field (the 100-byte ustar name, decoded as the index saw it)
// of row i's header block.
func (r *Reader) MemberName(i int) (string, error) {
	if i < 0 || i >= len(r.Rows) {
		return "", fmt.Errorf("%w: %s: row %d of %d", ErrRow, r.path, i, len(r.Rows))
	}
	row := r.Rows[i]
	f, size, err := r.shard(int(row.FID))
	if err != nil {
		return "", err
	}
	if row.Offset > uint64(size) || uint64(size)-row.Offset < BlockSize {
		return "", fmt.Errorf("%w: %s: row %d: header at offset %d beyond the end of %s", ErrShard, r.path, i, row.Offset, r.shards[row.FID])
	}
	var hdr [BlockSize]byte
	if _, err := f.ReadAt(hdr[:], int64(row.Offset)); err != nil {
		return "", fmt.Errorf("taridx: %s: row %d: %w", r.shards[row.FID], i, err)
	}
	return nameField(hdr[:]), nil
}

// Close closes the shard files opened so far.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for i, f := range r.files {
		if f != nil {
			errs = append(errs, f.Close())
			r.files[i] = nil
		}
	}
	return errors.Join(errs...)
}
