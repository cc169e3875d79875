//go:build !unix

package dedup

import (
	"encoding/binary"
	"fmt"
	"os"
)

// unlinkEarly: elsewhere a file in use keeps its name until closed.
const unlinkEarly = false

// area is the table's slots in a temporary file, read and written a slot at a time (no
// mapping: nothing of it is resident but the operating system's cache).
type area struct {
	f    *os.File
	n    int64
	buf  [slotSize]byte
	werr error
}

func newArea(dir string, slots uint64) (*area, error) {
	f, err := tempFile(dir, "dedup-table-*")
	if err != nil {
		return nil, err
	}
	size := int64(slots * slotSize)
	if err := f.Truncate(size); err != nil {
		closeTemp(f)
		return nil, err
	}
	return &area{f: f, n: size}, nil
}

func (a *area) size() int64 { return a.n }

func (a *area) get(i uint64) slot {
	b := a.buf[:]
	if _, err := a.f.ReadAt(b, int64(i*slotSize)); err != nil {
		// A read of the table's own file failing is an I/O error of the machine: kept for
		// err, and the slot reads as empty so that a probe ends.
		if a.werr == nil {
			a.werr = fmt.Errorf("dedup: read the table: %w", err)
		}
		return slot{}
	}
	return slot{hi: binary.LittleEndian.Uint64(b), lo: binary.LittleEndian.Uint64(b[8:]),
		idx: binary.LittleEndian.Uint64(b[16:]), ref: binary.LittleEndian.Uint64(b[24:])}
}

func (a *area) put(i uint64, s slot) {
	b := a.buf[:]
	binary.LittleEndian.PutUint64(b, s.hi)
	binary.LittleEndian.PutUint64(b[8:], s.lo)
	binary.LittleEndian.PutUint64(b[16:], s.idx)
	binary.LittleEndian.PutUint64(b[24:], s.ref)
	if _, err := a.f.WriteAt(b, int64(i*slotSize)); err != nil && a.werr == nil {
		a.werr = fmt.Errorf("dedup: write the table: %w", err)
	}
}

func (a *area) drop() {}

// err is the first I/O error of the table's file.
func (a *area) err() error { return a.werr }

func (a *area) close() error { return closeTemp(a.f) }
