package parquet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"

	pq "github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/internal/pqfile"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// As says how a column's values become sample values.
type As uint8

// Conversions of a column.
const (
	// AsValue reads a primitive column as its natural kind (see the package doc) and a
	// {bytes, path} struct (a Hugging Face Image or Audio) as its bytes, named by its path.
	AsValue As = iota
	// AsJSON reads any column (structs, lists, maps) as one compact JSON value.
	AsJSON
	// AsNPY reads a list of numbers, or rectangular nested lists, as a .npy file.
	AsNPY
)

func (a As) String() string {
	switch a {
	case AsJSON:
		return "json"
	case AsNPY:
		return "npy"
	}
	return "value"
}

// Column is one value every sample gets: the node at Path (dotted for struct members, e.g.
// "image.bytes") read as As, under the sample column Name.
type Column struct {
	Name string
	Path string
	As   As
}

// Defaults of Options.
const (
	DefaultBatchRows   = 1024
	DefaultBatchBytes  = 8 << 20
	DefaultMaxPageSize = pqfile.DefaultMaxPageSize
	DefaultMaxInFlight = 512 << 20
	// maxRowValues bounds the values of one row of one column (a list of 16 M elements).
	maxRowValues = 1 << 24
)

// Options tune a Source. The zero value is usable.
type Options struct {
	// Workers is how many row groups are read at once; 0 means GOMAXPROCS. The samples and
	// their order do not depend on it.
	Workers int
	// BatchRows and BatchBytes cut a row group into batches: a batch ends after BatchRows rows
	// or once its values hold BatchBytes bytes. Memory is about (Workers + 2) × 2 batches.
	BatchRows, BatchBytes int
	// Open opens inputs; nil means OpenFile (local files).
	Open Opener
	// MaxPageSize bounds the uncompressed size of one page (0: DefaultMaxPageSize); a larger
	// page is an ErrUnsupported error rather than an allocation that size.
	MaxPageSize int64
	// MaxInFlight bounds the pages held decoded at once, by all the row groups being read
	// (0: DefaultMaxInFlight): the dictionary and the largest page, compressed and not, of
	// each column read. Row groups wait for their share; one that needs more alone is an
	// ErrUnsupported error.
	MaxInFlight int64
}

// Source is a sources.Source over Parquet files: one sample per row, in file order, then
// row group order, then row order.
type Source struct {
	inputs   []sources.Input
	cols     []Column
	opt      Options
	rows     int64
	groups   []int   // row groups per input
	fileRows []int64 // rows per input, as its footer declares
	start    start   // where a resumed run starts in its first input (Resume)
	schema   *Schema
	meta     map[string]string
}

var _ sources.Sharder = (*Source)(nil)

// Expand returns the files that patterns name, in order: local paths or URLs (s3://, gs://,
// az://, azblob://, file://), with brace ranges and globs expanded against the directory or
// the bucket listing by objstore's Client.Expand. A glob matching nothing, a missing file,
// object or bucket, or denied access is one error naming it.
func Expand(ctx context.Context, store *objstore.Client, patterns []string) ([]string, error) {
	if len(patterns) == 0 {
		return nil, ErrNoFiles
	}
	found, err := store.Expand(ctx, patterns)
	if err != nil {
		return nil, fmt.Errorf("parquet inputs: %w", err)
	}
	files := make([]string, len(found))
	for i, a := range found {
		files[i] = a.URL
	}
	return files, nil
}

// New opens the footer of every file (patterns are expanded by Expand) and checks that each
// has the columns, readable as asked: a truncated file, a corrupt footer, encryption, a
// missing column or one of the wrong shape fails here, naming the file, before any row is
// read.
func New(patterns []string, cols []Column, opt Options) (*Source, error) {
	store := objstore.New()
	if opt.Open == nil {
		opt.Open = StoreOpener(context.Background(), store)
	}
	files, err := Expand(context.Background(), store, patterns)
	if err != nil {
		return nil, err
	}
	return NewFiles(files, cols, opt)
}

