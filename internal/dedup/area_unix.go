//go:build unix

package dedup

import (
	"encoding/binary"
	"os"

	"golang.org/x/sys/unix"
)

// unlinkEarly: an open file outlives its name, so the temporary files have none.
const unlinkEarly = true

// area is the table's slots: a temporary file mapped shared, so that its pages belong to
// the page cache (written back to the file under memory pressure), not to the heap.
type area struct {
	f   *os.File
	mem []byte
}

func newArea(dir string, slots uint64) (*area, error) {
	f, err := tempFile(dir, "dedup-table-*")
	if err != nil {
		return nil, err
	}
	size := int64(slots * slotSize)
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, err
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, err
	}
	// Random access: a fault maps its own page only (no fault-around, no read-ahead), so the
	// pages mapped are the pages touched, as Table accounts them.
	if err := unix.Madvise(mem, unix.MADV_RANDOM); err != nil {
		unix.Munmap(mem)
		f.Close()
		return nil, err
	}
	return &area{f: f, mem: mem}, nil
}

func (a *area) size() int64 { return int64(len(a.mem)) }

func (a *area) get(i uint64) slot {
	b := a.mem[i*slotSize : i*slotSize+slotSize]
	return slot{hi: binary.LittleEndian.Uint64(b), lo: binary.LittleEndian.Uint64(b[8:]),
		idx: binary.LittleEndian.Uint64(b[16:]), ref: binary.LittleEndian.Uint64(b[24:])}
}

func (a *area) put(i uint64, s slot) {
	b := a.mem[i*slotSize : i*slotSize+slotSize]
	binary.LittleEndian.PutUint64(b, s.hi)
	binary.LittleEndian.PutUint64(b[8:], s.lo)
	binary.LittleEndian.PutUint64(b[16:], s.idx)
	binary.LittleEndian.PutUint64(b[24:], s.ref)
}

// drop unmaps every page from the process; a shared mapping's data stays in the page cache
// (dirty pages are written back to the file) and is mapped again when touched.
// err is the first I/O error of the table's memory: none, a mapping has no read errors that
// return.
func (a *area) err() error { return nil }

func (a *area) drop() { _ = unix.Madvise(a.mem, unix.MADV_DONTNEED) }

func (a *area) close() error {
	err := unix.Munmap(a.mem)
	a.mem = nil
	if cerr := closeTemp(a.f); err == nil {
		err = cerr
	}
	return err
}
