package scdl

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/internal/cells"
	"github.com/mldf/convert/pagewriter"
)

// Options configure Write.
type Options struct {
	// Workers read and encode row ranges in parallel; 0 means runtime.NumCPU().
	Workers int
	// ChunkNNZ is the number of stored values a worker aims to read at once (0: 1<<20). A
	// chunk is never more than MaxChunkRows rows. The output does not depend on it.
	ChunkNNZ int64
	// Progress, when set, is called from one goroutine about every 500ms and once at the end.
	Progress func(Progress)
	// Resume, when set, makes the write resumable after a kill (see Resume).
	Resume *Resume
}

// MaxChunkRows bounds the rows of one chunk (and so the obs values held per worker).
const MaxChunkRows = cells.MaxBlockRows

// Progress is a snapshot of a running Write.
type Progress struct {
	Cells, TotalCells int64
	NNZ               int64
	Elapsed           time.Duration
}

// Report describes a written archive.
type Report struct {
	Path                 string
	Inputs               int
	Cells, Genes, NNZ    int64 // Genes: the widest input
	Data, RowPtr, ColPtr DType
	VarBlocks, ObsBlocks int
	BytesOut             int64
	Elapsed              time.Duration
}

// Write converts inputs, in order, into one SCDL archive at path (a directory), the way
// BioNeMo's SingleCellCollection concatenates files: the CSR arrays one after the other, the
// row pointers offset, the feature tables appended block by block.
//
// Workers read and encode ranges of rows in parallel; each range claims its place in the
// arrays in row order (pagewriter.Sequencer) and is written with positional writes, so the
// archive is the same bytes for any number of workers. Row pointers are written as they go
// (as uint64 to a spill file, narrowed at the end) and per-cell features are streamed to
// parquet, so memory does not grow with the number of cells. Everything is written into a
// temporary directory beside path, which replaces path only when complete: a failed or
// cancelled run leaves nothing, and an archive already at path stays as it was.
func Write(ctx context.Context, path string, inputs []Input, opt Options) (rep Report, err error) {
	start := time.Now()
	if len(inputs) == 0 {
		return rep, fmt.Errorf("%w: no inputs", ErrInput)
	}
	if err := checkTarget(path); err != nil {
		return rep, err
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	w := &writer{path: path, inputs: inputs, opt: opt, start: start}
	if w.opt.Workers <= 0 {
		w.opt.Workers = runtime.NumCPU()
	}
	if w.opt.ChunkNNZ <= 0 {
		w.opt.ChunkNNZ = 1 << 20
	}
	if err := w.plan(); err != nil {
		return rep, err
	}
	parent := filepath.Dir(path)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return rep, fmt.Errorf("create %s: %w", path, err)
	}
	var commit func() error
	if opt.Resume != nil {
		var unlock func()
		if unlock, err = w.openPartial(); err != nil {
			return rep, err
		}
		defer unlock()
		defer func() {
			w.closeFiles()
			if err != nil && errors.Is(err, ErrInput) {
				w.discardPartial() // the same run fails the same way: nothing to resume
			}
		}()
		commit = w.commitPartial
	} else {
		// The archive is written into a temporary directory beside path, moved onto path
		// when complete (atomicfile.Dir: a killed earlier run's leftovers are removed, ours
		// is held).
		if err := removeResumable(path); err != nil {
			return rep, err
		}
		var tmpDir *atomicfile.Dir
		if tmpDir, err = atomicfile.CreateDir(path); err != nil {
			return rep, fmt.Errorf("create %s: %w", path, err)
		}
		w.tmp = tmpDir.Path()
		defer func() {
			if err != nil {
				w.closeFiles()
				tmpDir.Abort()
			}
		}()
		commit = func() error {
			if err := w.removeSpills(); err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
			return tmpDir.Commit()
		}
	}
	if err := w.run(ctx); err != nil {
		return rep, err
	}
	if err := ctx.Err(); err != nil {
		return rep, err // cancelled after the last chunk: no archive
	}
	if err := w.finish(); err != nil {
		return rep, fmt.Errorf("write %s: %w", path, err)
	}
	if err := commit(); err != nil {
		return rep, err
	}
	rep = Report{Path: path, Inputs: len(inputs), Cells: w.cells, Genes: w.maxCols, NNZ: w.nnz,
		Data: Float32, RowPtr: SmallestUint(uint64(w.nnz)), ColPtr: w.colType,
		VarBlocks: len(w.varIdx.labels), ObsBlocks: len(w.obsIdx.labels), BytesOut: w.bytesOut, Elapsed: time.Since(start)}
	if opt.Progress != nil {
		opt.Progress(Progress{Cells: w.cells, TotalCells: w.totalCells, NNZ: w.nnz, Elapsed: rep.Elapsed})
	}
	return rep, nil
}