// NewFiles is New over files already expanded (names the Opener understands).
func NewFiles(files []string, cols []Column, opt Options) (*Source, error) {
	if len(files) == 0 {
		return nil, ErrNoFiles
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("%w: no column to read", ErrColumn)
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.BatchRows <= 0 {
		opt.BatchRows = DefaultBatchRows
	}
	if opt.BatchBytes <= 0 {
		opt.BatchBytes = DefaultBatchBytes
	}
	if opt.Open == nil {
		opt.Open = OpenFile
	}
	if opt.MaxPageSize <= 0 {
		opt.MaxPageSize = DefaultMaxPageSize
	}
	if opt.MaxInFlight <= 0 {
		opt.MaxInFlight = DefaultMaxInFlight
	}
	s := &Source{cols: cols, opt: opt}
	for _, name := range files {
		f, err := openFile(opt.Open, name)
		if err != nil {
			return nil, err
		}
		_, err = newPlan(f.schema, cols)
		if err != nil {
			f.close()
			return nil, fmt.Errorf("%s: %w (columns: %s)", name, err, f.schema)
		}
		if s.schema == nil {
			s.schema, s.meta = f.schema, f.meta
		}
		s.inputs = append(s.inputs, sources.Input{Path: name, Size: f.blob.Size()})
		s.groups = append(s.groups, f.pqf.NumRowGroups())
		var rows int64
		for i := range f.pqf.NumRowGroups() {
			rows += f.pqf.RowGroupRows(i)
		}
		s.fileRows = append(s.fileRows, rows)
		s.rows += rows
		f.close()
	}
	return s, nil
}

// Inputs implements sources.Lister: the files the source reads, in order, with their sizes.
func (s *Source) Inputs() sources.InputList { return sources.Inputs(s.inputs) }

// Len returns the number of rows the footers declare.
func (s *Source) Len() int64 { return s.rows }

// Schema returns the schema of the first file.
func (s *Source) Schema() *Schema { return s.schema }

// Metadata returns the key-value metadata of the first file.
func (s *Source) Metadata() map[string]string { return s.meta }

// Range implements sources.Sharder: a Source over inputs [lo, hi) (a slice of a sharded
// run), indexed from 0.
func (s *Source) Range(lo, hi int) (sources.Source, error) {
	if lo < 0 || hi > len(s.inputs) || lo > hi {
		return nil, fmt.Errorf("parquet: input range [%d, %d) of %d inputs", lo, hi, len(s.inputs))
	}
	r := *s
	r.inputs = s.inputs[lo:hi:hi]
	r.groups = s.groups[lo:hi:hi]
	r.fileRows = s.fileRows[lo:hi:hi]
	if lo > 0 {
		r.start = start{}
	}
	r.rows = -1 // unknown without summing the footers again
	return &r, nil
}

// plan is how one file's leaves become the sample columns.
type plan struct {
	cols   []colPlan
	leaves []int // the leaf columns read
}

type colPlan struct {
	name  string
	node  *pq.Column
	as    As
	bytes *pq.Column // AsValue of a {bytes, path} struct: its bytes and path leaves
	path  *pq.Column
	npy   *pq.Column // AsNPY: the numeric leaf and the list depth
	dims  int
}

// newPlan resolves cols in a schema.
func newPlan(s *Schema, cols []Column) (*plan, error) {
	p := &plan{}
	seen := map[int]bool{}
	use := func(n *pq.Column) {
		first, end := leafRange(n)
		for l := first; l < end; l++ {
			if !seen[l] {
				seen[l] = true
				p.leaves = append(p.leaves, l)
			}
		}
	}
	for _, c := range cols {
		n := s.Lookup(c.Path)
		if n == nil || n == s.Root {
			return nil, fmt.Errorf("%w: no column %q", ErrColumn, c.Path)
		}
		cp := colPlan{name: c.Name, node: n, as: c.As}
		switch c.As {
		case AsValue:
			switch {
			case inRepeated(n):
				return nil, fmt.Errorf("%w: %q is a list (%s); read it as json, as an ndarray (numbers) or as tokens (integers)", ErrColumn, c.Path, s.Describe(n))
			case n.Leaf():
				use(n)
			case s.isList(n) || s.isMap(n):
				return nil, fmt.Errorf("%w: %q is a list (%s); read it as json, as an ndarray (numbers) or as tokens (integers)", ErrColumn, c.Path, s.Describe(n))
			default:
				b, ok := s.BinaryStruct(n)
				if !ok {
					return nil, fmt.Errorf("%w: %q is a struct (%s); name a member (%q) or read it as json", ErrColumn, c.Path, s.Describe(n), c.Path+"."+n.Columns()[0].Name())
				}
				cp.bytes, cp.path = b, n.Column("path")
				if cp.path != nil && (!cp.path.Leaf() || inRepeated(cp.path)) {
					cp.path = nil
				}
				use(cp.bytes)
				if cp.path != nil {
					use(cp.path)
				}
			}
		case AsJSON:
			if inRepeated(n) && !n.Repeated() && parentInRepeated(n) {
				return nil, fmt.Errorf("%w: %q lies inside a list; name the list", ErrColumn, c.Path)
			}
			use(n)
		case AsNPY:
			if parentInRepeated(n) {
				return nil, fmt.Errorf("%w: %q lies inside a list; name the list", ErrColumn, c.Path)
			}
			leaf, dims, err := s.npyLeaf(n)
			if err != nil {
				return nil, err
			}
			cp.npy, cp.dims = leaf, dims
			use(n)
		default:
			return nil, fmt.Errorf("%w: conversion %d", ErrColumn, c.As)
		}
		p.cols = append(p.cols, cp)
	}
	return p, nil
}

// BinaryStruct returns the bytes member of a Hugging Face Image/Audio-style struct
// {bytes: binary, path: string} (a group, not in a list, with a BYTE_ARRAY member "bytes").
func (s *Schema) BinaryStruct(n *pq.Column) (*pq.Column, bool) {
	if n.Leaf() || inRepeated(n) {
		return nil, false
	}
	b := n.Column("bytes")
	if b == nil || !b.Leaf() || s.phys(b).String() != "BYTE_ARRAY" || b.Repeated() {
		return nil, false
	}
	return b, true
}

// task is one row group, read by a worker into batches the emitter takes in order.
type task struct {
	f        *openRef
	win      *pqfile.Window // the decoded footer of the row groups around it
	rg       int
	seq      int64 // the task's number in the run: the in-flight budget is taken in order
	firstRow int64 // the row number of its first row within the file
	skip     int64 // rows of the group not emitted: before a resumed run's place
	last     bool  // the file's last row group: the emitter releases the file after it
	out      chan *batch
}

type batch struct {
	samples []sample.Sample
}

// openRef is an opened file shared by its row groups' tasks.
type openRef struct {
	*file
	plan *plan
	once sync.Once
}

// release closes the file and drops it (and the library's buffers it holds), once.
func (o *openRef) release() {
	o.once.Do(func() {
		o.close()
		o.file, o.plan = nil, nil
	})
}

// Run reads the files in order and emits one sample per row. Row groups are read in
// parallel and emitted in order. A file that cannot be read (corrupt pages, levels that
// contradict the schema, a failing checksum) stops the run with an error naming the file,
// row group and row; a value that cannot be converted makes its sample an error.
func (s *Source) Run(ctx context.Context, emit func(sample.Sample) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	work := make(chan *task)
	order := make(chan *task, s.opt.Workers+1)
	var opened []*openRef
	var mu sync.Mutex
	fly := newInflight(s.opt.MaxInFlight)
	var seq int64
	defer func() {
		for _, o := range opened {
			o.release()
		}
	}()
	g.Go(func() error {
		defer close(order)
		defer close(work)
		for k, in := range s.inputs {
			f, err := openFile(s.opt.Open, in.Path)
			if err != nil {
				return err
			}
			p, err := newPlan(f.schema, s.cols)
			if err != nil {
				f.close()
				return fmt.Errorf("%s: %w (columns: %s)", in.Path, err, f.schema)
			}
			ref := &openRef{file: f, plan: p}
			mu.Lock()
			opened = append(opened, ref)
			mu.Unlock()
			var row int64
			groups := f.pqf.NumRowGroups()
			if groups == 0 {
				ref.release()
			}
			var win *pqfile.Window
			first, skip := 0, int64(0)
			if k == 0 {
				first, row, skip = s.start.group, s.start.groupRow, s.start.skip
				if first >= groups {
					ref.release()
				}
			}
			for i := first; i < groups; i++ {
				switch {
				case win == nil:
					win, err = f.pqf.Window(i)
				case i >= win.First+len(win.PF.RowGroups()):
					win, err = f.pqf.Next(win)
				}
				if err == nil && win == nil {
					err = fmt.Errorf("%w: %s: no window holds row group %d", ErrCorrupt, in.Path, i)
				}
				if err != nil {
					return err
				}
				t := &task{f: ref, win: win, rg: i, seq: seq, firstRow: row, skip: skip, last: i == groups-1, out: make(chan *batch, 1)}
				seq++
				skip = 0
				row += f.pqf.RowGroupRows(i)
				select {
				case order <- t:
				case <-gctx.Done():
					return gctx.Err()
				}
				select {
				case work <- t:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
		}
		return nil
	})
	for range s.opt.Workers {
		g.Go(func() error {
			for t := range work {
				err := s.readGroup(gctx, t, fly)
				close(t.out)
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	var index int64
	emitErr := func() error {
		for t := range order {
			for {
				var b *batch
				var ok bool
				select {
				case b, ok = <-t.out:
				case <-gctx.Done():
					return nil // the group's error explains
				}
				if !ok {
					break
				}
				if t.skip > 0 {
					n := min(t.skip, int64(len(b.samples)))
					clear(b.samples[:n])
					b.samples = b.samples[n:]
					t.skip -= n
				}
				for i := range b.samples {
					b.samples[i].Index = index
					index++
					if err := emit(b.samples[i]); err != nil {
						return err
					}
					b.samples[i] = sample.Sample{}
				}
			}
			if t.last {
				t.f.release()
			}
		}
		return nil
	}()
	if emitErr != nil {
		cancel()
		_ = g.Wait()
		return emitErr
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err() // cancelled after the last row was read: still an incomplete run
}

// leafReader streams one column chunk's values with their levels.
type leafReader struct {
	node  *pq.Column
	vr    pq.ColumnChunkValueReader
	buf   []pq.Value
	carry []entry // values read past the last row taken (repeated columns): the next row's
	cbuf  []byte  // their bytes
	eof   bool
}

// take appends up to want rows of values to d (bytes into bb), stopping after a whole row
// once bb holds budget bytes (budget 0: no limit). It returns the rows taken.
func (r *leafReader) take(d *leafData, bb *batchBytes, want, budget int) (int, error) {
	got := 0
	full := func() bool { return got == want || (budget > 0 && got > 0 && bb.n >= budget) }
	// Values carried from the previous batch start the next row.
	if len(r.carry) > 0 {
		carry := r.carry
		r.carry = nil
		cb := r.cbuf
		r.cbuf = nil
		for i := range carry {
			e := carry[i]
			if e.rep == 0 && full() {
				r.keep(carry[i:], cb)
				return got, nil
			}
			if e.own == nil && e.end > e.off {
				bb.add(&e, cb[e.off:e.end])
			} else if e.own != nil {
				bb.n += len(e.own)
			}
			bb.n += entryCost
			if e.rep == 0 {
				d.rows = append(d.rows, len(d.ents))
				got++
			} else if got == 0 {
				return got, fmt.Errorf("%w: column %q: a row starts with repetition level %d", ErrCorrupt, pathOf(r.node), e.rep)
			}
			d.ents = append(d.ents, e)
		}
	}
	flat := r.node.MaxRepetitionLevel() == 0
	for !r.eof {
		if flat && full() {
			return got, nil
		}
		n := len(r.buf)
		if flat {
			n = min(n, want-got)
			if budget > 0 {
				n = min(n, 16)
			}
		}
		k, err := r.vr.ReadValues(r.buf[:n])
		for i := 0; i < k; i++ {
			v := r.buf[i]
			if v.RepetitionLevel() > r.node.MaxRepetitionLevel() || v.DefinitionLevel() > r.node.MaxDefinitionLevel() {
				return got, fmt.Errorf("%w: column %q: levels (%d, %d) above the schema's (%d, %d)", ErrCorrupt, pathOf(r.node),
					v.RepetitionLevel(), v.DefinitionLevel(), r.node.MaxRepetitionLevel(), r.node.MaxDefinitionLevel())
			}
			if !v.IsNull() && v.DefinitionLevel() < r.node.MaxDefinitionLevel() {
				return got, fmt.Errorf("%w: column %q: a value below its definition level", ErrCorrupt, pathOf(r.node))
			}
			if v.IsNull() && v.DefinitionLevel() == r.node.MaxDefinitionLevel() {
				return got, fmt.Errorf("%w: column %q: a null in a required position", ErrCorrupt, pathOf(r.node))
			}
			if v.RepetitionLevel() == 0 {
				if full() {
					// The rest starts the next batch: keep it, with its bytes copied now
					// (they live in the page until the next read).
					var ce []entry
					cb := &batchBytes{}
					for _, rest := range r.buf[i:k] {
						ce = appendEntry(ce, cb, rest)
					}
					r.keep(ce, cb.arena)
					return got, nil
				}
				d.rows = append(d.rows, len(d.ents))
				got++
			} else if got == 0 {
				return got, fmt.Errorf("%w: column %q: a row starts with repetition level %d", ErrCorrupt, pathOf(r.node), v.RepetitionLevel())
			}
			d.ents = appendEntry(d.ents, bb, v)
			if len(d.ents)-d.rows[len(d.rows)-1] > maxRowValues {
				return got, fmt.Errorf("%w: column %q: a row with more than %d values", ErrUnsupported, pathOf(r.node), maxRowValues)
			}
		}
		if err == io.EOF {
			r.eof = true
			break
		}
		if err != nil {
			return got, fmt.Errorf("%w: column %q: %w", ErrCorrupt, pathOf(r.node), err)
		}
		if k == 0 {
			return got, fmt.Errorf("%w: column %q: the reader made no progress", ErrCorrupt, pathOf(r.node))
		}
	}
	return got, nil
}

func (r *leafReader) keep(ents []entry, b []byte) {
	r.carry = append(r.carry[:0], ents...)
	r.cbuf = append(r.cbuf[:0], b...)
}

// readGroup reads row group t.rg of t's file into batches of samples sent to t.out, once its
// pages fit in the in-flight budget.
func (s *Source) readGroup(ctx context.Context, t *task, fly *inflight) (err error) {
	f, p := t.f, t.f.plan
	row := t.firstRow
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			err = fmt.Errorf("%s: row group %d, row %d: %w", f.name, t.rg, row, err)
		}
	}()
	local := t.rg - t.win.First
	rgMeta := &t.win.PF.Metadata().RowGroups[local]
	meta := rgMeta.Columns
	var chk pqfile.Checker
	defer chk.Close()
	lim := pqfile.Limits{MaxPageSize: s.opt.MaxPageSize}
	// The page headers first (cheap), then, within the row group's share of the in-flight
	// budget, the read: each compressed page is read and decompressed once, to the size its
	// header declares, as the library reads it.
	var need int64
	stats := make([]pqfile.ChunkStats, len(p.leaves))
	for i, l := range p.leaves {
		st, err := chk.Chunk(f.blob, &meta[l].MetaData, rgMeta.NumRows, pqfile.LeafOf(f.schema.leaves[l]), lim)
		if err != nil {
			return err
		}
		stats[i] = st
		need += st.InFlight
	}
	chk.Close()
	if need > s.opt.MaxInFlight {
		return fmt.Errorf("%w: its pages need %d bytes in memory at once, more than the limit of %d (Options.MaxInFlight)", ErrUnsupported, need, s.opt.MaxInFlight)
	}
	if err := fly.acquire(ctx, t.seq, need); err != nil {
		return err
	}
	defer fly.release(need)
	view, err := f.pqf.RowGroup(t.win, t.rg, p.leaves, stats)
	if err != nil {
		return err
	}
	defer view.Close()
	defer func() {
		// A page that failed to decode: its own error, not the library's words for it.
		if verr := view.Err(); err != nil && verr != nil {
			err = verr
		}
	}()
	want := view.RG.NumRows()
	chunks := view.RG.ColumnChunks()
	leaves := p.leaves
	readers := make([]*leafReader, len(leaves))
	for i, l := range leaves {
		readers[i] = &leafReader{node: f.schema.leaves[l], vr: pq.NewColumnChunkValueReader(chunks[l]), buf: make([]pq.Value, 64)}
	}
	defer func() {
		for _, r := range readers {
			r.vr.Close()
		}
	}()
	nleaves := len(f.schema.leaves)
	w := &walker{s: f.schema, data: make([]*leafData, nleaves), pos: make([]int, nleaves), end: make([]int, nleaves)}
	var done int64
	// The arena of a batch starts as large as the last batch's, the first as the chunks'
	// uncompressed size (bounded by the batch budget): values are copied once, not regrown.
	hint := 0
	for _, l := range p.leaves {
		c := meta[l].MetaData
		if c.NumValues > 0 && c.TotalUncompressedSize/c.NumValues < ownSize { // small values: in the arena
			hint += int(min(c.TotalUncompressedSize, int64(s.opt.BatchBytes)))
		}
	}
	hint = min(hint, s.opt.BatchBytes)
	var perRow int64 // bytes per row of the last batch
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		bb := &batchBytes{arena: make([]byte, 0, hint+hint/8)}
		data := make([]*leafData, nleaves)
		for _, l := range leaves {
			data[l] = &leafData{}
		}
		// Every column's rows are taken a step at a time, and the batch ends once the bytes
		// actually copied out (of all columns: a dictionary-encoded value repeated in every
		// row counts in every row) reach the budget. A step is as many rows as the budget
		// left holds at the bytes per row seen so far.
		k := 0
		for k < s.opt.BatchRows && (k == 0 || bb.n < s.opt.BatchBytes) {
			step := s.opt.BatchRows - k
			switch {
			case k > 0 && bb.n > 0:
				step = min(step, max(1, int((int64(s.opt.BatchBytes)-int64(bb.n))*int64(k)/int64(bb.n))))
			case k == 0 && perRow > 0:
				step = min(step, max(1, int(int64(s.opt.BatchBytes)/perRow)))
			case k == 0:
				step = 1
			}
			n0 := 0
			for i, r := range readers {
				n, err := r.take(data[leaves[i]], bb, step, 0)
				if err != nil {
					return err
				}
				if i == 0 {
					n0 = n
				} else if n != n0 {
					return fmt.Errorf("%w: column %q has %d rows where column %q has %d", ErrCorrupt,
						pathOf(r.node), done+int64(k+n), pathOf(readers[0].node), done+int64(k+n0))
				}
			}
			if n0 == 0 {
				break
			}
			k += n0
		}
		if k == 0 {
			break
		}
		perRow = max(1, int64(bb.n)/int64(k))
		hint = min(len(bb.arena), 4*s.opt.BatchBytes)
		w.data, w.arena = data, bb.arena
		b := &batch{samples: s.samples(f, p, w, t.rg, row, k)}
		select {
		case t.out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
		done += int64(k)
		row += int64(k)
	}
	if done != want {
		return fmt.Errorf("%w: the row group holds %d rows, its metadata says %d", ErrCorrupt, done, want)
	}
	return nil
}

// samples builds the k samples of one batch. Their values share the batch's arena and one
// backing array of columns.
func (s *Source) samples(f *openRef, p *plan, w *walker, rg int, first int64, k int) []sample.Sample {
	out := make([]sample.Sample, k)
	ncol := len(p.cols)
	cols := make([]sample.Column, 0, k*ncol)
	for i := range k {
		rowNo := first + int64(i)
		key := f.name + ":" + strconv.FormatInt(rowNo, 10)
		smp := sample.Sample{Key: key, Origin: key}
		start := len(cols)
		var size int64
		for _, c := range p.cols {
			v, ok, err := s.value(w, c, i)
			if err != nil {
				smp.Err = &RowError{File: f.name, RowGroup: rg, Row: rowNo, Column: pathOf(c.node), Err: err}
				break
			}
			if !ok {
				continue
			}
			size += int64(len(v.Bytes))
			if len(v.Bytes) == 0 {
				size += 8
			}
			cols = append(cols, sample.Column{Name: c.name, Value: v})
		}
		smp.InputBytes = size
		if smp.Err == nil {
			smp.Values = cols[start:len(cols):len(cols)]
		} else {
			cols = cols[:start]
		}
		out[i] = smp
	}
	return out
}

// value returns column c of row i of the batch, or ok false for a null.
func (s *Source) value(w *walker, c colPlan, i int) (sample.Value, bool, error) {
	switch {
	case c.as == AsValue && c.bytes == nil:
		return leafValue(w, c.node, i)
	case c.as == AsValue:
		v, ok, err := leafValue(w, c.bytes, i)
		if !ok || err != nil {
			return v, ok, err
		}
		v.Kind = sample.KindBytes
		if c.path != nil {
			if p, ok, err := leafValue(w, c.path, i); err == nil && ok {
				v.Name = string(p.Bytes)
			}
		}
		return v, true, nil
	case c.as == AsNPY:
		w.start(c.node, i)
		b, err := w.npy(c.node, c.npy, c.dims)
		if err != nil || b == nil {
			return sample.Value{}, false, err
		}
		return sample.Value{Kind: sample.KindBytes, Bytes: b, Name: c.name + ".npy"}, true, nil
	}
	w.start(c.node, i)
	if e, err := w.peek(c.node); err != nil {
		return sample.Value{}, false, err
	} else if int(e.def) < c.node.MaxDefinitionLevel() && !c.node.Repeated() {
		// A null column (or a null parent struct): no value.
		return sample.Value{}, false, w.skipRow(c.node)
	}
	b, err := w.value(c.node, nil)
	if err == nil {
		err = w.done(c.node)
	}
	if err != nil {
		return sample.Value{}, false, err
	}
	return sample.Value{Kind: sample.KindJSON, Bytes: b}, true, nil
}

// skipRow consumes a null subtree's single entry per leaf.
func (w *walker) skipRow(n *pq.Column) error {
	if err := w.skip(n); err != nil {
		return err
	}
	return w.done(n)
}

// leafValue returns a flat leaf's value in row i.
func leafValue(w *walker, n *pq.Column, i int) (sample.Value, bool, error) {
	d := w.data[n.Index()]
	lo, hi := d.rowRange(i)
	if hi != lo+1 {
		return sample.Value{}, false, errLevels(n)
	}
	e := &d.ents[lo]
	if int(e.def) < n.MaxDefinitionLevel() || e.null {
		return sample.Value{}, false, nil
	}
	v, err := w.s.scalar(n, e, w.arena)
	return v, err == nil, err
}

// inflight is the budget of decoded page bytes shared by the row groups being read. It is
// taken in task order, so that a later row group never holds the budget an earlier one (that
// the emitter waits for) needs; one row group alone may always take it.
type inflight struct {
	mu    sync.Mutex
	limit int64
	used  int64
	next  int64 // the number of the next task to take its share
	wake  chan struct{}
}

func newInflight(limit int64) *inflight {
	return &inflight{limit: limit, wake: make(chan struct{})}
}

// acquire waits for task seq's turn and for n bytes of the budget.
func (q *inflight) acquire(ctx context.Context, seq, n int64) error {
	for {
		q.mu.Lock()
		if q.next == seq && (q.used == 0 || q.used+n <= q.limit) {
			q.used += n
			q.next++
			q.broadcast()
			q.mu.Unlock()
			return nil
		}
		wake := q.wake
		q.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// release returns n bytes to the budget.
func (q *inflight) release(n int64) {
	q.mu.Lock()
	q.used -= n
	q.broadcast()
	q.mu.Unlock()
}

func (q *inflight) broadcast() {
	close(q.wake)
	q.wake = make(chan struct{})
}
