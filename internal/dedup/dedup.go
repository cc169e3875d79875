// Package dedup finds byte-identical payloads among the samples of a run with memory flat in
// the sample count: a 128-bit content hash per sample (xxh3-128) kept in a Table, a fixed-size
// Bloom filter in front of a small log-structured store (an in-memory table written as sorted
// run files, merged as they multiply), its memory capped whatever the number of samples.
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
	"hash/crc32"
	"os"
	"strconv"
	"strings"

	"github.com/zeebo/xxh3"
)

// Errors of the table.
var (
	// ErrClosed is returned by a table used after Close.
	ErrClosed = errors.New("dedup: table closed")
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
	// DefaultMemory caps the table's memory: 64 MiB.
	DefaultMemory = 64 << 20
	// MinMemory is the smallest cap a Config may set.
	MinMemory = 1 << 20
	// MaxOrigin is the longest origin kept per sample (longer ones are cut).
	MaxOrigin = 1 << 12
	// fanIn is how many runs of one size are merged into one: the runs stay at most
	// (fanIn-1) per size, so a lookup reads a few of them, and an entry is rewritten
	// log_fanIn(entries/memtable) times.
	fanIn = 4
	// minFilter is the smallest filter (bytes); a filter has at least 16 bits per expected
	// sample when the budget allows.
	minFilter = 64 << 10
	// minSlots is the smallest memtable.
	minSlots = 1 << 12
)

// Config configures a Table.
type Config struct {
	// Dir holds the table's temporary files ("" means os.TempDir()). They are removed from
	// the directory as soon as they are created (on Unix), so nothing stays behind, even
	// after kill -9.
	Dir string
	// Expected is the number of samples the table sizes itself for (0 or less: unknown); it
	// only keeps the table below its cap for small runs: any count fits.
	Expected int64
	// Memory caps the table's memory in bytes (filter, memtable, run indexes and buffers);
	// 0 means DefaultMemory. The hashes beyond it are on disk.
	Memory int64
	// Durable, when set, makes the table durable (Checkpoint, Reopen): its files are named
	// Durable + "-origins", "-prefixes" and "-run-N" (a path and a name prefix, such as
	// "out/.data.mldf.partial-dedup"), locked while open and kept until Close; Dir is not
	// used.
	Durable string
}

// Stats are a table's counters.
type Stats struct {
	Entries    int64 // distinct hashes
	Duplicates int64 // Check calls that found their hash
	Maybe      int64 // Check calls the filter could not answer (a lookup in the memtable and runs)
	RunReads   int64 // reads of run files by lookups
	Flushes    int64 // memtables written as runs
	Merges     int64 // merges of runs
	Runs       int   // run files now
	DiskBytes  int64 // bytes of run files now
	// Memory is the table's memory now: the filter, the memtable, the runs' indexes and the
	// buffers (bytes); PeakMemory the most it was; MemoryCap is Config.Memory. PeakMemory
	// never exceeds MemoryCap, whatever Entries.
	Memory, PeakMemory, MemoryCap int64
}

// Table remembers the hash of every distinct sample it was shown and the first sample that
// had it, in memory bounded by Config.Memory whatever the number of samples:
//
//   - a Bloom filter of a fixed size answers "certainly new" for nearly every new hash;
//   - the newest entries are in a memtable (an in-memory hash table of a fixed size), written
//     as a sorted run file when it fills;
//   - runs of the same size are merged, fanIn at a time, so there are a few per size;
//   - a hash the filter may have seen is looked for in the memtable, then in each run (its
//     bucket, found with the run's in-memory fan-out, read with one pread).
//
// The answers are exact (a hash is a duplicate only when its 128 bits are in the table); the
// filter and the layout only decide how much reading a new hash costs. Used by one
// goroutine at a time.
type Table struct {
	dir       string
	cap       int64
	f         filter
	m         *memtable
	runs      []*run // oldest (largest) first
	fanBudget int64  // bytes for the runs' fan-outs
	ioBuf     int    // bytes of a run writer's or reader's buffer
	lookBuf   []byte
	st        Stats
	fixed     int64 // filter + memtable + lookup and origins buffers

	origins        *os.File
	ow             *bufio.Writer
	olen, oflushed int64
	closed         bool
	originBuf      []byte
	// The interned origin prefixes (at most prefixBudget bytes).
	prefixes                  []string
	prefixIDs                 map[string]uint64
	prefixBytes, prefixBudget int64
	lastPrefix                string // the last prefix interned or found, and its id
	lastID                    uint64
	lastOK                    bool
	sink                      uint64 // Prefetch's reads, kept so that they are made

	// A durable table's state (Config.Durable): the files' name prefix, the last run
	// number, the runs merged away since the last Checkpoint (their files kept: the last
	// checkpoint may name them), the prefixes file and how much of it is written.
	durable     string
	runSeq      int64
	retired     []string
	prefixFile  *os.File
	prefixLen   int64
	prefixCRC   uint32
	prefixSaved int
	originsCRC  uint32
}

