package taridx

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/mldf/convert/internal/atomicfile"
	"io"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/internal/inputfile"
)

// The header walk reads windows of minWindow..maxWindow bytes, starting at scanWindow. Headers
// that fall inside the last window (small members) cost no extra read; large payloads are
// skipped by seeking.
const (
	minWindow  = 2 << 10
	scanWindow = 8 << 10
	maxWindow  = 256 << 10
)

// Writer builds one TARIDX fold from tar shards added in fid order. Its zero value is not
// usable; call NewWriter.
type Writer struct {
	rows    []Row
	exts    []string
	extIDs  map[string]uint16
	canon   map[uint64]string // first stem seen for each hash: crash id 0
	crashes map[string]uint32 // later, different stems with a seen hash
	crashed []string          // crash stems in id order (id = index+1)
	shards  int
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer {
	return &Writer{
		extIDs:  make(map[string]uint16),
		canon:   make(map[uint64]string),
		crashes: make(map[string]uint32),
	}
}

// Shards returns how many shards have been added.
func (w *Writer) Shards() int { return w.shards }

// Rows returns how many rows have been added.
func (w *Writer) Rows() int { return len(w.rows) }

// AddShard walks the tar shard r of the given size and appends one row per 512-byte header
// block, with fid = the number of shards added before it. name is used in errors only. The
// walk follows the reference: it stops at the first all-zero block or when fewer than 512
// bytes remain, reads only header blocks, and does not verify checksums. A size field the
// reference cannot parse fails the shard with ErrSize; the Writer is then unchanged.
func (w *Writer) AddShard(r io.ReaderAt, size int64, name string) error {
	if w.shards >= MaxShards {
		return fmt.Errorf("%w: shard %s", ErrTooManyShards, name)
	}
	if err := checkCompressed(r, size, name); err != nil {
		return err
	}
	fid := uint16(w.shards)
	// Scan into a temporary list first so a failing shard leaves the Writer unchanged.
	type member struct {
		off, size uint64
		name      string
	}
	var members []member
	// The read window adapts: it doubles while windows serve many headers (small members)
	// and halves while each serves one (large members, where the rest would be payload).
	buf := make([]byte, maxWindow)
	window := int64(scanWindow)
	var bufOff, bufLen int64 = 0, 0
	served := 0
	for off := int64(0); size-off >= BlockSize; {
		if off < bufOff || off+BlockSize > bufOff+bufLen {
			switch {
			case served >= 8 && window < maxWindow:
				window *= 2
			case served <= 1 && window > minWindow:
				window /= 2
			}
			served = 0
			n := min(window, size-off)
			m, err := r.ReadAt(buf[:n], off)
			if int64(m) < n {
				if err == nil || errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return fmt.Errorf("taridx: shard %s: read header at offset %d: %w", name, off, err)
			}
			bufOff, bufLen = off, n
		}
		hdr := buf[off-bufOff : off-bufOff+BlockSize]
		served++
		if allZero(hdr) {
			break
		}
		sz, ok := parseSize(hdr[124:136])
		if !ok {
			return fmt.Errorf("%w: shard %s: header at offset %d: size field %q", ErrSize, name, off,
				trimNUL(hdr[124:136]))
		}
		members = append(members, member{off: uint64(off), size: sz, name: nameField(hdr)})
		blocks := (sz + BlockSize - 1) / BlockSize
		if blocks > uint64(size/BlockSize) { // payload runs past the end of the shard
			break
		}
		off += BlockSize + int64(blocks)*BlockSize
	}
	nExts, nCrashed, nRows := len(w.exts), len(w.crashed), len(w.rows)
	var newHashes []uint64
	rollback := func(err error) error {
		for _, e := range w.exts[nExts:] {
			delete(w.extIDs, e)
		}
		for _, c := range w.crashed[nCrashed:] {
			delete(w.crashes, c)
		}
		for _, h := range newHashes {
			delete(w.canon, h)
		}
		w.exts, w.crashed, w.rows = w.exts[:nExts], w.crashed[:nCrashed], w.rows[:nRows]
		return err
	}
	for _, m := range members {
		stem, ext := SplitName(m.name)
		id, ok := w.extIDs[ext]
		if !ok {
			if strings.IndexByte(ext, '\n') >= 0 {
				return rollback(fmt.Errorf("%w: shard %s: header at offset %d: extension %q holds a newline; "+
					"the index could not be read back", ErrName, name, m.off, ext))
			}
			if len(w.exts) >= 1<<16 {
				return rollback(fmt.Errorf("%w: shard %s: header at offset %d: more than 65536 distinct extensions",
					ErrName, name, m.off))
			}
			id = uint16(len(w.exts))
			w.extIDs[ext] = id
			w.exts = append(w.exts, ext)
		}
		h := xxhash.Sum64String(stem)
		var crash uint32
		if c, seen := w.canon[h]; !seen {
			w.canon[h] = stem
			newHashes = append(newHashes, h)
		} else if c != stem {
			crash, ok = w.crashes[stem]
			if !ok {
				if strings.IndexByte(stem, '\n') >= 0 {
					return rollback(fmt.Errorf("%w: shard %s: header at offset %d: colliding stem %q holds a newline",
						ErrName, name, m.off, stem))
				}
				w.crashed = append(w.crashed, stem)
				crash = uint32(len(w.crashed))
				w.crashes[stem] = crash
			}
		}
		w.rows = append(w.rows, Row{FID: fid, Offset: m.off, Size: m.size, ExtID: id, CrashID: crash, KeyHash: h})
	}
	w.shards++
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func trimNUL(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// EnforceContiguous reorders the rows so that every stem's rows are contiguous: a stable sort
// by (keyhash, crashid), as the reference's enforce_contiguous does.
func (w *Writer) EnforceContiguous() {
	slices.SortStableFunc(w.rows, func(a, b Row) int {
		if a.KeyHash != b.KeyHash {
			if a.KeyHash < b.KeyHash {
				return -1
			}
			return 1
		}
		return int(int64(a.CrashID) - int64(b.CrashID))
	})
}

// Header returns the header the Writer would write now.
func (w *Writer) Header() Header {
	extLen, crashLen := joinedLen(w.exts), joinedLen(w.crashed)
	h := Header{
		Major:    VersionMajor,
		Minor:    VersionMinor,
		RecSize:  RowSize,
		HdrSize:  HeaderSize,
		NStems:   uint64(len(w.canon) + len(w.crashed)),
		NRows:    uint64(len(w.rows)),
		NExt:     uint32(len(w.exts)),
		NCrash:   uint32(len(w.crashed)),
		OffCrash: HeaderSize + uint64(extLen),
		OffArr:   HeaderSize + uint64(extLen+crashLen),
	}
	copy(h.Magic[:], Magic)
	if contiguous(w.rows, h.NStems) {
		h.Flags |= FlagContiguous
	}
	return h
}

// contiguous applies the reference's rule: the number of runs of equal (keyhash, crashid)
// equals the number of stems, or there are fewer than two rows.
func contiguous(rows []Row, nStems uint64) bool {
	if len(rows) < 2 {
		return true
	}
	runs := uint64(1)
	for i := 1; i < len(rows); i++ {
		if rows[i].KeyHash != rows[i-1].KeyHash || rows[i].CrashID != rows[i-1].CrashID {
			runs++
		}
	}
	return runs == nStems
}

func joinedLen(s []string) int {
	if len(s) == 0 {
		return 0
	}
	n := len(s) - 1
	for _, x := range s {
		n += len(x)
	}
	return n
}

// WriteTo writes the index to dst.
func (w *Writer) WriteTo(dst io.Writer) (int64, error) {
	h := w.Header()
	b, _ := h.AppendBinary(make([]byte, 0, int(h.OffArr)+RowSize*min(len(w.rows), 1<<15)))
	b = append(b, strings.Join(w.exts, "\n")...)
	b = append(b, strings.Join(w.crashed, "\n")...)
	var total int64
	for _, r := range w.rows {
		b = appendRow(b, r)
		if len(b) >= 1<<20 {
			n, err := dst.Write(b)
			total += int64(n)
			if err != nil {
				return total, err
			}
			b = b[:0]
		}
	}
	n, err := dst.Write(b)
	return total + int64(n), err
}

// compressions are the leading bytes of compressed files, with their tool's name.
// A '.' in magic matches any byte (bzip2's block size digit).
var compressions = []struct{ magic, name, undo string }{
	{"\x1f\x8b\x08", "gzip", "gunzip -k"},
	{"\x28\xb5\x2f\xfd", "zstd", "zstd -d"},
	{"BZh.1AY&SY", "bzip2", "bunzip2 -k"},
	{"\xfd7zXZ\x00", "xz", "unxz -k"},
	{"\x04\x22\x4d\x18", "lz4", "lz4 -d"},
}

// checkCompressed returns an error wrapping ErrCompressed when the shard starts with the
// magic bytes of a compressed file (the reference would fail on its "size field", or index
// garbage).
func checkCompressed(r io.ReaderAt, size int64, name string) error {
	var head [10]byte
	n, _ := r.ReadAt(head[:min(size, int64(len(head)))], 0)
	matches := func(magic string) bool {
		if n < len(magic) {
			return false
		}
		for i := range len(magic) {
			if magic[i] != '.' && magic[i] != head[i] {
				return false
			}
		}
		return true
	}
	for _, c := range compressions {
		if matches(c.magic) {
			return fmt.Errorf("%w: %s is %s-compressed (decompress it first: %s %s)",
				ErrCompressed, name, c.name, c.undo, name)
		}
	}
	return nil
}

// AddFile opens the tar shard at path and adds it with AddShard. The shard must be a regular
// file: a named pipe or a device is refused without being opened for a blocking read.
func (w *Writer) AddFile(path string) error {
	f, st, err := inputfile.OpenRegular(path)
	if err != nil {
		return fmt.Errorf("taridx: %w", err)
	}
	defer f.Close()
	return w.AddShard(f, st.Size(), path)
}

// WriteFile writes the index to path atomically (internal/atomicfile: a temporary file in
// the same directory, synced, renamed over path, the directory synced).
func (w *Writer) WriteFile(path string) error {
	err := atomicfile.Write(path, 0o644, func(f io.Writer) error {
		_, err := w.WriteTo(f)
		return err
	})
	if err != nil {
		return fmt.Errorf("taridx: write %s: %w", path, err)
	}
	return nil
}

// IndexFiles indexes the tar shards, in order (shard i gets fid i), into one fold written
// atomically to out. Row order is scan order, as the reference writes it.
func IndexFiles(shards []string, out string) error {
	return IndexFilesOpts(shards, out, false)
}

// IndexFilesOpts is IndexFiles; with contiguous set it sorts the rows first
// (EnforceContiguous), so every stem's rows form one run and flags bit 0 is set.
func IndexFilesOpts(shards []string, out string, contiguous bool) error {
	w := NewWriter()
	for _, s := range shards {
		if err := w.AddFile(s); err != nil {
			return err
		}
	}
	if contiguous {
		w.EnforceContiguous()
	}
	return w.WriteFile(out)
}