// checkTarget refuses a path that holds something other than an SCDL archive: Write
// replaces an archive, never a user's other files.
func checkTarget(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("output %s: %w (a file)", path, ErrExists)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(path, HeaderFile)); err != nil {
		return fmt.Errorf("output %s: %w (a directory without %s; remove it or choose another path)", path, ErrExists, HeaderFile)
	}
	return nil
}

type writer struct {
	path   string
	tmp    string
	inputs []Input
	opt    Options
	start  time.Time

	rows       []int64 // per input
	cols       []int64
	maxCols    int64
	colType    DType
	colSize    int
	obsSpecs   [][]ColumnSpec // per input: the stored obs columns
	obsNeed    [][]bool       // per input, per ObsSchema column: read it (it is stored)
	obsBlock   []int          // per input: its obs block
	blockSpec  [][]ColumnSpec // per obs block: the unified columns
	totalCells int64

	data, colf, rowf, obsf *os.File
	varIdx, obsIdx         *featureIndex
	obsTable               *tableWriter
	obsCur                 int   // the obs block obsTable writes
	spillLen               int64 // bytes of obs records claimed (with the sequencer's baton)

	ck      *checkpoint // where the run starts (zero: the first cell)
	track   *tracker    // the chunks written; checkpoints when resumable
	recPath string      // the checkpoint record (resumable runs)

	cells, nnz int64
	done       atomic.Int64 // cells written (progress)
	doneNNZ    atomic.Int64
	bytesOut   int64
}

// plan reads the inputs' shapes and obs schemas: the column dtype, the obs blocks.
func (w *writer) plan() error {
	for i, in := range w.inputs {
		r, c := in.Shape()
		if r <= 0 {
			return fmt.Errorf("%s: %w: no cells", in.Name(), ErrInput)
		}
		if c <= 0 {
			return fmt.Errorf("%s: %w: no genes", in.Name(), ErrInput)
		}
		if c > math.MaxUint32 {
			return fmt.Errorf("%s: %w: %d genes (at most %d)", in.Name(), ErrInput, c, uint32(math.MaxUint32))
		}
		w.rows = append(w.rows, r)
		w.cols = append(w.cols, c)
		w.maxCols = max(w.maxCols, c)
		w.totalCells += r
		specs := storedColumns(in.ObsSchema(), ObsIndexColumn)
		w.obsSpecs = append(w.obsSpecs, specs)
		need := make([]bool, len(in.ObsSchema()))
		for k, c := range in.ObsSchema() {
			need[k] = !c.Index || (len(specs) == 1 && specs[0].Name == ObsIndexColumn)
		}
		w.obsNeed = append(w.obsNeed, need)
		// BioNeMo's ObservedFeatureIndex merges a block into the previous one when their
		// column names are the same (numpy concatenates their values).
		if i > 0 && len(specs) > 0 && sameNames(specs, w.blockSpec[len(w.blockSpec)-1]) {
			b := len(w.blockSpec) - 1
			for k := range specs {
				w.blockSpec[b][k].Kind = unify(w.blockSpec[b][k].Kind, specs[k].Kind)
			}
			w.obsBlock = append(w.obsBlock, b)
			continue
		}
		if len(specs) == 0 {
			w.obsBlock = append(w.obsBlock, -1)
			continue
		}
		w.blockSpec = append(w.blockSpec, slices.Clone(specs))
		w.obsBlock = append(w.obsBlock, len(w.blockSpec)-1)
	}
	w.colType = SmallestUint(uint64(w.maxCols - 1))
	w.colSize = w.colType.Size()
	return nil
}