const (
	lookBufSize = 64 << 10
	originsBuf  = 64 << 10
)

// New creates an empty table.
func New(cfg Config) (*Table, error) { return newTable(cfg, nil) }

// newTable creates a table: empty, or for a durable one with st, the table st recorded.
func newTable(cfg Config, st *State) (*Table, error) {
	if cfg.Memory == 0 {
		cfg.Memory = DefaultMemory
	}
	if cfg.Memory < MinMemory {
		return nil, fmt.Errorf("dedup: memory cap %d bytes: at least %d", cfg.Memory, MinMemory)
	}
	if cfg.Dir == "" {
		cfg.Dir = os.TempDir()
	}
	// The cap: half for the filter, a quarter for the memtable, an eighth for the runs'
	// fan-outs, an eighth for the buffers (a merge reads fanIn runs and writes one).
	filterBytes := cfg.Memory / 2 / blockSize * blockSize
	slots := uint64(minSlots)
	for memtableBytes(slots*2) <= cfg.Memory/4 {
		slots *= 2
	}
	if cfg.Expected > 0 {
		filterBytes = min(filterBytes, max(minFilter, (2*cfg.Expected+blockSize-1)/blockSize*blockSize))
		for slots > minSlots && int64(slots/2*3/4) >= cfg.Expected {
			slots /= 2
		}
	}
	t := &Table{dir: cfg.Dir, cap: cfg.Memory, fanBudget: cfg.Memory / 8,
		ioBuf: int(min(1<<20, max(16<<10, cfg.Memory/8-lookBufSize-originsBuf)/(fanIn+1)))}
	t.st.MemoryCap = cfg.Memory
	t.prefixBudget, t.prefixIDs = max(16<<10, cfg.Memory/64), map[string]uint64{}
	if cfg.Expected > 0 {
		t.prefixBudget = max(16<<10, min(t.prefixBudget, 16*cfg.Expected))
	}
	fb, err := allocBytes(int(filterBytes))
	if err != nil {
		return nil, fmt.Errorf("dedup: allocate the filter: %w", err)
	}
	t.f = filter{b: fb, blocks: uint64(filterBytes / blockSize)}
	if t.m, err = newMemtable(slots); err != nil {
		freeBytes(fb)
		return nil, fmt.Errorf("dedup: allocate the memtable: %w", err)
	}
	t.lookBuf = make([]byte, lookBufSize)
	// The prefixes' map costs about as much again as their bytes.
	t.fixed = filterBytes + memtableBytes(slots) + lookBufSize + originsBuf + 2*t.prefixBudget
	if cfg.Durable != "" {
		t.durable = cfg.Durable
		if err := t.openDurable(st); err != nil {
			t.free()
			return nil, err
		}
		t.account(0)
		return t, nil
	}
	f, err := tempFile(cfg.Dir, "dedup-origins-*")
	if err != nil {
		t.free()
		return nil, fmt.Errorf("dedup: create the origins file in %s: %w", cfg.Dir, err)
	}
	t.origins, t.ow = f, bufio.NewWriterSize(f, originsBuf)
	t.account(0)
	return t, nil
}

// Len returns the number of distinct hashes in the table.
func (t *Table) Len() int64 { return t.st.Entries }

// Duplicates returns how many Check calls found their hash already there.
func (t *Table) Duplicates() int64 { return t.st.Duplicates }

// MemoryCap returns the cap on the table's memory (Config.Memory).
func (t *Table) MemoryCap() int64 { return t.cap }

// Stats returns the table's counters.
func (t *Table) Stats() Stats {
	s := t.st
	s.Runs = len(t.runs)
	s.DiskBytes = 0
	for _, r := range t.runs {
		s.DiskBytes += r.n * entrySize
	}
	return s
}

