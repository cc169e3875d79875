package textfield

import "bytes"

// idTable maps byte strings to short lists of ids with no pointers the garbage collector
// would have to scan: an open-addressed table of slots holding a hash and offsets into two
// slabs, one of key bytes and one of ids. A Go map of strings to slices of the same content
// costs every garbage collection a visit to each of its keys and values (hundreds of
// thousands here) and each lookup a cache miss more (the key lives in its own allocation).
// It is not safe for concurrent use: callers lock, or only read once it is built.
type idTable struct {
	slots []idSlot // a power of two in length; h == 0 marks an empty slot
	keys  []byte
	ids   []uint32
	n     int // slots in use
}

type idSlot struct {
	h          uint64
	koff, ioff uint32
	klen       uint16
	n          uint16
}

// maxIDKey and maxIDs bound a key and its ids.
const (
	maxIDKey = 1<<16 - 1
	maxIDs   = 1<<16 - 1
)

// slotHash keeps hash values non-zero (zero marks an empty slot).
func slotHash(h uint64) uint64 { return h | 1 }

// get returns the ids of key (hash h) as a slice of the table's slab, valid until the next
// put.
func (t *idTable) get(h uint64, key []byte) ([]uint32, bool) {
	if len(t.slots) == 0 {
		return nil, false
	}
	h = slotHash(h)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.h == 0 {
			return nil, false
		}
		if s.h == h && int(s.klen) == len(key) && bytes.Equal(t.keys[s.koff:s.koff+uint32(s.klen)], key) {
			return t.ids[s.ioff : s.ioff+uint32(s.n) : s.ioff+uint32(s.n)], true
		}
	}
}

// put stores key's ids (key hashing to h) and reports whether it did: not when key is
// there already or too long, or the slabs would pass 4 GiB.
func (t *idTable) put(h uint64, key []byte, ids []uint32) bool {
	if len(key) > maxIDKey || len(ids) > maxIDs || len(t.keys)+len(key) > 1<<32-1 || len(t.ids)+len(ids) > 1<<32-1 {
		return false
	}
	if _, ok := t.get(h, key); ok {
		return false
	}
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	t.insert(idSlot{h: slotHash(h), koff: uint32(len(t.keys)), ioff: uint32(len(t.ids)), klen: uint16(len(key)), n: uint16(len(ids))})
	t.keys = append(t.keys, key...)
	t.ids = append(t.ids, ids...)
	t.n++
	return true
}

func (t *idTable) insert(s idSlot) {
	mask := uint64(len(t.slots) - 1)
	i := s.h & mask
	for t.slots[i].h != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = s
}

// grow doubles the slots (1024 at first) and re-inserts the entries by their stored hash.
func (t *idTable) grow() {
	old := t.slots
	t.slots = make([]idSlot, max(1024, 2*len(old)))
	for _, s := range old {
		if s.h != 0 {
			t.insert(s)
		}
	}
}

// len returns the number of keys.
func (t *idTable) len() int { return t.n }