func sameNames(a, b []ColumnSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

// rowSpill is the temporary file of uint64 row pointers, narrowed into row_ptr.npy at the end.
const rowSpill = ".row_ptr.u64"

func (w *writer) run(ctx context.Context) error {
	var start checkpoint
	if w.ck != nil {
		start = *w.ck
	}
	var err error
	open := func(name string, size int64) *os.File {
		if err != nil {
			return nil
		}
		var f *os.File
		f, err = os.OpenFile(filepath.Join(w.tmp, name), os.O_RDWR|os.O_CREATE, 0o644)
		if err == nil {
			// A resumed run cuts what a killed one wrote after its checkpoint.
			err = f.Truncate(size)
		}
		return f
	}
	w.data = open(DataFile, 4*start.NNZ)
	w.colf = open(ColPtrFile, int64(w.colSize)*start.NNZ)
	w.rowf = open(rowSpill, 8*start.Cells)
	w.obsf = open(obsSpill, start.Spill)
	if err != nil {
		return fmt.Errorf("create %s: %w", w.path, err)
	}
	w.spillLen = start.Spill
	w.track = &tracker{res: w.opt.Resume, path: w.recPath, total: w.totalCells, pending: map[int64]chunkEnd{},
		spilled: make(chan int64, 1),
		cur:     chunkEnd{chunks: start.Chunks, cells: start.Cells, nnz: start.NNZ, spill: start.Spill},
		last:    time.Now()}
	if res := w.opt.Resume; res != nil {
		w.track.base = checkpoint{Version: checkpointVersion, Print: res.Print, ChunkNNZ: w.opt.ChunkNNZ}
		w.track.sync = func() error {
			for _, f := range []*os.File{w.data, w.colf, w.rowf, w.obsf} {
				if err := f.Sync(); err != nil {
					return fmt.Errorf("%s: %w", f.Name(), err)
				}
			}
			return nil
		}
	}
	w.done.Store(start.Cells)
	w.doneNNZ.Store(start.NNZ)
	// The obs tables are written from the spill's start in every run (a killed run's are
	// replaced): the spill up to the checkpoint is the obs rows of the chunks before it.
	if err := os.RemoveAll(filepath.Join(w.tmp, ObsFeatures)); err != nil {
		return fmt.Errorf("create %s: %w", w.path, err)
	}
	if w.obsIdx, err = newFeatureIndex(w.tmp, ObsFeatures); err != nil {
		return fmt.Errorf("create %s: %w", w.path, err)
	}
	w.obsCur = -1

	seq := pagewriter.NewSequencer(pagewriter.Position{Cursor: start.NNZ, Rows: start.Cells})
	g, gctx := errgroup.WithContext(ctx)
	type task struct {
		j      int64 // the chunk's index in the run
		in     int
		lo, hi int64
		t      *pagewriter.Ticket
	}
	tasks := make(chan task, w.opt.Workers)
	g.Go(func() error {
		defer close(tasks)
		var j int64
		for i, in := range w.inputs {
			step := w.chunkRows(i, in)
			for lo := int64(0); lo < w.rows[i]; lo += step {
				hi := min(lo+step, w.rows[i])
				if j < start.Chunks { // written before the checkpoint (checked by openPartial)
					j++
					continue
				}
				t := task{j: j, in: i, lo: lo, hi: hi, t: seq.Issue()}
				j++
				select {
				case tasks <- t:
				case <-gctx.Done():
					seq.Fail(gctx.Err())
					return gctx.Err()
				}
			}
		}
		return nil
	})
	var workers sync.WaitGroup
	workers.Add(w.opt.Workers)
	workersDone := make(chan struct{})
	g.Go(func() error {
		workers.Wait()
		close(workersDone)
		return nil
	})
	// One goroutine writes the obs rows into the parquet tables as the spill is written
	// without a gap (off the chunks' path), in claim order.
	g.Go(func() error {
		var off int64
		var buf []byte
		for {
			var end int64
			last := false
			select {
			case end = <-w.track.spilled:
			case <-workersDone:
				end, last = w.track.spillEnd(), true
			case <-gctx.Done():
				return gctx.Err()
			}
			if err := w.writeObs(off, end, &buf); err != nil {
				err = fmt.Errorf("%s: %w", ObsFeatures, err)
				seq.Fail(err)
				return err
			}
			off = end
			if last {
				return nil
			}
		}
	})
	for range w.opt.Workers {
		g.Go(func() error {
			defer workers.Done()
			var b Block
			var enc encoded
			for t := range tasks {
				if err := gctx.Err(); err != nil {
					seq.Fail(err)
					return err
				}
				if err := w.chunk(gctx, seq, t.t, t.j, t.in, t.lo, t.hi, &b, &enc); err != nil {
					seq.Fail(err)
					return err
				}
			}
			return nil
		})
	}
	stopProgress := w.progress(gctx)
	err = g.Wait()
	stopProgress()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if !seq.AllPassed() {
		return fmt.Errorf("write %s: internal error: not every chunk claimed", w.path)
	}
	pos := seq.Position()
	w.cells, w.nnz = pos.Rows, pos.Cursor
	return nil
}

func (w *writer) progress(ctx context.Context) func() {
	if w.opt.Progress == nil {
		return func() {}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				w.opt.Progress(Progress{Cells: w.done.Load(), TotalCells: w.totalCells, NNZ: w.doneNNZ.Load(), Elapsed: time.Since(w.start)})
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { close(stop); <-done }
}

// chunkRows is the number of rows per chunk for input i: about ChunkNNZ values.
func (w *writer) chunkRows(i int, in Input) int64 {
	perRow := w.cols[i] // dense worst case
	if nnz := in.NNZ(); nnz >= 0 {
		perRow = max(1, (nnz+w.rows[i]-1)/w.rows[i])
	}
	return max(1, min(MaxChunkRows, w.opt.ChunkNNZ/perRow))
}

// encoded is a chunk's bytes, ready for the positional writes.
type encoded struct {
	data, cols, rows, obs []byte
}

// chunk reads rows [lo, hi) of input i, encodes them, claims their place and writes them.
func (w *writer) chunk(ctx context.Context, seq *pagewriter.Sequencer, t *pagewriter.Ticket, j int64, i int, lo, hi int64, b *Block, e *encoded) error {
	in := w.inputs[i]
	specs := in.ObsSchema()
	b.Reset(specs)
	for k := range b.Obs {
		b.Obs[k].Skip = !w.obsNeed[i][k]
	}
	if err := in.ReadRows(lo, hi, b); err != nil {
		return fmt.Errorf("%s: rows [%d, %d): %w", in.Name(), lo, hi, err)
	}
	if err := w.check(i, lo, hi, b); err != nil {
		return err
	}
	nnz := int64(len(b.Vals))
	e.data = slices.Grow(e.data[:0], 4*len(b.Vals))
	for _, v := range b.Vals {
		e.data = binary.LittleEndian.AppendUint32(e.data, math.Float32bits(v))
	}
	e.cols = slices.Grow(e.cols[:0], w.colSize*len(b.Cols))
	switch w.colType {
	case Uint8:
		for _, c := range b.Cols {
			e.cols = append(e.cols, byte(c))
		}
	case Uint16:
		for _, c := range b.Cols {
			e.cols = binary.LittleEndian.AppendUint16(e.cols, uint16(c))
		}
	default:
		for _, c := range b.Cols {
			e.cols = binary.LittleEndian.AppendUint32(e.cols, c)
		}
	}
	e.obs = e.obs[:0]
	if w.obsBlock[i] >= 0 {
		e.obs = encodeObs(e.obs, i, lo, hi, w.obsColumns(i, b.Obs))
		if int64(len(e.obs)) > maxObsRecord {
			return fmt.Errorf("%s: rows [%d, %d): %w: %d bytes of cell features in %d cells", in.Name(), lo, hi, ErrInput, len(e.obs), hi-lo)
		}
	}
	var start, row0, spill0 int64
	seq.Publish(t, func() error {
		pos := seq.Position()
		start, row0 = pos.Cursor, pos.Rows
		spill0 = w.spillLen
		w.spillLen += int64(len(e.obs))
		seq.Pass(t, pagewriter.Position{Cursor: start + nnz, Rows: row0 + (hi - lo)})
		return nil
	})
	if err := seq.WaitClaimed(ctx, t); err != nil {
		return err
	}
	e.rows = slices.Grow(e.rows[:0], 8*b.Rows())
	for _, off := range b.Indptr[:b.Rows()] {
		e.rows = binary.LittleEndian.AppendUint64(e.rows, uint64(start+off))
	}
	if _, err := w.data.WriteAt(e.data, start*4); err != nil {
		return fmt.Errorf("write %s: %w", DataFile, err)
	}
	if _, err := w.colf.WriteAt(e.cols, start*int64(w.colSize)); err != nil {
		return fmt.Errorf("write %s: %w", ColPtrFile, err)
	}
	if _, err := w.rowf.WriteAt(e.rows, row0*8); err != nil {
		return fmt.Errorf("write %s: %w", RowPtrFile, err)
	}
	if _, err := w.obsf.WriteAt(e.obs, spill0); err != nil {
		return fmt.Errorf("write %s: %w", ObsFeatures, err)
	}
	end := chunkEnd{chunks: j + 1, cells: row0 + (hi - lo), nnz: start + nnz, spill: spill0 + int64(len(e.obs))}
	if err := w.track.written(j, end, int64(len(e.data)+len(e.cols)+len(e.rows)+len(e.obs))); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	w.done.Add(hi - lo)
	w.doneNNZ.Add(nnz)
	return nil
}

// check refuses a block that is not what the input promised: it never reaches the archive.
func (w *writer) check(i int, lo, hi int64, b *Block) error {
	in := w.inputs[i]
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: rows [%d, %d): %w: %s", in.Name(), lo, hi, ErrInput, fmt.Sprintf(format, args...))
	}
	if int64(b.Rows()) != hi-lo {
		return bad("%d rows read", b.Rows())
	}
	if len(b.Cols) != len(b.Vals) || b.Indptr[0] != 0 || b.Indptr[b.Rows()] != int64(len(b.Vals)) {
		return bad("inconsistent CSR block")
	}
	for r := range b.Rows() {
		if b.Indptr[r+1] < b.Indptr[r] {
			return bad("row %d: negative length", lo+int64(r))
		}
	}
	ncols := uint32(w.cols[i])
	for r := range b.Rows() {
		for k := b.Indptr[r]; k < b.Indptr[r+1]; k++ {
			if b.Cols[k] >= ncols {
				return bad("cell %d: gene index %d, the input has %d genes", lo+int64(r), b.Cols[k], ncols)
			}
		}
	}
	if len(b.Obs) != len(in.ObsSchema()) {
		return bad("%d obs columns, schema has %d", len(b.Obs), len(in.ObsSchema()))
	}
	for _, c := range b.Obs {
		if !c.Skip && int64(c.Len()) != hi-lo {
			return bad("obs column %q has %d values", c.Name, c.Len())
		}
	}
	return nil
}

// obsColumns returns the stored obs columns of a block (the index alone, renamed, when the
// table has no other column), sharing the block's buffers.
func (w *writer) obsColumns(i int, all []Column) []Column {
	specs := w.obsSpecs[i]
	out := make([]Column, 0, len(specs))
	for _, s := range specs {
		for _, c := range all {
			if c.Name == s.Name || (c.Index && s.Name == ObsIndexColumn && len(specs) == 1) {
				c.ColumnSpec = s
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// appendObs writes a chunk's obs rows; the final pass calls it in claim order.
func (w *writer) appendObs(i int, cols []Column, rows int64) error {
	b := w.obsBlock[i]
	if b < 0 {
		return nil
	}
	if b != w.obsCur {
		if w.obsTable != nil {
			if err := w.obsTable.close(); err != nil {
				return err
			}
			w.obsTable = nil
		}
		w.obsIdx.addBlock(0, w.inputs[i].Name())
		t, err := createTable(w.obsIdx.blockPath(b), w.blockSpec[b])
		if err != nil {
			return err
		}
		w.obsTable, w.obsCur = t, b
	}
	if err := w.obsTable.append(cols); err != nil {
		return err
	}
	w.obsIdx.extend(rows)
	return nil
}

// finish writes the last row pointer, narrows the row pointers, writes the feature indices
// (the obs tables from the spill), the metadata and the header, and syncs everything. It
// starts by removing what an earlier finish killed midway wrote: it can be run again whole.
func (w *writer) finish() error {
	if w.nnz == 0 {
		return fmt.Errorf("%w: the inputs hold no stored values (BioNeMo cannot map an empty data.npy)", ErrInput)
	}
	for _, name := range []string{HeaderFile, MetadataFile, VersionFile, RowPtrFile, VarFeatures} {
		if err := os.RemoveAll(filepath.Join(w.tmp, name)); err != nil {
			return err
		}
	}
	var err error
	if w.varIdx, err = newFeatureIndex(w.tmp, VarFeatures); err != nil {
		return err
	}
	var last [8]byte
	binary.LittleEndian.PutUint64(last[:], uint64(w.nnz))
	if _, err := w.rowf.WriteAt(last[:], w.cells*8); err != nil {
		return err
	}
	if w.obsTable != nil {
		err := w.obsTable.close()
		w.obsTable = nil
		if err != nil {
			return fmt.Errorf("%s: %w", ObsFeatures, err)
		}
	}
	rowType := SmallestUint(uint64(w.nnz))
	if err := w.narrowRows(rowType); err != nil {
		return err
	}
	for _, f := range []*os.File{w.data, w.colf} {
		if err := f.Sync(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	w.data, w.colf = nil, nil
	if err := w.writeVar(); err != nil {
		return fmt.Errorf("%s: %w", VarFeatures, err)
	}
	if err := w.varIdx.finish(); err != nil {
		return fmt.Errorf("%s: %w", VarFeatures, err)
	}
	if err := w.obsIdx.finish(); err != nil {
		return fmt.Errorf("%s: %w", ObsFeatures, err)
	}
	if err := writeFileSync(filepath.Join(w.tmp, MetadataFile), fmt.Appendf(nil, `{"num_rows": %d}`, w.cells)); err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(w.tmp, VersionFile), fmt.Appendf(nil, `"%s"`, LibraryVersion)); err != nil {
		return err
	}
	h := &Header{Version: Version, Backend: BackendMemmapV0, Arrays: []ArrayInfo{
		{Name: ArrayData, Length: uint64(w.nnz), DType: Float32},
		{Name: ArrayRowPtr, Length: uint64(w.cells + 1), DType: rowType},
		{Name: ArrayColPtr, Length: uint64(w.nnz), DType: w.colType},
	}, Features: []FeatureIndexInfo{w.varIdx.info(), w.obsIdx.info()}}
	hb, err := h.MarshalBinary()
	if err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(w.tmp, HeaderFile), hb); err != nil {
		return err
	}
	w.bytesOut = dirSize(w.tmp)
	return nil // the directory is fsynced when it is published
}

// narrowRows copies the uint64 spill into row_ptr.npy as dtype t.
func (w *writer) narrowRows(t DType) error {
	out, err := os.OpenFile(filepath.Join(w.tmp, RowPtrFile), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	if _, err := w.rowf.Seek(0, io.SeekStart); err != nil {
		return err
	}
	in := make([]byte, 1<<20)
	outb := make([]byte, 0, 1<<20)
	for {
		n, rerr := io.ReadFull(w.rowf, in)
		outb = outb[:0]
		for k := 0; k+8 <= n; k += 8 {
			v := binary.LittleEndian.Uint64(in[k:])
			switch t {
			case Uint8:
				outb = append(outb, byte(v))
			case Uint16:
				outb = binary.LittleEndian.AppendUint16(outb, uint16(v))
			case Uint32:
				outb = binary.LittleEndian.AppendUint32(outb, uint32(v))
			default:
				outb = binary.LittleEndian.AppendUint64(outb, v)
			}
		}
		if _, err := out.Write(outb); err != nil {
			return err
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	return out.Sync()
}

// writeObs writes the obs rows of the spill's records in [off, end) (whole records) to the
// obs tables.
func (w *writer) writeObs(off, end int64, buf *[]byte) error {
	if end <= off {
		return nil
	}
	r := bufio.NewReaderSize(io.NewSectionReader(w.obsf, off, end-off), 1<<20)
	specsOf := func(in int) ([]ColumnSpec, bool) {
		if in < 0 || in >= len(w.inputs) || w.obsBlock[in] < 0 {
			return nil, false
		}
		return w.obsSpecs[in], true
	}
	for {
		rec, err := readObs(r, buf, specsOf)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(w.tmp, obsSpill), err)
		}
		if err := w.appendObs(rec.in, rec.cols, rec.hi-rec.lo); err != nil {
			return fmt.Errorf("%s: rows [%d, %d): %w", w.inputs[rec.in].Name(), rec.lo, rec.hi, err)
		}
	}
}

// removeSpills closes and removes the spill files (the archive is complete without them).
func (w *writer) removeSpills() error {
	for _, f := range []**os.File{&w.rowf, &w.obsf} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
	for _, name := range []string{rowSpill, obsSpill} {
		if err := os.Remove(filepath.Join(w.tmp, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// writeVar reads every input's gene table in order and writes the var blocks: a block is
// merged into the previous one when the tables are equal (BioNeMo's VariableFeatureIndex).
func (w *writer) writeVar() error {
	var prev []Column
	for i, in := range w.inputs {
		all, err := in.Var()
		if err != nil {
			return fmt.Errorf("%s: %w", in.Name(), err)
		}
		specs := make([]ColumnSpec, len(all))
		for k, c := range all {
			specs[k] = c.ColumnSpec
			if int64(c.Len()) != w.cols[i] {
				return fmt.Errorf("%s: %w: gene table column %q has %d values for %d genes", in.Name(), ErrInput, c.Name, c.Len(), w.cols[i])
			}
		}
		stored := storedColumns(specs, VarIndexColumn)
		cols := make([]Column, 0, len(stored))
		for _, s := range stored {
			for _, c := range all {
				if c.Name == s.Name || (c.Index && s.Name == VarIndexColumn && len(stored) == 1) {
					c.ColumnSpec = s
					cols = append(cols, c)
					break
				}
			}
		}
		if i > 0 && equalTables(prev, cols) {
			w.varIdx.extend(w.rows[i])
			continue
		}
		w.varIdx.addBlock(w.rows[i], in.Name())
		t, err := createTable(w.varIdx.blockPath(len(w.varIdx.labels)-1), stored)
		if err != nil {
			return err
		}
		if err := t.append(cols); err != nil {
			t.abort()
			return err
		}
		if err := t.close(); err != nil {
			return err
		}
		prev = cols
	}
	return nil
}

// equalTables is BioNeMo's are_dicts_equal: the same column names and equal values.
func equalTables(a, b []Column) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k].Name != b[k].Name || a[k].Len() != b[k].Len() {
			return false
		}
		for r := range a[k].Len() {
			if a[k].IsNull(r) != b[k].IsNull(r) || a[k].Text(r) != b[k].Text(r) {
				return false
			}
		}
	}
	return true
}

func (w *writer) closeFiles() {
	for _, f := range []**os.File{&w.data, &w.colf, &w.rowf, &w.obsf} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
	if w.obsTable != nil {
		w.obsTable.abort()
		w.obsTable = nil
	}
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
