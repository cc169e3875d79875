// Package cellsort turns matrix entries that arrive in any order (a CSC matrix read column by
// column, an unsorted Matrix Market file) into rows read back by ranges, with memory bounded
// by a few buffers: an external bucket sort in temporary files. Entries are appended to the
// file of their range of rows; reading a range loads its bucket and counting-sorts it.
package cellsort

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync"
)

// entrySize is the bytes of one entry in a bucket file: row within the bucket (uint32), column
// (uint32), value (float32 bits).
const entrySize = 12

// bufSize is each bucket's write buffer.
const bufSize = 64 << 10

// ErrRange is returned for an entry outside the matrix.
var ErrRange = errors.New("cellsort: entry out of range")

// Sorter collects entries of a rows × cols matrix. Add is for one goroutine; after Finish,
// Rows may be called from many.
type Sorter struct {
	rows, cols int64
	span       int64 // rows per bucket
	dir        string
	files      []*os.File
	bufs       []*bufio.Writer
	counts     []int64 // entries per bucket
	mu         sync.Mutex
	finished   bool
	entries    int64
}

// New creates a sorter whose bucket files live in a new temporary directory under dir ("":
// the system's). span is the number of rows per bucket: Rows reads every bucket its range
// touches, so span should match the reader's ranges.
func New(dir string, rows, cols, span int64) (*Sorter, error) {
	if rows <= 0 || cols <= 0 || cols > math.MaxUint32 || span <= 0 {
		return nil, fmt.Errorf("cellsort: bad shape %d x %d (span %d)", rows, cols, span)
	}
	d, err := os.MkdirTemp(dir, "cellsort-*")
	if err != nil {
		return nil, fmt.Errorf("cellsort: %w", err)
	}
	n := (rows + span - 1) / span
	return &Sorter{rows: rows, cols: cols, span: span, dir: d, files: make([]*os.File, n), bufs: make([]*bufio.Writer, n), counts: make([]int64, n)}, nil
}

// Add records the entry (row, col) = v.
func (s *Sorter) Add(row, col int64, v float32) error {
	if row < 0 || row >= s.rows || col < 0 || col >= s.cols {
		return fmt.Errorf("%w: (%d, %d) in a %d x %d matrix", ErrRange, row, col, s.rows, s.cols)
	}
	b := row / s.span
	w := s.bufs[b]
	if w == nil {
		f, err := os.OpenFile(fmt.Sprintf("%s/%d", s.dir, b), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("cellsort: %w", err)
		}
		s.files[b] = f
		w = bufio.NewWriterSize(f, bufSize)
		s.bufs[b] = w
		if open := s.openFiles(); open > maxOpen {
			// Too many buffers at once: flush and close the others (they reopen for append).
			s.closeAllBut(b)
		}
	}
	var e [entrySize]byte
	binary.LittleEndian.PutUint32(e[0:], uint32(row-b*s.span))
	binary.LittleEndian.PutUint32(e[4:], uint32(col))
	binary.LittleEndian.PutUint32(e[8:], math.Float32bits(v))
	if _, err := w.Write(e[:]); err != nil {
		return fmt.Errorf("cellsort: %w", err)
	}
	s.counts[b]++
	s.entries++
	return nil
}

// maxOpen bounds the buckets with an open file and a write buffer (memory: maxOpen × 64 KiB).
const maxOpen = 256

func (s *Sorter) openFiles() int {
	n := 0
	for _, w := range s.bufs {
		if w != nil {
			n++
		}
	}
	return n
}

func (s *Sorter) closeAllBut(keep int64) error {
	for i, w := range s.bufs {
		if w == nil || int64(i) == keep {
			continue
		}
		if err := w.Flush(); err != nil {
			return err
		}
		s.files[i].Close()
		s.files[i], s.bufs[i] = nil, nil
	}
	return nil
}

// Entries returns the number of entries added.
func (s *Sorter) Entries() int64 { return s.entries }

// Finish flushes the buckets; after it only Rows and Close may be called.
func (s *Sorter) Finish() error {
	for i, w := range s.bufs {
		if w == nil {
			continue
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("cellsort: %w", err)
		}
		if err := s.files[i].Close(); err != nil {
			return fmt.Errorf("cellsort: %w", err)
		}
		s.files[i], s.bufs[i] = nil, nil
	}
	s.finished = true
	return nil
}

// Rows reads rows [lo, hi) and appends them in CSR form: indptr gets one entry per row, the
// row's end counted from the length cols had on entry (the caller's indptr holds the 0);
// cols and vals get each row's entries sorted by column, duplicates summed (as scipy's
// tocsr does).
func (s *Sorter) Rows(lo, hi int64, indptr []int64, cols []uint32, vals []float32) ([]int64, []uint32, []float32, error) {
	if !s.finished {
		return indptr, cols, vals, errors.New("cellsort: Rows before Finish")
	}
	base := int64(len(cols))
	for b := lo / s.span; b*s.span < hi; b++ {
		rlo, rhi := max(lo, b*s.span), min(hi, (b+1)*s.span)
		var err error
		if indptr, cols, vals, err = s.bucket(b, rlo, rhi, base, indptr, cols, vals); err != nil {
			return indptr, cols, vals, err
		}
	}
	return indptr, cols, vals, nil
}

type entry struct {
	row, col uint32
	v        float32
}

func (s *Sorter) bucket(b, lo, hi, base int64, indptr []int64, cols []uint32, vals []float32) ([]int64, []uint32, []float32, error) {
	var raw []byte
	if s.counts[b] > 0 {
		f, err := os.Open(fmt.Sprintf("%s/%d", s.dir, b))
		if err != nil {
			return indptr, cols, vals, fmt.Errorf("cellsort: %w", err)
		}
		raw = make([]byte, s.counts[b]*entrySize)
		_, err = io.ReadFull(f, raw)
		f.Close()
		if err != nil {
			return indptr, cols, vals, fmt.Errorf("cellsort: bucket %d: %w", b, err)
		}
	}
	first, n := lo-b*s.span, hi-lo
	count := make([]int64, n+1)
	for k := 0; k < len(raw); k += entrySize {
		r := int64(binary.LittleEndian.Uint32(raw[k:])) - first
		if r >= 0 && r < n {
			count[r+1]++
		}
	}
	for r := range n {
		count[r+1] += count[r]
	}
	es := make([]entry, count[n])
	next := slices.Clone(count[:n])
	for k := 0; k < len(raw); k += entrySize {
		r := int64(binary.LittleEndian.Uint32(raw[k:])) - first
		if r >= 0 && r < n {
			es[next[r]] = entry{row: uint32(r), col: binary.LittleEndian.Uint32(raw[k+4:]), v: math.Float32frombits(binary.LittleEndian.Uint32(raw[k+8:]))}
			next[r]++
		}
	}
	for r := range n {
		row := es[count[r]:count[r+1]]
		if !slices.IsSortedFunc(row, func(a, b entry) int { return int(a.col) - int(b.col) }) {
			slices.SortStableFunc(row, func(a, b entry) int { return int(a.col) - int(b.col) })
		}
		for k, e := range row {
			if k > 0 && e.col == row[k-1].col {
				vals[len(vals)-1] += e.v
				continue
			}
			cols = append(cols, e.col)
			vals = append(vals, e.v)
		}
		indptr = append(indptr, int64(len(cols))-base)
	}
	return indptr, cols, vals, nil
}

// Close removes the bucket files.
func (s *Sorter) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.files {
		if f != nil {
			f.Close()
			s.files[i] = nil
		}
	}
	return os.RemoveAll(s.dir)
}
