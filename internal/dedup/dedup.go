// Package dedup finds byte-identical payloads among the samples of a run with memory flat in
// the sample count: a 128-bit content hash per sample (xxh3-128) kept in an on-disk
// open-addressing hash table, a memory-mapped temporary file whose resident pages are capped.
//
// The hash is xxh3-128 (github.com/zeebo/xxh3): non-cryptographic but with 128 bits a chance
// collision among 10^10 samples is about 10^-19, it hashes at memory speed (tens of GB/s with
// SIMD), and the implementation is small and well kept. The inputs are not adversarial in
// the sense that matters here: a collision only drops (or reports) one sample as a duplicate,
// and the rejects file names both samples, so it can be checked.
package dedup

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/zeebo/xxh3"
)

// Errors of the table.
var (
	// ErrClosed is returned by a table used after Close.
	ErrClosed = errors.New("dedup: table closed")
	// ErrTooLarge is returned when the table would exceed MaxSlots.
	ErrTooLarge = errors.New("dedup: too many distinct samples")
)

// Hash is a 128-bit content hash.
type Hash struct{ Hi, Lo uint64 }

// Hasher computes the Hash of a sample's payloads, field after field. Each part is hashed
// with its length before it, so that ("ab", "c") and ("a", "bc") differ. The zero value is
// not usable: use NewHasher.
type Hasher struct {
	h   *xxh3.Hasher
	len [8]byte
}

// NewHasher returns a Hasher ready for the first sample.
func NewHasher() *Hasher { return &Hasher{h: xxh3.New()} }

// Reset starts a new sample.
func (k *Hasher) Reset() { k.h.Reset() }

// Add hashes the next part (one field's payload) of the sample.
func (k *Hasher) Add(b []byte) {
	binary.LittleEndian.PutUint64(k.len[:], uint64(len(b)))
	_, _ = k.h.Write(k.len[:])
	_, _ = k.h.Write(b)
}

// Sum returns the hash of the parts added since Reset.
func (k *Hasher) Sum() Hash {
	s := k.h.Sum128()
	return Hash{Hi: s.Hi, Lo: s.Lo}
}

// Sum returns the Hash of parts, as a Hasher would.
func Sum(parts ...[]byte) Hash {
	k := NewHasher()
	for _, p := range parts {
		k.Add(p)
	}
	return k.Sum()
}

// First is the sample a duplicate duplicates: the first one with its hash.
type First struct {
	Index  int64  // its index (as the caller numbered it: the sample's index in its source)
	Origin string // where it came from (its file, possibly with a position), as given to Check
}

// Defaults and bounds of Config.
const (
	// DefaultResident caps the table's pages the process keeps mapped: 64 MiB.
	DefaultResident = 64 << 20
	// MinResident is the smallest cap a Config may set.
	MinResident = 1 << 20
	// minSlots is the smallest table: 4096 slots of 32 bytes (128 KiB).
	minSlots = 1 << 12
	// unknownSlots is the first table when the sample count is unknown: 32 MiB of file.
	unknownSlots = 1 << 20
	// MaxSlots bounds the table: 2^36 slots of 32 bytes (2 TiB of file), 4×10^10 samples.
	MaxSlots = 1 << 36
	// MaxOrigin is the longest origin kept per sample (longer ones are cut).
	MaxOrigin = 1 << 12
	slotSize  = 32
	pageSize  = 4096
)

// Config configures a Table.
type Config struct {
	// Dir holds the table's temporary files ("" means os.TempDir()). They are removed from
	// the directory as soon as they are created (on Unix), so nothing stays behind, even
	// after kill -9.
	Dir string
	// Expected is the number of distinct samples the table sizes itself for (0 or less:
	// unknown, a table for about 650 000); it doubles, rehashing, when it fills beyond 5/8.
	Expected int64
	// Resident caps the bytes of the table the process keeps mapped (its resident set); 0
	// means DefaultResident. Pages beyond it are handed back to the page cache (and the disk)
	// and mapped again when touched.
	Resident int64
}

