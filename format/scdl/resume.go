package scdl

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mldf/convert/internal/atomicfile"
)

// Resume makes a Write resumable (docs/RESUME.md): the archive is written into a named
// temporary directory beside the output (".BASE.scdl-partial") that a killed run leaves,
// and a record beside it (".BASE.scdl-checkpoint") names what of it is durable: the chunks
// written (so the cell row of the inputs to continue from), the lengths of the arrays and
// of the obs spill. A Write started again with the same Print truncates the files to those
// lengths and continues from the next chunk; the final pass (row pointers narrowed, feature
// tables, header) runs after the last checkpoint and is run whole again when killed in it.
// The archive is the same bytes as an uninterrupted run's.
type Resume struct {
	// Print identifies the recipe, the inputs and the tool: a checkpoint of another Print is
	// not resumed.
	Print string
	// Every and Bytes space the checkpoints (by time, by bytes written); <= 0 never by that
	// measure. A checkpoint is always taken after the last chunk.
	Every time.Duration
	Bytes int64
	// Restart discards a checkpoint: the run starts from the first cell.
	Restart bool
	// Log, when set, receives the lines a person reads: why the run starts over, where it
	// resumed.
	Log func(msg string)
	// AfterCheckpoint, when set (tests), is called after each checkpoint with the cells it
	// holds.
	AfterCheckpoint func(cells int64)
}

// PartialSuffix and CheckpointSuffix name the temporary directory and the checkpoint record
// of a resumable Write beside the output: ".BASE" + suffix.
const (
	PartialSuffix    = ".scdl-partial"
	CheckpointSuffix = ".scdl-checkpoint"
)

// lockFile, in the temporary directory, is locked while a run writes it.
const lockFile = ".lock"

// checkpointVersion is the layout of the record; another layout is not resumed.
const checkpointVersion = 1

// checkpoint is the record of a resumable Write: the first Chunks chunks (in row order) are
// in the files, which hold Cells rows, NNZ values and Spill bytes of obs rows.
type checkpoint struct {
	Version  int    `json:"version"`
	Print    string `json:"print"`
	ChunkNNZ int64  `json:"chunk_nnz"`
	Chunks   int64  `json:"chunks"`
	Cells    int64  `json:"cells"`
	NNZ      int64  `json:"nnz"`
	Spill    int64  `json:"obs_spill_bytes"`
}

// readCheckpoint returns the record at path to resume, or nil and why not ("" when there is
// none).
func readCheckpoint(path string, res *Resume, chunkNNZ int64) (*checkpoint, string) {
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, ""
	case res.Restart:
		return nil, "--restart discards the checkpoint " + path
	case err != nil:
		return nil, fmt.Sprintf("the checkpoint %s cannot be read: %v", path, err)
	}
	var ck checkpoint
	if err := json.Unmarshal(b, &ck); err != nil || ck.Version != checkpointVersion ||
		ck.Chunks < 0 || ck.Cells < 0 || ck.NNZ < 0 || ck.Spill < 0 {
		return nil, fmt.Sprintf("the checkpoint %s is damaged or of another layout", path)
	}
	if ck.Print != res.Print {
		return nil, "the recipe, the inputs or the tool changed since the checkpoint"
	}
	if ck.ChunkNNZ != chunkNNZ {
		return nil, fmt.Sprintf("the chunk size changed since the checkpoint %s", path)
	}
	return &ck, ""
}

// checkPartial reports why the files of the temporary directory dir cannot continue ck ("":
// they can): one is missing, or shorter than the checkpoint, or its last row pointer is not
// within the values written.
func checkPartial(dir string, ck *checkpoint, colSize int) string {
	for _, f := range []struct {
		name string
		size int64
	}{{DataFile, 4 * ck.NNZ}, {ColPtrFile, int64(colSize) * ck.NNZ}, {rowSpill, 8 * ck.Cells}, {obsSpill, ck.Spill}} {
		p := filepath.Join(dir, f.name)
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Sprintf("%s of the checkpoint is missing", p)
		}
		if fi.Size() < f.size {
			return fmt.Sprintf("%s is shorter (%d bytes) than the checkpoint (%d bytes)", p, fi.Size(), f.size)
		}
	}
	if ck.Cells > 0 {
		p := filepath.Join(dir, rowSpill)
		f, err := os.Open(p)
		if err != nil {
			return fmt.Sprintf("%s cannot be read: %v", p, err)
		}
		defer f.Close()
		var b [8]byte
		if _, err := f.ReadAt(b[:], 8*(ck.Cells-1)); err != nil {
			return fmt.Sprintf("%s cannot be read: %v", p, err)
		}
		if v := binary.LittleEndian.Uint64(b[:]); v > uint64(ck.NNZ) {
			return fmt.Sprintf("%s is damaged: its last row starts at value %d of %d", p, v, ck.NNZ)
		}
	}
	return ""
}

// chunkEnd is where the arrays stand after a chunk: the chunks, cells, values and obs
// spill bytes written up to and including it.
type chunkEnd struct {
	chunks, cells, nnz, spill int64
}

// tracker follows the chunks as they are written (in any order): it hands the end of the obs
// spill written without a gap to the obs goroutine and, for a resumable run (res set), takes
// a checkpoint when the chunks written without a gap reach one that is due.
type tracker struct {
	res     *Resume // nil: no checkpoints
	path    string  // the record
	base    checkpoint
	total   int64 // cells of the run
	sync    func() error
	mu      sync.Mutex
	pending map[int64]chunkEnd // by chunk index
	cur     chunkEnd           // the end of the chunks written without a gap
	last    time.Time
	bytes   int64      // written since the last checkpoint
	spilled chan int64 // the latest end of the spill written without a gap (capacity 1)
}

