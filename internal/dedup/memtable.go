package dedup

import "encoding/binary"

// entry is one distinct hash: the first sample's index plus one (0: an empty slot) and its
// origin's place in the origins file (offset << 16 | length). 32 bytes in memory and on disk.
type entry struct{ hi, lo, idx, ref uint64 }

const entrySize = 32

func getEntry(b []byte) entry {
	return entry{hi: binary.LittleEndian.Uint64(b), lo: binary.LittleEndian.Uint64(b[8:]),
		idx: binary.LittleEndian.Uint64(b[16:]), ref: binary.LittleEndian.Uint64(b[24:])}
}

func putEntry(b []byte, e entry) {
	binary.LittleEndian.PutUint64(b, e.hi)
	binary.LittleEndian.PutUint64(b[8:], e.lo)
	binary.LittleEndian.PutUint64(b[16:], e.idx)
	binary.LittleEndian.PutUint64(b[24:], e.ref)
}

// less orders entries by hash (the order of the runs).
func (e entry) less(o entry) bool { return e.hi < o.hi || e.hi == o.hi && e.lo < o.lo }

// memtable holds the newest entries in memory: an open-addressing table whose home slot is the
// hash's top bits, probed linearly into a tail past the last home slot (no wrap). Slot order is
// then nearly hash order, so a flush sorts it in place in linear time.
type memtable struct {
	b     []byte // (slots + tail) entries
	slots uint64 // home slots, a power of two
	shift uint   // 64 - log2(slots)
	n     int64  // entries
	limit int64  // flush at this many entries
}

// memTail is the probe room past the last home slot (an eighth of the slots, at most 4096); a
// probe that reaches its end makes the table flush early (at 3/4 load it does not happen in
// practice: the longest cluster is a few hundred slots).
func memTail(slots uint64) uint64 { return min(slots/8, 4096) }

func memtableBytes(slots uint64) int64 { return int64((slots + memTail(slots)) * entrySize) }

func newMemtable(slots uint64) (*memtable, error) {
	b, err := allocBytes(int(memtableBytes(slots)))
	if err != nil {
		return nil, err
	}
	shift := uint(64)
	for s := slots; s > 1; s >>= 1 {
		shift--
	}
	return &memtable{b: b, slots: slots, shift: shift, limit: int64(slots * 3 / 4)}, nil
}

func (m *memtable) at(i uint64) []byte { return m.b[i*entrySize : i*entrySize+entrySize] }

func (m *memtable) home(hi uint64) uint64 {
	if m.shift == 64 {
		return 0
	}
	return hi >> m.shift
}

// find returns h's entry, or the empty slot where it goes (ok false; i < 0: no room left).
func (m *memtable) find(h Hash) (e entry, i int64, ok bool) {
	end := m.slots + memTail(m.slots)
	for j := m.home(h.Hi); j < end; j++ {
		e := getEntry(m.at(j))
		if e.idx == 0 {
			return e, int64(j), false
		}
		if e.hi == h.Hi && e.lo == h.Lo {
			return e, int64(j), true
		}
	}
	return entry{}, -1, false
}

func (m *memtable) full() bool { return m.n >= m.limit }

// sorted moves the entries to the front in hash order and returns them (aliases of m.b, valid
// until reset).
func (m *memtable) sorted() []byte {
	end := m.slots + memTail(m.slots)
	w := uint64(0)
	for j := range end {
		if binary.LittleEndian.Uint64(m.at(j)[16:]) == 0 {
			continue
		}
		if w != j {
			copy(m.at(w), m.at(j))
		}
		w++
	}
	// Insertion sort: an entry is out of order only within its cluster.
	for i := uint64(1); i < w; i++ {
		e := getEntry(m.at(i))
		j := i
		for j > 0 && e.less(getEntry(m.at(j-1))) {
			j--
		}
		if j != i {
			copy(m.b[(j+1)*entrySize:(i+1)*entrySize], m.b[j*entrySize:i*entrySize])
			putEntry(m.at(j), e)
		}
	}
	return m.b[:w*entrySize]
}

func (m *memtable) reset() {
	clear(m.b)
	m.n = 0
}

func (m *memtable) free() {
	freeBytes(m.b)
	m.b = nil
}