// Table remembers the hash of every distinct sample it was shown and the first sample that
// had it. Its memory is the mapped part of its file (at most Config.Resident bytes) plus a
// few buffers, whatever the number of samples. It is used by one goroutine at a time.
type Table struct {
	dir      string
	resident int64 // the cap (bytes)
	slots    uint64
	n        int64
	a        *area
	old      *area // the table being rehashed into a, while grow runs
	// touches counts the slot accesses since the last drop; a slot lies in one page, so the
	// mapped part is at most touches pages.
	touches, dropEvery int64
	peak               int64 // the largest mapped part accounted (bytes)
	dups               int64

	origins        *os.File
	ow             *bufio.Writer
	olen, oflushed int64
	closed         bool
	originBuf      []byte
}

// New creates an empty table.
func New(cfg Config) (*Table, error) {
	if cfg.Resident == 0 {
		cfg.Resident = DefaultResident
	}
	if cfg.Resident < MinResident {
		return nil, fmt.Errorf("dedup: resident cap %d bytes: at least %d", cfg.Resident, MinResident)
	}
	if cfg.Dir == "" {
		cfg.Dir = os.TempDir()
	}
	slots := uint64(minSlots)
	if cfg.Expected <= 0 {
		// Unknown: a table for about 650 000 samples, a sparse file that costs the disk only
		// the pages touched, rather than many rehashes of a growing one.
		slots = unknownSlots
	}
	for cfg.Expected > 0 && slots < MaxSlots && slots*5/8 < uint64(cfg.Expected) {
		slots *= 2
	}
	t := &Table{dir: cfg.Dir, resident: cfg.Resident, dropEvery: max(1, cfg.Resident/pageSize)}
	a, err := newArea(cfg.Dir, slots)
	if err != nil {
		return nil, fmt.Errorf("dedup: create the table in %s: %w", cfg.Dir, err)
	}
	t.a, t.slots = a, slots
	f, err := tempFile(cfg.Dir, "dedup-origins-*")
	if err != nil {
		a.close()
		return nil, fmt.Errorf("dedup: create the origins file in %s: %w", cfg.Dir, err)
	}
	t.origins, t.ow = f, bufio.NewWriterSize(f, 64<<10)
	return t, nil
}

// Len returns the number of distinct hashes in the table.
func (t *Table) Len() int64 { return t.n }

// Duplicates returns how many Check calls found their hash already there.
func (t *Table) Duplicates() int64 { return t.dups }

// ResidentCap returns the cap on the table's mapped bytes (Config.Resident).
func (t *Table) ResidentCap() int64 { return t.resident }

// PeakResident returns the largest number of the table's bytes that were mapped at once, as
// the table accounts them (an upper bound: every slot access counted as a page of its own).
// It never exceeds ResidentCap.
func (t *Table) PeakResident() int64 { return t.peak }

// Slots returns the table's current capacity in slots (32 bytes each, on disk).
func (t *Table) Slots() uint64 { return t.slots }

// Check looks h up. When a sample had h before, it returns that first sample and true; else
// it records h for the sample (index, origin) and returns false.
func (t *Table) Check(h Hash, index int64, origin string) (First, bool, error) {
	if t.closed {
		return First{}, false, ErrClosed
	}
	if index < 0 {
		return First{}, false, fmt.Errorf("dedup: negative sample index %d", index)
	}
	i, s, found := t.probe(h)
	if err := t.a.err(); err != nil {
		return First{}, false, err
	}
	if found {
		t.dups++
		o, err := t.origin(s.ref)
		if err != nil {
			return First{}, false, err
		}
		return First{Index: int64(s.idx - 1), Origin: o}, true, nil
	}
	if uint64(t.n+1) > t.slots*5/8 {
		if err := t.grow(); err != nil {
			return First{}, false, err
		}
		i, _, _ = t.probe(h)
	}
	ref, err := t.addOrigin(origin)
	if err != nil {
		return First{}, false, err
	}
	t.put(i, slot{hi: h.Hi, lo: h.Lo, idx: uint64(index) + 1, ref: ref})
	if err := t.a.err(); err != nil {
		return First{}, false, err
	}
	t.n++
	return First{}, false, nil
}