// account sets the memory now (the fixed parts, the fan-outs and extra transient bytes).
func (t *Table) account(extra int64) {
	m := t.fixed + extra
	for _, r := range t.runs {
		m += int64(len(r.fan)) * 8
	}
	t.st.Memory = m
	t.st.PeakMemory = max(t.st.PeakMemory, m)
}

// Check looks h up. When a sample had h before, it returns that first sample and true; else
// it records h for the sample (index, origin) and returns false.
func (t *Table) Check(h Hash, index int64, origin string) (First, bool, error) {
	if t.closed {
		return First{}, false, ErrClosed
	}
	if index < 0 {
		return First{}, false, fmt.Errorf("dedup: negative sample index %d", index)
	}
	if t.f.add(h) {
		t.st.Maybe++
		e, found, err := t.lookup(h)
		if err != nil {
			return First{}, false, err
		}
		if found {
			t.st.Duplicates++
			o, err := t.origin(e.ref)
			if err != nil {
				return First{}, false, err
			}
			return First{Index: int64(e.idx - 1), Origin: o}, true, nil
		}
	}
	_, i, _ := t.m.find(h)
	if i < 0 || t.m.full() {
		if err := t.flush(); err != nil {
			return First{}, false, err
		}
		_, i, _ = t.m.find(h)
	}
	ref, err := t.addOrigin(origin)
	if err != nil {
		return First{}, false, err
	}
	putEntry(t.m.at(uint64(i)), entry{hi: h.Hi, lo: h.Lo, idx: uint64(index) + 1, ref: ref})
	t.m.n++
	t.st.Entries++
	return First{}, false, nil
}

// Prefetch reads the filter's block and the memtable's home slot of each hash, so that the
// Check calls that follow (in any order) find them in the cache: the reads of a batch overlap
// instead of waiting one cache miss after another. Optional.
func (t *Table) Prefetch(hs []Hash) {
	if t.closed {
		return
	}
	var x uint64
	for _, h := range hs {
		x += uint64(t.f.block(h)[0]) + uint64(t.m.at(t.m.home(h.Hi))[0])
	}
	t.sink += x
}

// lookup looks h up in the memtable, then in the runs, largest first (where a hash seen
// earlier most likely is).
func (t *Table) lookup(h Hash) (entry, bool, error) {
	if e, _, ok := t.m.find(h); ok {
		return e, true, nil
	}
	for _, r := range t.runs {
		e, ok, reads, err := r.lookup(h, t.lookBuf)
		t.st.RunReads += int64(reads)
		if err != nil || ok {
			return e, ok, err
		}
	}
	return entry{}, false, nil
}

// flush writes the memtable as a run and merges the runs of the same size.
func (t *Table) flush() error {
	n := t.m.n
	w, err := t.newRunWriter(n, fanBits(n, t.fanBudget-t.fanUsed()), t.ioBuf)
	if err != nil {
		return err
	}
	t.account(int64(len(w.r.fan))*8 + int64(t.ioBuf))
	b := t.m.sorted()
	for i := 0; i < len(b); i += entrySize {
		w.add(b[i : i+entrySize])
	}
	r, err := w.finish()
	if err != nil {
		return err
	}
	t.m.reset()
	t.runs = append(t.runs, r)
	t.st.Flushes++
	for len(t.runs) >= fanIn {
		tail := t.runs[len(t.runs)-fanIn:]
		if level(tail[0].n, t.m.limit) != level(tail[fanIn-1].n, t.m.limit) {
			break
		}
		if err := t.merge(tail); err != nil {
			return err
		}
	}
	t.account(0)
	return nil
}

// level is the size class of a run of n entries, memtables of m entries: 0 up to m, l up to
// m*fanIn^l.
func level(n, m int64) int {
	l := 0
	for s := max(m, 1); s < n; s *= fanIn {
		l++
	}
	return l
}

func (t *Table) fanUsed() int64 {
	var b int64
	for _, r := range t.runs {
		b += int64(len(r.fan)) * 8
	}
	return b
}

