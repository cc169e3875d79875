// Package pipeline runs a conversion: one producer reads samples from a source and cuts them
// into chunks, a pool of workers encodes the chunks' fields, and the page writer places and
// writes them, so that the output is the same bytes for any worker count. It applies the
// error policy (skip or fail, error budgets, the rejects file) and reports progress.
package pipeline

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// Errors returned by Run, wrapped with context.
var (
	ErrConfig        = errors.New("pipeline: invalid configuration")
	ErrTooManyErrors = errors.New("pipeline: too many rejected samples")
	ErrMissingColumn = errors.New("missing column")
	// ErrEmpty means a run that would write no sample (an empty source, every sample
	// rejected or filtered) and does not allow it (Config.AllowEmpty): nothing is written.
	ErrEmpty = errors.New("pipeline: no sample to write")
	// ErrAllRejected means the first LeadRejects samples of a run were all rejected for the
	// same reason: the run stops there rather than reject the rest one by one.
	ErrAllRejected = errors.New("pipeline: every sample rejected so far")
	// ErrPanic marks a run stopped by a panic in the tool's own code (a bug, never a bad
	// sample): the error is a *PanicError carrying the panic's value and stack.
	ErrPanic = errors.New("pipeline: internal error (panic)")
)

// PanicError is the error of a run stopped by a panic in our code: an encoder's, a source's
// or the pipeline's. A panic of a third-party decoder on a sample's bytes does not get here:
// the encoder turns it into the sample's error (encoders.Guard).
type PanicError struct {
	Where string // what was running: the field and the sample, the source, a worker
	Value any    // what the code panicked with
	Stack []byte // the panicking goroutine's stack
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("%v in %s: %v (please report this bug)\n%s", ErrPanic, e.Where, e.Value, e.Stack)
}

// Unwrap returns ErrPanic and, when the code panicked with an error (a runtime.Error), it.
func (e *PanicError) Unwrap() []error {
	if err, ok := e.Value.(error); ok {
		return []error{ErrPanic, err}
	}
	return []error{ErrPanic}
}

// catch turns a panic of the calling goroutine into *err, a *PanicError naming where; it is
// deferred by every goroutine of a run, so that a bug fails the run (its output and rejects
// aborted) with its stack rather than crashing the process or rejecting a sample.
func catch(where string, err *error) {
	if p := recover(); p != nil {
		*err = &PanicError{Where: where, Value: p, Stack: debug.Stack()}
	}
}

// DefaultChunkSize is the number of samples per chunk when Config.ChunkSize is 0, for samples
// of at least 4 KiB of input; a chunk of smaller samples grows until it holds minChunkBytes of
// input or maxAutoChunk samples, so that tiny samples (a JSONL line, a thumbnail) do not pay
// a chunk's claim and hand-over for every 64 of them.
const DefaultChunkSize = 64

// Bounds of the default (adaptive) chunk.
const (
	minChunkBytes = 256 << 10
	maxAutoChunk  = 1024
)

// Bounds of Config.Workers and Config.ChunkSize: each worker holds up to maxPending+1 chunks
// and the queue one per worker, so samples in flight are at most about
// 6 × MaxWorkers × MaxChunkSize slots (about 100 bytes each, plus the samples' data).
const (
	MaxWorkers   = 1024
	MaxChunkSize = 16384
)

// A worker keeps up to maxPending encoded chunks (and at most maxPendingBytes of their
// payloads) while their turn to claim has not come, and goes on encoding; beyond that it
// blocks (back-pressure). With chunks cut at maxChunkBytes of input, memory stays bounded by
// about workers × (maxPending+1) chunks plus the queue.
const (
	maxPending      = 4
	maxPendingBytes = 64 << 20
	maxChunkBytes   = 16 << 20
)

// LeadRejects is how many samples a run rejects for one reason (and field), from its first
// sample on with none written, before it stops with ErrAllRejected: a recipe that does not
// fit its data (a column the source does not have) fails in seconds, not after 10^8
// rejects.
const LeadRejects = 1000

// progressEvery is the interval between Progress calls.
const progressEvery = 500 * time.Millisecond

// Binding maps a source column to an output field.
type Binding struct {
	Field  encoders.Field
	Column string
	// Optional makes a missing column an empty payload (or a zero value) instead of a
	// rejected sample.
	Optional bool
}

// ErrorPolicy says what a bad sample does to the run.
type ErrorPolicy int

// Error policies.
const (
	Skip ErrorPolicy = iota // leave the sample out, record it, go on (the default)
	Fail                    // fail the run at the first bad sample
)

// String returns "skip" or "fail".
func (p ErrorPolicy) String() string {
	if p == Fail {
		return "fail"
	}
	return "skip"
}

// ParseErrorPolicy parses "skip" or "fail" ("" is skip).
func ParseErrorPolicy(s string) (ErrorPolicy, error) {
	switch s {
	case "", "skip":
		return Skip, nil
	case "fail":
		return Fail, nil
	}
	return Skip, fmt.Errorf("%w: on_error %q (want skip or fail)", ErrConfig, s)
}