// Close removes the table's files and releases its memory.
func (t *Table) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	err := t.a.close()
	if cerr := closeTemp(t.origins); err == nil {
		err = cerr
	}
	return err
}

// slot is one entry: the hash, the first sample's index plus one (0: an empty slot) and its
// origin's place in the origins file (offset << 16 | length).
type slot struct{ hi, lo, idx, ref uint64 }

func (t *Table) probe(h Hash) (uint64, slot, bool) {
	mask := t.slots - 1
	for i := h.Lo & mask; ; i = (i + 1) & mask {
		s := t.get(i)
		if s.idx == 0 {
			return i, s, false
		}
		if s.hi == h.Hi && s.lo == h.Lo {
			return i, s, true
		}
	}
}

func (t *Table) get(i uint64) slot {
	t.touch()
	return t.a.get(i)
}

func (t *Table) put(i uint64, s slot) {
	t.touch()
	t.a.put(i, s)
}

// touch accounts one slot access and hands the mapped pages back once the cap may be
// reached.
func (t *Table) touch() {
	size := t.a.size()
	if t.old != nil {
		size += t.old.size()
	}
	if size <= t.resident {
		t.peak = max(t.peak, size)
		return
	}
	t.touches++
	t.peak = max(t.peak, min(pageSize*t.touches, size))
	if t.touches >= t.dropEvery {
		t.a.drop()
		if t.old != nil {
			t.old.drop()
		}
		t.touches = 0
	}
}

// grow doubles the table, rehashing every entry into a new file.
func (t *Table) grow() error {
	if t.slots >= MaxSlots {
		return fmt.Errorf("%w: %d (at most %d)", ErrTooLarge, t.n, uint64(MaxSlots*5/8))
	}
	old, oldSlots := t.a, t.slots
	a, err := newArea(t.dir, 2*oldSlots)
	if err != nil {
		return fmt.Errorf("dedup: grow the table in %s: %w", t.dir, err)
	}
	t.a, t.slots, t.old = a, 2*oldSlots, old
	defer func() { t.old = nil }()
	mask := t.slots - 1
	for j := range oldSlots {
		t.touch() // the old table's pages, accounted like the new one's
		s := old.get(j)
		if s.idx == 0 {
			continue
		}
		i := s.lo & mask
		for t.get(i).idx != 0 {
			i = (i + 1) & mask
		}
		t.put(i, s)
	}
	if err := errors.Join(old.err(), a.err()); err != nil {
		_ = old.close()
		return fmt.Errorf("dedup: grow the table in %s: %w", t.dir, err)
	}
	return old.close()
}

func (t *Table) addOrigin(o string) (uint64, error) {
	if len(o) > MaxOrigin {
		o = o[:MaxOrigin]
	}
	ref := uint64(t.olen)<<16 | uint64(len(o))
	if _, err := t.ow.WriteString(o); err != nil {
		return 0, fmt.Errorf("dedup: write the origins file: %w", err)
	}
	t.olen += int64(len(o))
	return ref, nil
}

func (t *Table) origin(ref uint64) (string, error) {
	off, n := int64(ref>>16), int(ref&0xffff)
	if n == 0 {
		return "", nil
	}
	if off+int64(n) > t.oflushed {
		if err := t.ow.Flush(); err != nil {
			return "", fmt.Errorf("dedup: write the origins file: %w", err)
		}
		t.oflushed = t.olen
	}
	if cap(t.originBuf) < n {
		t.originBuf = make([]byte, n)
	}
	b := t.originBuf[:n]
	if _, err := t.origins.ReadAt(b, off); err != nil {
		return "", fmt.Errorf("dedup: read the origins file: %w", err)
	}
	return string(b), nil
}

// tempFile creates a temporary file in dir and, on Unix, removes its name at once.
func tempFile(dir, pattern string) (*os.File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	if unlinkEarly {
		if err := os.Remove(f.Name()); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// closeTemp closes f and removes it if its name was kept.
func closeTemp(f *os.File) error {
	err := f.Close()
	if !unlinkEarly {
		if rerr := os.Remove(f.Name()); err == nil {
			err = rerr
		}
	}
	return err
}
