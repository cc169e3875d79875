package textfield

import (
	"bytes"
	"hash/maphash"
	"math/bits"
)

// idTable maps byte strings to short lists of ids with no pointers the garbage collector
// would have to scan: an open-addressed table of slots holding a hash and offsets into two
// slabs, one of key bytes and one of ids. A Go map of strings to slices of the same content
// costs every garbage collection a visit to each of its keys and values (hundreds of
// thousands here) and each lookup a cache miss more (the key lives in its own allocation).
// It is not safe for concurrent use: callers lock, or only read once it is built. The
// hash h that get and put take must be t.hash(key) (callers compute it once for several
// uses); seed must be set before the first put.
type idTable struct {
	seed  maphash.Seed // the keys' hash: maphash.Bytes(seed, key)
	slots []idSlot     // a power of two in length, at most half full; tag 0 marks an empty slot
	keys  []byte
	ids   []uint32
	n     int // slots in use
}

// idSlot is 32 bytes: the key's tag (the low half of its hash, never 0), the key itself
// when it is at most inlineKey bytes long (else where it lies in the key slab), where its
// ids lie, and their counts. A lookup of a short key reads one slot and the ids, no more.
type idSlot struct {
	tag        uint32
	koff, ioff uint32
	klen       uint16
	n          uint16
	key        [inlineKey]byte
}

// inlineKey is the longest key held in its slot.
const inlineKey = 16

// maxIDKey and maxIDs bound a key and its ids.
const (
	maxIDKey = 1<<16 - 1
	maxIDs   = 1<<16 - 1
)

// tagOf is the tag of hash h: its low half, never zero (zero marks an empty slot).
func tagOf(h uint64) uint32 { return uint32(h) | 1 }

// home is the first slot to probe for hash h: from the hash's high half, independent of the
// tag (and of the low bits callers shard by).
func home(h uint64, mask uint32) uint32 { return uint32(h>>32) & mask }

// get returns the ids of key (hash h) as a slice of the table's slab, valid until the next
// put.
func (t *idTable) get(h uint64, key []byte) ([]uint32, bool) {
	if len(t.slots) == 0 {
		return nil, false
	}
	tag, mask := tagOf(h), uint32(len(t.slots)-1)
	for i := home(h, mask); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.tag == 0 {
			return nil, false
		}
		if s.tag == tag && int(s.klen) == len(key) && bytes.Equal(t.key(s), key) {
			return t.ids[s.ioff : s.ioff+uint32(s.n) : s.ioff+uint32(s.n)], true
		}
	}
}

// put stores key's ids (key hashing to h) and reports whether it did: not when key is
// there already or too long, or the slabs would pass 4 GiB.
func (t *idTable) put(h uint64, key []byte, ids []uint32) bool {
	if len(key) > maxIDKey || len(ids) > maxIDs || uint64(len(t.keys)+len(key)) > 1<<32-1 || uint64(len(t.ids)+len(ids)) > 1<<32-1 {
		return false
	}
	if _, ok := t.get(h, key); ok {
		return false
	}
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	s := idSlot{tag: tagOf(h), ioff: uint32(len(t.ids)), klen: uint16(len(key)), n: uint16(len(ids))}
	if len(key) <= inlineKey {
		copy(s.key[:], key)
	} else {
		s.koff = uint32(len(t.keys))
		t.keys = append(t.keys, key...)
	}
	t.insert(h, s)
	t.ids = append(t.ids, ids...)
	t.n++
	return true
}

func (t *idTable) insert(h uint64, s idSlot) {
	mask := uint32(len(t.slots) - 1)
	i := home(h, mask)
	for t.slots[i].tag != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = s
}

// grow doubles the slots (1024 at first) and re-inserts the entries, hashing their keys
// again with hash.
func (t *idTable) grow() {
	old := t.slots
	t.slots = make([]idSlot, max(1024, 2*len(old)))
	for _, s := range old {
		if s.tag != 0 {
			t.insert(t.hash(t.key(&s)), s)
		}
	}
}

// reserve sizes an empty table for n keys, so that it does not grow while they are put.
func (t *idTable) reserve(n int) {
	if t.n == 0 {
		t.slots = make([]idSlot, max(1024, 1<<bits.Len(uint(2*n))))
	}
}

// hash returns the hash of key that get and put take.
func (t *idTable) hash(key []byte) uint64 { return maphash.Bytes(t.seed, key) }

// key returns the key of slot s.
func (t *idTable) key(s *idSlot) []byte {
	if s.klen <= inlineKey {
		return s.key[:s.klen]
	}
	return t.keys[s.koff : s.koff+uint32(s.klen)]
}

// len returns the number of keys.
func (t *idTable) len() int { return t.n }