// Config describes one conversion.
type Config struct {
	Source sources.Source
	Fields []Binding
	Output string
	// PageSize of the output; 0 means manifest.DefaultPageSize.
	PageSize int
	// Workers encoding in parallel; 0 means runtime.NumCPU().
	Workers int
	// ChunkSize is the number of consecutive samples a worker encodes and claims at once;
	// 0 means adaptive: DefaultChunkSize samples, or up to 1024 while they account for less
	// than 256 KiB of input. A chunk also ends once its samples account for 16 MiB of input.
	// With a sources.BatchSource (JSONL), adaptive chunks are its batches, decoded by the
	// workers into memory they reuse. The output does not depend on it.
	ChunkSize int
	// Checksums stores CRC-32C per payload and the header checksum (the command's default).
	Checksums bool
	// OnError is the policy for bad samples.
	OnError ErrorPolicy
	// AllowEmpty lets a run that writes no sample succeed with an empty output; otherwise
	// such a run fails with ErrEmpty and writes nothing (the recipe's allow_empty).
	AllowEmpty bool
	// MaxErrors fails the run when more samples than this are rejected; 0 means no limit.
	MaxErrors int64
	// MaxErrorFraction fails the run when the rejected fraction exceeds it; 0 means no limit.
	// It is checked as soon as it is certain (when the source knows its length) and at the end.
	MaxErrorFraction float64
	// RejectsPath, when set, receives one JSON line per rejected or filtered sample:
	// {"origin","key","field","reason","error"}, in sample order. It is written like the
	// output (a temporary file renamed at the end, so kill -9 leaves nothing at the path) and
	// published when the run ends, failed or not, if it holds a line; a run that rejected
	// nothing leaves no rejects file (and removes one an earlier run left at the path).
	// A bucket URL (s3://, gs://, az://) is written through Store, as one object that
	// appears only when complete.
	RejectsPath string
	// Store writes a RejectsPath that is a bucket URL; nil means a client of Run's own
	// (objstore.New), made only when needed.
	Store *objstore.Client
	// Progress, when set, is called about every 500ms from one goroutine, and once at the end.
	Progress func(Progress)
	// Logger receives warnings about rejected samples; nil discards them.
	Logger *slog.Logger
	// Container creates the output's container; nil means MLDF (mldf.NewContainer).
	// beton.NewContainer writes FFCV's .beton.
	Container mldf.ContainerFunc
	// Sink opens where the output's bytes go; nil means the local file at Output
	// (pagewriter.LocalFile). pagewriter.Multipart uploads them to object storage; Output
	// then only names the output in messages and the report.
	Sink pagewriter.SinkOpener

	// wrap injects faults into the writer's files (tests).
	wrap pagewriter.WrapFunc
}

// Progress is a snapshot of a running conversion.
type Progress struct {
	Done, Total, Rejected int64 // Total is -1 when the source does not know its length
	BytesIn, BytesOut     int64
	Elapsed               time.Duration
}

// Report summarises a finished (or failed) conversion.
type Report struct {
	Output          string
	Samples         int64            // rows written
	Rejected        int64            // samples left out by errors (the error policy counts these)
	Filtered        int64            // samples left out by a field's options (encoders.ErrFiltered)
	RejectsByReason map[string]int64 // both, by reason ("filtered" for Filtered)
	BytesIn         int64            // input bytes the sources accounted for
	BytesOut        int64            // output file size
	PayloadBytes    int64
	Pages           int64 // pages of the data region
	Elapsed         time.Duration
	Workers         int
	ChunkSize       int // 0: adaptive (Config.ChunkSize)
	// ClaimWait is the time workers spent blocked waiting for their turn to claim while they
	// could have encoded more (summed over workers); InputWait the time they waited for
	// samples from the source; WriteTime the time in writes.
	ClaimWait, InputWait, WriteTime time.Duration
	// ClaimsOwn counts chunks claimed by their own worker as it published them, ClaimsHelped
	// those claimed by the worker that passed the baton; Waited counts the times a worker
	// blocked for its oldest chunk's claim.
	ClaimsOwn, ClaimsHelped, Waited int64
	// Fields counts, per field in Config.Fields order, the non-empty payloads written and
	// their bytes: the report's per-field figures, without reading the output back.
	Fields []FieldStats
	// SkippedFiles counts the files the source found but does not read (a .svg among
	// images), by extension: see sources.SkipCounter. nil when none, or when the source
	// does not count them.
	SkippedFiles map[string]int64
}

// FieldStats describes what one field wrote.
type FieldStats struct {
	Name         string
	Type         mldf.TypeID
	Payloads     int64
	PayloadBytes int64
}

