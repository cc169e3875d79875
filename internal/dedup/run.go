package dedup

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/mldf/convert/internal/atomicfile"
)

// run is a sorted file of entries (a flushed memtable, or a merge of runs) with its fan-out:
// fan[b] is the index of the first entry whose hash's top bits are at least b, so that an
// entry is looked for among the fan[b]..fan[b+1] entries of its bucket (64 on average, one
// read) and the index costs 1/8 byte per entry, or less once the index budget is spent.
type run struct {
	f     *os.File
	name  string // the file's name in a durable table ("": an unnamed temporary file)
	crc   uint32 // a durable run's CRC-32C (Castagnoli) of its bytes
	n     int64
	fan   []int64 // 1<<bits + 1 bucket starts
	shift uint    // 64 - bits
}

func (r *run) bucket(hi uint64) uint64 {
	if r.shift == 64 {
		return 0
	}
	return hi >> r.shift
}

// fanBytes is the memory of a fan-out of 1<<bits buckets.
func fanBytes(bits uint) int64 { return (int64(1)<<bits + 1) * 8 }

// fanBits is the fan-out for n entries within budget bytes: about 64 entries a bucket, fewer
// buckets when the budget is short (at least one).
func fanBits(n, budget int64) uint {
	bits := uint(0)
	for bits < 40 && int64(64)<<(bits+1) <= n && fanBytes(bits+1) <= budget {
		bits++
	}
	return bits
}

// runWriter writes the entries of a new run in hash order and builds its fan-out.
type runWriter struct {
	f    *os.File
	w    *bufio.Writer
	r    *run
	next uint64 // the next bucket whose start is not set
	err  error
	// durable: the run is a named file of a durable table, its CRC kept.
	durable bool
}

func (t *Table) newRunWriter(n int64, bits uint, buf int) (*runWriter, error) {
	var f *os.File
	var err error
	name := ""
	if t.durable != "" {
		t.runSeq++
		name = runName(t.durable, t.runSeq)
		f, err = atomicfile.OpenLocked(name, 0o600, true)
	} else {
		f, err = tempFile(t.dir, "dedup-run-*")
	}
	if err != nil {
		return nil, fmt.Errorf("dedup: create a run in %s: %w", t.dir, err)
	}
	return &runWriter{f: f, w: bufio.NewWriterSize(f, buf), durable: name != "",
		r: &run{f: f, name: name, fan: make([]int64, int64(1)<<bits+1), shift: 64 - bits}}, nil
}

func (w *runWriter) add(b []byte) {
	hi := binary.LittleEndian.Uint64(b)
	for b := w.r.bucket(hi); w.next <= b; w.next++ {
		w.r.fan[w.next] = w.r.n
	}
	if w.durable {
		w.r.crc = crc32.Update(w.r.crc, castagnoli, b[:entrySize])
	}
	if _, err := w.w.Write(b[:entrySize]); err != nil && w.err == nil {
		w.err = err
	}
	w.r.n++
}

// finish flushes the run and returns it; on an error the file is closed.
func (w *runWriter) finish() (*run, error) {
	for ; w.next < uint64(len(w.r.fan)); w.next++ {
		w.r.fan[w.next] = w.r.n
	}
	err := w.err
	if err == nil {
		err = w.w.Flush()
	}
	if err != nil {
		w.r.remove()
		return nil, fmt.Errorf("dedup: write a run: %w", err)
	}
	return w.r, nil
}

// lookup looks h up in r, reading through buf (a multiple of entrySize, at least 64 entries):
// a bucket that fits buf is read at once, a larger one is narrowed by binary search first.
func (r *run) lookup(h Hash, buf []byte) (entry, bool, int, error) {
	b := r.bucket(h.Hi)
	lo, hi := r.fan[b], r.fan[b+1]
	reads := 0
	want := entry{hi: h.Hi, lo: h.Lo}
	maxN := int64(len(buf) / entrySize)
	for hi-lo > maxN {
		mid := lo + (hi-lo)/2
		reads++
		if _, err := r.f.ReadAt(buf[:entrySize], mid*entrySize); err != nil {
			return entry{}, false, reads, fmt.Errorf("dedup: read a run: %w", err)
		}
		e := getEntry(buf)
		if e.hi == h.Hi && e.lo == h.Lo {
			return e, true, reads, nil
		}
		if e.less(want) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if hi == lo {
		return entry{}, false, reads, nil
	}
	p := buf[:(hi-lo)*entrySize]
	reads++
	if _, err := r.f.ReadAt(p, lo*entrySize); err != nil {
		return entry{}, false, reads, fmt.Errorf("dedup: read a run: %w", err)
	}
	i, j := 0, len(p)/entrySize
	for i < j {
		m := (i + j) / 2
		e := getEntry(p[m*entrySize:])
		if e.less(want) {
			i = m + 1
		} else {
			j = m
		}
	}
	if i < len(p)/entrySize {
		if e := getEntry(p[i*entrySize:]); e.hi == h.Hi && e.lo == h.Lo {
			return e, true, reads, nil
		}
	}
	return entry{}, false, reads, nil
}

// close closes r and removes its file: at once for a temporary one; a durable run's name
// is left for the caller (a checkpoint may still name it).
func (r *run) close() error {
	if r.name != "" {
		return r.f.Close()
	}
	return closeTemp(r.f)
}

// remove closes r and removes its file, named or not.
func (r *run) remove() error {
	err := r.close()
	if r.name != "" {
		if rerr := os.Remove(r.name); err == nil && !errors.Is(rerr, os.ErrNotExist) {
			err = rerr
		}
	}
	return err
}

// mergeRuns writes the entries of runs (sorted, with no hash in two of them) into one run
// whose fan-out has bits, reading each input through a buffer of buf bytes.
func (t *Table) mergeRuns(runs []*run, bits uint, buf int) (*run, error) {
	var n int64
	heads := make([]*bufio.Reader, len(runs))
	cur := make([][entrySize]byte, len(runs))
	live := make([]bool, len(runs))
	for i, r := range runs {
		n += r.n
		heads[i] = bufio.NewReaderSize(io.NewSectionReader(r.f, 0, r.n*entrySize), buf)
	}
	next := func(i int) error {
		_, err := io.ReadFull(heads[i], cur[i][:])
		if errors.Is(err, io.EOF) {
			live[i] = false
			return nil
		}
		live[i] = err == nil
		return err
	}
	for i := range runs {
		if err := next(i); err != nil {
			return nil, fmt.Errorf("dedup: read a run: %w", err)
		}
	}
	w, err := t.newRunWriter(n, bits, buf)
	if err != nil {
		return nil, err
	}
	for {
		min := -1
		var me entry
		for i := range runs {
			if !live[i] {
				continue
			}
			if e := getEntry(cur[i][:]); min < 0 || e.less(me) {
				min, me = i, e
			}
		}
		if min < 0 {
			break
		}
		w.add(cur[min][:])
		if err := next(min); err != nil {
			w.r.remove()
			return nil, fmt.Errorf("dedup: read a run: %w", err)
		}
	}
	return w.finish()
}