// merge replaces the last runs (tail) by their merge.
func (t *Table) merge(tail []*run) error {
	var n, tailFan int64
	for _, r := range tail {
		n += r.n
		tailFan += int64(len(r.fan)) * 8
	}
	// The inputs' fan-outs are not needed to read them in order: their budget is the
	// output's.
	bits := fanBits(n, t.fanBudget-t.fanUsed()+tailFan)
	t.account(fanBytes(bits) - tailFan + int64(len(tail)+1)*int64(t.ioBuf))
	for _, r := range tail {
		r.fan = nil
	}
	m, err := t.mergeRuns(tail, bits, t.ioBuf)
	if err != nil {
		return err
	}
	for _, r := range tail {
		if cerr := r.close(); cerr != nil && err == nil {
			err = fmt.Errorf("dedup: close a run: %w", cerr)
		}
		if r.name != "" {
			t.retired = append(t.retired, r.name)
		}
	}
	t.runs = append(t.runs[:len(t.runs)-len(tail)], m)
	t.st.Merges++
	return err
}

// Close removes the table's files and releases its memory.
func (t *Table) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	var err error
	for _, r := range t.runs {
		if cerr := r.remove(); err == nil {
			err = cerr
		}
	}
	t.runs = nil
	if t.durable != "" {
		t.origins.Close()
		t.prefixFile.Close()
		for _, name := range append(t.retired, t.durable+originsSuffix, t.durable+prefixesSuffix) {
			if rerr := os.Remove(name); err == nil && !errors.Is(rerr, os.ErrNotExist) {
				err = rerr
			}
		}
	} else if cerr := closeTemp(t.origins); err == nil {
		err = cerr
	}
	t.free()
	return err
}

func (t *Table) free() {
	freeBytes(t.f.b)
	t.f.b = nil
	t.m.free()
}

// An entry's origin reference is either a place in the origins file (offset << 16 | length)
// or, with refInterned set, an interned prefix and a number: origins such as "file.jsonl:1234"
// (a prefix shared by many samples, then a line or row number) cost no bytes on disk and no
// read when a duplicate names them.
const (
	refInterned = 1 << 63
	prefixBits  = 13 // at most 8192 prefixes
	numBits     = 63 - prefixBits
	maxDigits   = 15 // a number below 10^15 < 2^50
)

// splitOrigin splits o into a prefix and its trailing decimal number plus one (0: none).
func splitOrigin(o string) (string, uint64) {
	i := len(o)
	for i > 0 && o[i-1] >= '0' && o[i-1] <= '9' {
		i--
	}
	d := o[i:]
	if len(d) == 0 || len(d) > maxDigits || len(d) > 1 && d[0] == '0' {
		return o, 0
	}
	n, err := strconv.ParseUint(d, 10, 64)
	if err != nil {
		return o, 0
	}
	return o[:i], n + 1
}

func (t *Table) addOrigin(o string) (uint64, error) {
	if len(o) > MaxOrigin {
		o = o[:MaxOrigin]
	}
	if o == "" {
		return 0, nil
	}
	prefix, num := splitOrigin(o)
	if t.lastOK && prefix == t.lastPrefix { // most samples share their input's prefix
		return refInterned | t.lastID<<numBits | num, nil
	}
	id, ok := t.prefixIDs[prefix]
	if !ok && len(t.prefixes) < 1<<prefixBits && t.prefixBytes+int64(len(prefix)) <= t.prefixBudget {
		id, ok = uint64(len(t.prefixes)), true
		p := strings.Clone(prefix)
		t.prefixes = append(t.prefixes, p)
		t.prefixIDs[p] = id
		t.prefixBytes += int64(len(p))
	}
	if ok {
		t.lastPrefix, t.lastID, t.lastOK = t.prefixes[id], id, true
		return refInterned | id<<numBits | num, nil
	}
	ref := uint64(t.olen)<<16 | uint64(len(o))
	if t.durable != "" {
		t.originsCRC = crc32.Update(t.originsCRC, castagnoli, []byte(o))
	}
	if _, err := t.ow.WriteString(o); err != nil {
		return 0, fmt.Errorf("dedup: write the origins file: %w", err)
	}
	t.olen += int64(len(o))
	return ref, nil
}

func (t *Table) origin(ref uint64) (string, error) {
	if ref&refInterned != 0 {
		p := t.prefixes[(ref&^refInterned)>>numBits]
		if num := ref & (1<<numBits - 1); num != 0 {
			return p + strconv.FormatUint(num-1, 10), nil
		}
		return p, nil
	}
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