// SampleError is a sample that could not be converted: where it came from, which field, and
// a short reason class ("decode", "missing field", "too large", ...).
// Its origin and key are copies:
// a batch's samples live in memory reused once their chunk is written, and an error may
// outlive it (returned by Run under the fail policy).
type SampleError struct {
	Origin, Key, Field, Reason string
	Err                        error

	pos int // the sample's position in its chunk
}

func (e *SampleError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: field %q: %v", quote.S(e.Origin), e.Field, e.Err)
	}
	return fmt.Sprintf("%s: %v", quote.S(e.Origin), e.Err)
}

func (e *SampleError) Unwrap() error { return e.Err }

// Reasoner is implemented by errors that know their reject reason class; sources and
// encoders may return such errors (e.g. "too many pixels", "unsupported format").
type Reasoner interface{ Reason() string }

func reasonOf(err error, fromSource bool) string {
	var r Reasoner
	switch {
	case errors.As(err, &r) && r.Reason() != "":
		return r.Reason()
	case errors.Is(err, mldf.ErrPayloadLarge):
		return "too large"
	case errors.Is(err, ErrMissingColumn):
		return "missing field"
	case errors.Is(err, fs.ErrPermission):
		return "unreadable"
	case errors.Is(err, fs.ErrNotExist):
		return "missing file"
	case fromSource:
		return "read"
	}
	return "decode"
}

// job is one chunk of consecutive samples with its claim ticket: the samples, or a batch of a
// sources.BatchSource that the worker decodes.
type job struct {
	t       *pagewriter.Ticket
	samples []sample.Sample
	batch   sources.Batch
}

// pending is an encoded chunk waiting for its turn to claim.
type pending struct {
	t    *pagewriter.Ticket
	b    *pagewriter.Batch
	rej  []*SampleError
	n    int64      // samples in the chunk, rejected included
	in   int64      // input bytes
	pays [][2]int64 // per field: non-empty payloads and their bytes
	// mem holds the samples of a decoded batch: it is reused for the next batch once the
	// chunk is written (the page writer then holds none of its payloads).
	mem sources.Memory
}

type runner struct {
	cfg     Config
	w       *pagewriter.Writer
	log     *slog.Logger
	total   int64
	start   time.Time
	rowSize int
	offs    []int // per binding: metadata struct offset in the row
	sizes   []int // per binding: metadata struct size
	hasRef  []bool

	done, rejected, bytesIn atomic.Int64
	inputWait               atomic.Int64
	workersLeft             atomic.Int32
	workersDone             chan struct{}
	// free holds chunks' sample slices, emptied once encoded, for the producer to reuse: a
	// run of tiny samples does not allocate a new slice per chunk.
	free chan []sample.Sample

	// Owned by whoever holds the claim baton (updated only in OnClaim, in chunk order).
	fields   [][2]int64 // per field: non-empty payloads and their bytes
	byReason map[string]int64
	filtered int64 // samples the fields' own options left out (baton-owned, like byReason)
	rejects  *rejectsFile
	rejErr   error
	logged   int
	// The run of rejects the run starts with (baton-owned): while lead, every sample so far
	// was rejected, leadN of them, all for leadReason in leadField.
	lead                  bool
	leadN                 int64
	leadReason, leadField string
}

