package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/sample"
)

type runner struct {
	cfg     Config
	w       *pagewriter.Writer
	reopen  pagewriter.SinkOpener // the reattached upload of a resumed run to a bucket
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
	dd       *dedupStage   // nil without Config.Dedup
	ck       *checkpointer // nil without Config.Resume (or when the run cannot resume)
	skip     int64         // samples of the source to drop: written before a resume
	dups     int64         // duplicates found (baton-owned)
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
	var from *pagewriter.State
	if cfg.Resume != nil {
		if why := notResumable(&cfg); why != "" {
			r.log.Warn("the run cannot be resumed if killed: " + why)
			if cfg.Resume.Log != nil {
				fmt.Fprintf(cfg.Resume.Log, "convert: %s: the run cannot be resumed if killed: %s\n", cfg.Output, why)
			}
		} else {
			if from, err = r.openResume(ctx); err != nil {
				return Report{}, err
			}
			cfg.Source = r.cfg.Source
			defer func() {
				if r.ck.table != nil { // reopened, then not used: an error came first
					r.ck.table.Keep()
				}
			}()
			defer func() {
				r.ck.finish(r.local(), cfg.RejectsPath, err == nil, ctx.Err() != nil)
			}()
		}
	}
	if cfg.RejectsPath != "" {
		store := cfg.Store
		if store == nil {
			store = objstore.New()
			defer store.Close()
		}
		var rej *rejectsFile
		var oerr error // not err: the deferred close below sets the named result
		if r.ck != nil {
			var keep int64
			if r.ck.from != nil {
				keep = r.ck.from.RejectsLen
			}
			rej, oerr = openRejectsPartial(ctx, store, cfg.RejectsPath, rejectsPartial(r.local(), cfg.RejectsPath), keep)
			if rej != nil {
				r.ck.rejects = rej.part.File
			}
		} else {
			rej, oerr = openRejects(ctx, store, cfg.RejectsPath)
		}
		if oerr != nil {
			return Report{}, oerr
		}
		r.rejects = rej
		defer func() {
			// An interrupted run leaves nothing behind, not even its rejects so far.
			if cerr := rej.close(ctx.Err() != nil); cerr != nil && err == nil {
				err = cerr
			}
		}()
	}
	if cfg.Dedup != nil {
		closeDedup, derr := r.openDedup(&cfg)
		if derr != nil {
			return Report{}, derr
		}
		defer func() {
			keep := r.ck != nil && err != nil && ctx.Err() != nil && r.ck.number > 0
			if cerr := closeDedup(keep); cerr != nil && err == nil {
				err = fmt.Errorf("dedup: %w", cerr)
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
	wopt := pagewriter.Options{Wrap: cfg.wrap}
	if open != nil && r.ck != nil {
		wopt.Partial = &pagewriter.Partial{Target: r.local(), From: from}
		if r.reopen != nil {
			open = r.reopen
		}
	}
	if open == nil {
		fopt := pagewriter.FileOptions{Wrap: cfg.wrap, NoDirect: cfg.NoDirect}
		if r.ck != nil {
			fopt.Partial = true
			if from != nil && c.Layout().DataStart >= 0 {
				fopt.Keep = from.Position.Cursor
			}
			wopt.Partial = &pagewriter.Partial{Target: cfg.Output, From: from}
		}
		localFile := cfg.localFile
		if localFile == nil {
			localFile = pagewriter.LocalFile
		}
		open = localFile(cfg.Output, fopt)
	}
	if r.w, err = pagewriter.New(open, c, wopt); err != nil {
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
		if r.ck != nil && ctx.Err() != nil && r.ck.number > 0 {
			r.w.Suspend() // the next run resumes from the last checkpoint
		} else {
			r.w.Abort()
		}
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
	if r.ck != nil {
		g.Go(func() (err error) {
			defer catch("the checkpointer", &err)
			return r.checkpoints(gctx)
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