// spillEnd returns the end of the obs spill written without a gap.
func (t *tracker) spillEnd() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cur.spill
}

// written records that chunk j (ending at end, nbytes written) is in the files.
func (t *tracker) written(j int64, end chunkEnd, nbytes int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending[j] = end
	t.bytes += nbytes
	moved := false
	for {
		e, ok := t.pending[t.cur.chunks]
		if !ok {
			break
		}
		delete(t.pending, t.cur.chunks)
		t.cur, moved = e, true
	}
	if !moved {
		return nil
	}
	select { // replace a value not yet taken (the only sender holds t.mu)
	case <-t.spilled:
	default:
	}
	t.spilled <- t.cur.spill
	if t.res == nil {
		return nil
	}
	due := t.cur.cells == t.total ||
		(t.res.Every > 0 && time.Since(t.last) >= t.res.Every) ||
		(t.res.Bytes > 0 && t.bytes >= t.res.Bytes)
	if !due {
		return nil
	}
	if err := t.sync(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	ck := t.base
	ck.Chunks, ck.Cells, ck.NNZ, ck.Spill = t.cur.chunks, t.cur.cells, t.cur.nnz, t.cur.spill
	b, err := json.Marshal(ck)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(t.path, b, 0o644); err != nil {
		return fmt.Errorf("checkpoint %s: %w", t.path, err)
	}
	t.last, t.bytes = time.Now(), 0
	if t.res.AfterCheckpoint != nil {
		t.res.AfterCheckpoint(ck.Cells)
	}
	return nil
}

// openPartial opens the temporary directory of a resumable Write: the checkpoint's, to
// continue, or a new one (saying why an existing checkpoint is not resumed). The returned
// function releases the lock that keeps a second run off the same output.
func (w *writer) openPartial() (func(), error) {
	res := w.opt.Resume
	w.tmp = atomicfile.PartialName(w.path, PartialSuffix)
	if fi, err := os.Lstat(w.tmp); err == nil && !fi.IsDir() {
		if err := os.Remove(w.tmp); err != nil {
			return nil, fmt.Errorf("create %s: %w", w.path, err)
		}
	}
	if err := os.MkdirAll(w.tmp, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", w.path, err)
	}
	lock, err := atomicfile.OpenLocked(filepath.Join(w.tmp, lockFile), 0o644, false)
	if err != nil {
		return nil, fmt.Errorf("output %s: %w", w.path, err)
	}
	unlock := func() { lock.Close() }
	w.recPath = atomicfile.PartialName(w.path, CheckpointSuffix)
	ck, why := readCheckpoint(w.recPath, res, w.opt.ChunkNNZ)
	if ck != nil {
		why = checkPartial(w.tmp, ck, w.colSize)
	}
	if ck != nil && why == "" && w.chunkCells(ck.Chunks) != ck.Cells {
		why = fmt.Sprintf("the checkpoint %s does not end where a chunk of this run does", w.recPath)
	}
	if why != "" {
		if res.Log != nil {
			res.Log(fmt.Sprintf("%s: starting over: %s", w.path, why))
		}
		ck = nil
	}
	if ck == nil {
		os.Remove(w.recPath)
		if err := clearDir(w.tmp, lockFile); err != nil {
			unlock()
			return nil, fmt.Errorf("create %s: %w", w.path, err)
		}
		ck = &checkpoint{}
	} else if res.Log != nil {
		res.Log(fmt.Sprintf("%s: resumed after %d of %d cells (%d chunks written)", w.path, ck.Cells, w.totalCells, ck.Chunks))
	}
	w.ck = ck
	return unlock, nil
}

// chunkCells returns the cells of the first n chunks of the run (-1 when it has fewer).
func (w *writer) chunkCells(n int64) int64 {
	var cells int64
	for i, in := range w.inputs {
		step := w.chunkRows(i, in)
		for lo := int64(0); lo < w.rows[i]; lo += step {
			if n == 0 {
				return cells
			}
			n--
			cells += min(lo+step, w.rows[i]) - lo
		}
	}
	if n > 0 {
		return -1
	}
	return cells
}

// commitPartial publishes the complete archive of a resumable Write: the record goes first
// (a run killed after it starts over), then the spills; the directory replaces the output.
func (w *writer) commitPartial() error {
	if err := os.Remove(w.recPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	if err := w.removeSpills(); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	if err := os.Remove(filepath.Join(w.tmp, lockFile)); err != nil { // held until we return
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	return atomicfile.PublishDir(w.tmp, w.path)
}

// clearDir removes everything in dir but the entry keep.
func clearDir(dir, keep string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Name() != keep {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// discardPartial removes the temporary directory and the record of a resumable Write.
func (w *writer) discardPartial() {
	os.Remove(w.recPath)
	os.RemoveAll(w.tmp)
}

// removeResumable removes the temporary directory and the record a killed resumable Write to
// path left, for a Write without checkpoints (which would never resume them); one that a run
// is writing is ErrBusy.
func removeResumable(path string) error {
	tmp := atomicfile.PartialName(path, PartialSuffix)
	if _, err := os.Lstat(tmp); err != nil {
		os.Remove(atomicfile.PartialName(path, CheckpointSuffix))
		return nil
	}
	if atomicfile.Busy(filepath.Join(tmp, lockFile)) {
		return fmt.Errorf("output %s: %w: another run is writing it (%s is locked)", path, atomicfile.ErrBusy, tmp)
	}
	os.Remove(atomicfile.PartialName(path, CheckpointSuffix))
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("create %s: remove a killed run's %s: %w", path, tmp, err)
	}
	return nil
}