// Run converts cfg.Source into cfg.Output. The output appears only when Run succeeds; on
// error or cancellation the output path is left as it was. The report is filled as far as
// the run got, also on error.
func Run(ctx context.Context, cfg Config) (rep Report, err error) {
	if err := validate(&cfg); err != nil {
		return Report{}, err
	}
	r := &runner{cfg: cfg, log: cfg.Logger, start: time.Now(), byReason: map[string]int64{},
		fields: make([][2]int64, len(cfg.Fields)), workersDone: make(chan struct{}), lead: true,
		free: make(chan []sample.Sample, 2*cfg.Workers+2)}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.total = cfg.Source.Len()
	descs := make([]mldf.FieldDesc, len(cfg.Fields))
	types := make([]mldf.TypeID, len(cfg.Fields))
	for i, b := range cfg.Fields {
		descs[i] = encoders.Descriptor(b.Field)
		types[i] = b.Field.Type()
	}
	layout, err := mldf.Layout(types)
	if err != nil {
		return Report{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	r.rowSize, r.offs = layout.Size, layout.Offsets
	for _, t := range types {
		size, ref := mldf.MetaSize(t)
		r.sizes = append(r.sizes, size)
		r.hasRef = append(r.hasRef, ref)
	}
	if cfg.RejectsPath != "" {
		store := cfg.Store
		if store == nil && isObject(cfg.RejectsPath) {
			store = objstore.New()
			defer store.Close()
		}
		rej, err := openRejects(ctx, store, cfg.RejectsPath)
		if err != nil {
			return Report{}, err
		}
		r.rejects = rej
		defer func() {
			// An interrupted run leaves nothing behind, not even its rejects so far.
			if cerr := rej.close(ctx.Err() != nil); cerr != nil && err == nil {
				err = cerr
			}
		}()
	}
	newContainer := cfg.Container
	if newContainer == nil {
		newContainer = mldf.NewContainer
	}
	c, err := newContainer(mldf.Spec{PageSize: int64(cfg.PageSize), Fields: descs,
		Checksums: cfg.Checksums, Samples: r.total})
	if err != nil {
		return Report{}, fmt.Errorf("create %s: %w", cfg.Output, err)
	}
	open := cfg.Sink
	if open == nil {
		open = pagewriter.LocalFile(cfg.Output, pagewriter.FileOptions{Wrap: cfg.wrap})
	}
	if r.w, err = pagewriter.New(open, c, pagewriter.Options{Wrap: cfg.wrap}); err != nil {
		return Report{}, err
	}

	err = r.run(ctx)
	rep = r.report()
	if err == nil {
		err = r.checkFraction(true)
	}
	if err == nil && rep.Samples == 0 && !cfg.AllowEmpty {
		err = r.emptyError(&rep)
	}
	r.logSkipped(&rep)
	if err != nil {
		r.w.Abort()
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("conversion to %s interrupted: %w", cfg.Output, err)
		}
		r.progress(&rep)
		return rep, err
	}
	res, err := r.w.Finish()
	if err != nil {
		r.progress(&rep)
		return rep, err
	}
	rep.BytesOut, rep.Pages, rep.PayloadBytes, rep.Samples = res.Size, res.Pages, res.PayloadBytes, res.Samples
	rep.Elapsed = time.Since(r.start)
	r.progress(&rep)
	return rep, nil
}

// emptyError explains a run that would write no sample.
func (r *runner) emptyError(rep *Report) error {
	why := "the source gave no sample"
	if n := r.done.Load(); n > 0 {
		why = fmt.Sprintf("the source gave %d samples: %d rejected, %d filtered", n, rep.Rejected, rep.Filtered)
	}
	if n, exts := skippedSummary(rep.SkippedFiles); n > 0 {
		why += fmt.Sprintf("; it skipped %d files it does not read (%s)", n, exts)
	}
	return fmt.Errorf("%w: %s; nothing is written to %s (allow_empty: true in a recipe writes an empty output instead)", ErrEmpty, why, r.cfg.Output)
}

// skippedSummary returns the number of skipped files and their counts by extension, as
// ".svg: 9, none: 1", the most frequent first (at most 8).
func skippedSummary(m map[string]int64) (int64, string) {
	type kv struct {
		ext string
		n   int64
	}
	var all []kv
	var total int64
	for e, n := range m {
		all = append(all, kv{e, n})
		total += n
	}
	slices.SortFunc(all, func(a, b kv) int {
		if a.n != b.n {
			return cmp.Compare(b.n, a.n)
		}
		return strings.Compare(a.ext, b.ext)
	})
	var parts []string
	for i, x := range all {
		if i == 8 {
			parts = append(parts, "...")
			break
		}
		ext := x.ext
		if ext == "" {
			ext = "no extension"
		}
		parts = append(parts, fmt.Sprintf("%s: %d", ext, x.n))
	}
	return total, strings.Join(parts, ", ")
}

// logSkipped warns, once a run has ended, about the files its source skipped.
func (r *runner) logSkipped(rep *Report) {
	if n, exts := skippedSummary(rep.SkippedFiles); n > 0 {
		what := fmt.Sprintf("%d files skipped: the source does not read them", n)
		if n == 1 {
			what = "1 file skipped: the source does not read it"
		}
		r.log.Warn(fmt.Sprintf("%s (%s)", what, exts), "skipped_files", n)
	}
}

func validate(cfg *Config) error {
	switch {
	case cfg.Source == nil:
		return fmt.Errorf("%w: no source", ErrConfig)
	case len(cfg.Fields) == 0:
		return fmt.Errorf("%w: no fields", ErrConfig)
	case cfg.Output == "":
		return fmt.Errorf("%w: no output path", ErrConfig)
	case cfg.Workers < 0, cfg.ChunkSize < 0, cfg.PageSize < 0:
		return fmt.Errorf("%w: negative workers, chunk size or page size", ErrConfig)
	case cfg.Workers > MaxWorkers, cfg.ChunkSize > MaxChunkSize:
		return fmt.Errorf("%w: %d workers and chunks of %d samples: at most %d and %d", ErrConfig,
			cfg.Workers, cfg.ChunkSize, MaxWorkers, MaxChunkSize)
	case cfg.MaxErrors < 0, cfg.MaxErrorFraction < 0, cfg.MaxErrorFraction > 1:
		return fmt.Errorf("%w: max errors must be >= 0 and the fraction in [0, 1]", ErrConfig)
	}
	for i, b := range cfg.Fields {
		if b.Field == nil {
			return fmt.Errorf("%w: field %d has no encoder", ErrConfig, i)
		}
		if b.Column == "" {
			return fmt.Errorf("%w: field %q has no column", ErrConfig, b.Field.Name())
		}
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.NumCPU()
	}
	return nil
}

// run starts the producer, the workers and the progress ticker under one errgroup and waits
// for all of them.
func (r *runner) run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	jobs := make(chan *job, r.cfg.Workers)
	g.Go(func() (err error) {
		defer catch("the source", &err)
		return r.produce(gctx, jobs)
	})
	r.workersLeft.Store(int32(r.cfg.Workers))
	for range r.cfg.Workers {
		g.Go(func() (err error) {
			defer func() {
				if r.workersLeft.Add(-1) == 0 {
					close(r.workersDone)
				}
			}()
			defer catch("a worker", &err)
			return r.work(gctx, jobs)
		})
	}
	if r.cfg.Progress != nil {
		g.Go(func() error {
			t := time.NewTicker(progressEvery)
			defer t.Stop()
			for {
				select {
				case <-gctx.Done():
					return nil
				case <-r.workersDone:
					return nil
				case <-t.C:
					r.cfg.Progress(r.snapshot())
				}
			}
		})
	}
	return g.Wait()
}

// produce runs the source and cuts its samples into chunks, issuing each chunk's ticket in
// sample order. A sources.BatchSource's batches become the chunks (with adaptive chunks):
// the workers decode them into memory they reuse.
func (r *runner) produce(ctx context.Context, jobs chan<- *job) error {
	defer close(jobs)
	if bs, ok := r.cfg.Source.(sources.BatchSource); ok && r.cfg.ChunkSize == 0 {
		err := bs.RunBatches(ctx, func(b sources.Batch) error {
			select {
			case jobs <- &job{t: r.w.Issue(), batch: b}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if err != nil && !(ctx.Err() != nil && errors.Is(err, ctx.Err())) {
			return fmt.Errorf("source: %w", err)
		}
		return err
	}
	size, auto := r.cfg.ChunkSize, r.cfg.ChunkSize == 0
	if auto {
		size = DefaultChunkSize
	}
	cur := r.samples(size)
	var sent int64 // samples handed out in chunks
	send := func() error {
		sent += int64(len(cur))
		j := &job{t: r.w.Issue(), samples: cur}
		cur = r.samples(size)
		select {
		case jobs <- j:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var bytes int64
	err := r.cfg.Source.Run(ctx, func(s sample.Sample) error {
		cur = append(cur, s)
		bytes += s.InputBytes
		full := len(cur) >= tailChunk(size, auto, r.total-sent, r.cfg.Workers)
		if auto && full && bytes < minChunkBytes {
			full = len(cur) >= maxAutoChunk
		}
		if full || bytes >= maxChunkBytes {
			bytes = 0
			return send()
		}
		return ctx.Err()
	})
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return err
		}
		return fmt.Errorf("source: %w", err)
	}
	if len(cur) > 0 {
		return send()
	}
	return nil
}

// tailChunk is the size of the chunk being cut when left samples remain from its first one
// (left < 0 or not auto: unknown, size). Near the end of a source whose length is known,
// adaptive chunks shrink to about a quarter of each worker's share of what is left, so the
// last chunks spread over all the workers rather than leaving one to finish a whole chunk
// alone (64 images of 1 ms are a 64 ms tail on one core).
func tailChunk(size int, auto bool, left int64, workers int) int {
	if !auto || left <= 0 || workers <= 1 {
		return size
	}
	share := (left + int64(4*workers) - 1) / int64(4*workers)
	if share < int64(size) {
		return int(share)
	}
	return size
}

// worker is one encoder's state: its encoded chunks, published and waiting to be claimed
// or written, in chunk order.
type worker struct {
	r         *runner
	pend      []*pending
	pendBytes int64 // payload bytes in pend
	free      []*pending
	row       []byte
	pays      [][]byte
}

// writeClaimed writes the chunks at the head of pend that have claimed their place (claims
// happen in chunk order, so the claimed ones are a prefix).
func (wk *worker) writeClaimed(ctx context.Context, block bool) error {
	for len(wk.pend) > 0 {
		p := wk.pend[0]
		if !block {
			select {
			case <-p.t.Claimed():
			default:
				return nil
			}
		}
		if err := wk.r.w.WaitClaimed(ctx, p.t); err != nil {
			return err
		}
		if err := wk.r.w.Write(p.b); err != nil {
			return err
		}
		wk.pend[0] = nil
		wk.pend = wk.pend[1:]
		wk.pendBytes -= p.b.PayloadBytes()
		p.b.Reset()
		// A ticket links to its successors: one kept here would keep every later ticket of
		// the run alive.
		p.t, p.rej = nil, p.rej[:0]
		wk.free = append(wk.free, p)
		block = false
	}
	return nil
}

// work encodes chunks and publishes them for claiming in chunk order; a chunk's claim runs
// as soon as its predecessor has claimed, on whichever goroutine sees that first, and the
// worker writes its chunks once claimed. It keeps up to maxPending unclaimed chunks and goes
// on encoding meanwhile; with more it blocks for its oldest one's claim (back-pressure).
func (r *runner) work(ctx context.Context, jobs <-chan *job) error {
	wk := &worker{r: r, row: make([]byte, r.rowSize), pays: make([][]byte, len(r.cfg.Fields))}
	for {
		full := len(wk.pend) >= maxPending || (len(wk.pend) > 0 && wk.pendBytes >= maxPendingBytes)
		if err := wk.writeClaimed(ctx, full); err != nil {
			return err
		}
		if full {
			continue
		}
		var claimed <-chan struct{}
		if len(wk.pend) > 0 {
			claimed = wk.pend[0].t.Claimed()
		}
		start := time.Now()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-claimed:
			// Neither a new chunk nor the claim was there: the worker was starved of input
			// (with input it would have gone on encoding).
			r.inputWait.Add(int64(time.Since(start)))
		case j, ok := <-jobs:
			r.inputWait.Add(int64(time.Since(start)))
			if !ok {
				for len(wk.pend) > 0 {
					if err := wk.writeClaimed(ctx, true); err != nil {
						return err
					}
				}
				return nil
			}
			var p *pending
			if n := len(wk.free); n > 0 {
				p, wk.free = wk.free[n-1], wk.free[:n-1]
			} else {
				p = &pending{b: r.w.NewBatch()}
			}
			if err := r.encode(ctx, j, p, wk); err != nil {
				return err
			}
			wk.pend = append(wk.pend, p)
			wk.pendBytes += p.b.PayloadBytes()
			r.w.Publish(p.t, p.b)
		}
	}
}

// encode encodes every sample of j into p. Bad samples become rejects; only a broken
// invariant (or cancellation) is an error.
func (r *runner) encode(ctx context.Context, j *job, p *pending, wk *worker) error {
	p.t, p.rej, p.n, p.in = j.t, p.rej[:0], int64(len(j.samples)), 0
	if p.pays == nil {
		p.pays = make([][2]int64, len(r.cfg.Fields))
	}
	clear(p.pays)
	p.b.OnClaim = func(int64) error { return r.account(p) }
	samples := j.samples
	if j.batch != nil {
		// The previous chunk in p was written: its samples' memory is free for this one.
		j.batch.Decode(&p.mem)
		j.batch, samples = nil, p.mem.Samples
		p.n = int64(len(samples))
	}
	for i := range samples {
		s := &samples[i]
		p.in += s.InputBytes
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.Err != nil {
			p.rej = append(p.rej, &SampleError{Origin: strings.Clone(s.Origin), Key: strings.Clone(s.Key), Reason: reasonOf(s.Err, true), Err: s.Err, pos: i})
			continue
		}
		e, err := r.encodeSample(s, wk.row, wk.pays)
		if err != nil {
			return err
		}
		if e != nil {
			e.pos = i
			p.rej = append(p.rej, e)
			continue
		}
		if err := p.b.Append(wk.row, wk.pays); err != nil {
			return fmt.Errorf("%s: %w", s.Origin, err)
		}
		for f, pay := range wk.pays {
			if len(pay) > 0 {
				p.pays[f][0]++
				p.pays[f][1] += int64(len(pay))
			}
		}
	}
	clear(wk.pays)
	if j.samples == nil {
		return nil // a batch: its samples stay in p.mem until p is reused
	}
	// The chunk's slice goes back to the producer, emptied so that it keeps no value alive.
	clear(j.samples)
	select {
	case r.free <- j.samples[:0]:
	default:
	}
	j.samples = nil
	return nil
}

// samples returns an empty slice for a chunk of up to size samples (it may grow past that):
// one an earlier chunk emptied, or a new one.
func (r *runner) samples(size int) []sample.Sample {
	select {
	case s := <-r.free:
		return s
	default:
		return make([]sample.Sample, 0, size)
	}
}

// encodeSample encodes one sample into row and pays: a bad sample is se. A panic of an
// encoder is a bug of ours, whatever the sample (an encoder turns a panic of a third-party
// decoder on the sample's bytes into its error, see encoders.Guard): it stops the run with
// err, a *PanicError naming the field and the sample, with the stack.
func (r *runner) encodeSample(s *sample.Sample, row []byte, pays [][]byte) (se *SampleError, err error) {
	clear(row)
	clear(pays)
	field := ""
	defer func() {
		if p := recover(); p != nil {
			se, err = nil, &PanicError{Where: fmt.Sprintf("field %q encoding sample %s", field, quote.S(s.Origin)), Value: p, Stack: debug.Stack()}
		}
	}()
	next := 0 // sources emit their columns in the order of the fields: look there first
	for f, b := range r.cfg.Fields {
		field = b.Field.Name()
		meta := row[r.offs[f] : r.offs[f]+r.sizes[f]]
		var v sample.Value
		i := s.Find(b.Column, next)
		ok := i >= 0
		if ok {
			v, next = s.Values[i].Value, i+1
		}
		if !ok || v.Kind == sample.KindNone {
			if b.Optional {
				continue
			}
			err := fmt.Errorf("%w %q", ErrMissingColumn, b.Column)
			return &SampleError{Origin: strings.Clone(s.Origin), Key: strings.Clone(s.Key), Field: b.Field.Name(), Reason: reasonOf(err, false), Err: err}, nil
		}
		payload, err := b.Field.Encode(v, meta)
		if err == nil {
			err = mldf.CheckPayloadSize(len(payload))
		}
		if err == nil && len(payload) > 0 && !r.hasRef[f] {
			err = fmt.Errorf("%s field returned a %d-byte payload", b.Field.Type(), len(payload))
		}
		if err != nil {
			return &SampleError{Origin: strings.Clone(s.Origin), Key: strings.Clone(s.Key), Field: b.Field.Name(), Reason: reasonOf(err, false), Err: err}, nil
		}
		if r.hasRef[f] {
			clear(meta[:12]) // the writer owns the payload reference
		}
		pays[f] = payload
	}
	return nil, nil
}

// account runs as a chunk claims its place, in chunk order: it counts the chunk, records its
// rejects and applies the error policy, so that errors and the rejects file do not depend on
// the worker count.
func (r *runner) account(p *pending) error {
	r.done.Add(p.n)
	r.bytesIn.Add(p.in)
	for f, c := range p.pays {
		r.fields[f][0] += c[0]
		r.fields[f][1] += c[1]
	}
	if len(p.rej) == 0 {
		return nil
	}
	for _, e := range p.rej {
		filtered := errors.Is(e.Err, encoders.ErrFiltered)
		if filtered {
			e.Reason = "filtered"
		}
		r.byReason[e.Reason]++
		if r.rejects != nil && r.rejErr == nil {
			line, _ := json.Marshal(struct {
				Origin string `json:"origin"`
				Key    string `json:"key"`
				Field  string `json:"field"`
				Reason string `json:"reason"`
				Error  string `json:"error"`
			}{quote.S(e.Origin), quote.S(e.Key), e.Field, e.Reason, e.Err.Error()})
			if err := r.rejects.write(append(line, '\n')); err != nil {
				r.rejErr = err
			}
		}
		if r.rejErr != nil {
			return fmt.Errorf("rejects file %s: %w", r.cfg.RejectsPath, r.rejErr)
		}
		if filtered {
			r.filtered++
			continue
		}
		rejected := r.rejected.Add(1)
		if r.cfg.OnError == Fail {
			return e
		}
		if m := r.cfg.MaxErrors; m > 0 && rejected > m {
			return fmt.Errorf("%w: %d rejected, more than max_errors %d (last: %w)", ErrTooManyErrors, rejected, m, e)
		}
		if r.logged < 10 {
			r.logged++
			r.log.Warn("skipped sample", "origin", e.Origin, "field", e.Field, "reason", e.Reason, "error", e.Err)
		}
	}
	if err := r.followLead(p); err != nil {
		return err
	}
	return r.checkFraction(false)
}

// followLead follows the run of rejects a run starts with, through chunk p (in chunk
// order, under the baton): the LeadRejects-th consecutive reject from the first sample on,
// all for one reason in one field, stops the run with ErrAllRejected.
func (r *runner) followLead(p *pending) error {
	if !r.lead {
		return nil
	}
	for k, e := range p.rej {
		if e.pos != k || e.Reason == "filtered" || (r.leadN > 0 && (e.Reason != r.leadReason || e.Field != r.leadField)) {
			r.lead = false // a sample written or filtered, or another reason
			return nil
		}
		r.leadReason, r.leadField = e.Reason, e.Field
		r.leadN++
		if r.leadN >= LeadRejects {
			r.lead = false
			where := ""
			if e.Field != "" {
				where = fmt.Sprintf(", field %q", e.Field)
			}
			return fmt.Errorf("%w: the first %d samples were all rejected (reason %q%s), so the run stops here rather than reject the rest one by one; the last: %w",
				ErrAllRejected, r.leadN, e.Reason, where, e)
		}
	}
	if int64(len(p.rej)) < p.n {
		r.lead = false
	}
	return nil
}

// rejectsFile is the rejects JSONL being written: a pagewriter.Output (a temporary file until
// close publishes it), or for a bucket URL an objstore.Writer (an object that appears at close).
type rejectsFile struct {
	out   *pagewriter.Output // local path
	obj   *objstore.Writer   // bucket URL
	store *objstore.Client
	ctx   context.Context
	w     *bufio.Writer
	path  string
	lines bool // a line was written
}

// isObject reports whether path is a bucket URL rather than a local path or file:// URL; a
// malformed URL counts as one (objstore refuses it): a string with a scheme is never local.
func isObject(path string) bool { return objstore.IsURL(path) }

func openRejects(ctx context.Context, store *objstore.Client, path string) (*rejectsFile, error) {
	f := &rejectsFile{store: store, ctx: ctx, path: path}
	if isObject(path) {
		obj, err := store.Create(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("rejects file: %w", err)
		}
		f.obj, f.w = obj, bufio.NewWriterSize(obj, 64<<10)
		return f, nil
	}
	if l, err := objstore.Parse(path); err == nil {
		f.path = l.Key // a file:// URL names a local path
	}
	out, err := pagewriter.CreateOutput(f.path, nil)
	if err != nil {
		return nil, fmt.Errorf("rejects file: %w", err)
	}
	f.out, f.w = out, bufio.NewWriter(io.NewOffsetWriter(out, 0))
	return f, nil
}

// write appends one line.
func (f *rejectsFile) write(line []byte) error {
	f.lines = true
	_, err := f.w.Write(line)
	return err
}

func (f *rejectsFile) abort() error {
	if f.obj != nil {
		f.obj.Abort()
		return nil
	}
	return f.out.Abort()
}

func (f *rejectsFile) commit() error {
	if f.obj != nil {
		return f.obj.Close()
	}
	return f.out.Commit()
}

// close publishes the file if it holds a line; otherwise it discards it and removes an older
// rejects file at the path, which would describe another run. With discard (an interrupted
// run) it only discards the file, leaving the path as it was.
func (f *rejectsFile) close(discard bool) error {
	if discard {
		f.abort()
		return nil
	}
	if !f.lines {
		if err := f.abort(); err != nil {
			return fmt.Errorf("rejects file %s: %w", f.path, err)
		}
		if f.obj != nil {
			if err := f.store.Remove(context.WithoutCancel(f.ctx), f.path); err != nil {
				return fmt.Errorf("rejects file %s: remove the one of an earlier run: %w", f.path, err)
			}
			return nil
		}
		if fi, err := os.Lstat(f.path); err == nil && fi.Mode()&(fs.ModeDir|fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket) == 0 {
			if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("rejects file %s: remove the one of an earlier run: %w", f.path, err)
			}
		}
		return nil
	}
	if err := f.w.Flush(); err != nil {
		f.abort()
		return fmt.Errorf("rejects file %s: %w", f.path, err)
	}
	if err := f.commit(); err != nil {
		return fmt.Errorf("rejects file %s: %w", f.path, err)
	}
	return nil
}

// checkFraction fails the run when the rejected fraction is certain to exceed the limit: at
// the end, or earlier against the source's known length.
func (r *runner) checkFraction(final bool) error {
	frac := r.cfg.MaxErrorFraction
	if frac <= 0 {
		return nil
	}
	rej := r.rejected.Load()
	var of int64
	switch {
	case final:
		of = r.done.Load()
	case r.total > 0:
		of = r.total
	default:
		return nil
	}
	if of > 0 && float64(rej) > frac*float64(of) {
		return fmt.Errorf("%w: %d of %d samples rejected, more than max_error_fraction %g", ErrTooManyErrors, rej, of, frac)
	}
	return nil
}

func (r *runner) snapshot() Progress {
	return Progress{Done: r.done.Load(), Total: r.total, Rejected: r.rejected.Load(),
		BytesIn: r.bytesIn.Load(), BytesOut: r.w.Stats().Written, Elapsed: time.Since(r.start)}
}

// report builds the report after the errgroup is done (so the baton-owned fields are safe).
func (r *runner) report() Report {
	st := r.w.Stats()
	fields := make([]FieldStats, len(r.cfg.Fields))
	for f, b := range r.cfg.Fields {
		fields[f] = FieldStats{Name: b.Field.Name(), Type: b.Field.Type(), Payloads: r.fields[f][0], PayloadBytes: r.fields[f][1]}
	}
	return Report{
		Fields: fields,
		Output: r.cfg.Output, Samples: st.Position.Rows, Rejected: r.rejected.Load(), Filtered: r.filtered,
		RejectsByReason: r.byReason, BytesIn: r.bytesIn.Load(), BytesOut: st.Written,
		PayloadBytes: st.PayloadBytes, Elapsed: time.Since(r.start),
		Workers: r.cfg.Workers, ChunkSize: r.cfg.ChunkSize, // 0: adaptive
		ClaimWait: st.Wait.WaitTime,
		InputWait: time.Duration(r.inputWait.Load()), WriteTime: st.WriteTime,
		ClaimsOwn: st.Wait.Own, ClaimsHelped: st.Wait.Helped, Waited: st.Wait.Waited,
		SkippedFiles: sources.SkippedFiles(r.cfg.Source),
	}
}

func (r *runner) progress(rep *Report) {
	if r.cfg.Progress == nil {
		return
	}
	r.cfg.Progress(Progress{Done: r.done.Load(), Total: r.total, Rejected: rep.Rejected,
		BytesIn: rep.BytesIn, BytesOut: rep.BytesOut, Elapsed: rep.Elapsed})
}
