package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/internal/suggest"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/pagewriter/multipart"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/recipe"
)

// storage is where a command writes: local paths through the page writer's files, bucket URLs
// (s3://, gs://, az://) through one objstore client (docs/STORAGE.md, "Writing").
type storage struct {
	client *objstore.Client
	// abortOlderThan: before uploading to a key, incomplete uploads to that exact key started
	// more than this long ago are aborted (those of killed runs); 0 aborts them all.
	abortOlderThan time.Duration
	seed           *dedupSeed // an append's dedup table, for the run's dedup
	// cached: the output is read back at once (an append's new samples, appended to the
	// base), so it is written through the page cache whatever direct_io says.
	cached bool

	mu       sync.Mutex
	unopened map[string]*multipart.Sink // uploads reattached (reattach) that no writer opened yet
}

func newStorage() *storage { return &storage{client: objstore.New()} }

func (s *storage) Close() error { return s.client.Close() }

// localFile reports whether the output name is a local file (a plain path or a file:// URL)
// rather than an object in a bucket: the capability of its objstore.Target. Reads, lists,
// stats and small writes never ask: they go through the client. Only the writers that need a
// file descriptor do (the page writer's unnamed temporary file, SCDL's folder, the merge's
// copy_file_range and server-side copies); a malformed URL is not local (objstore refuses
// it, naming it).
func localFile(name string) bool {
	_, ok := objstore.TargetOf(name).Path()
	return ok
}

// plainPath turns a file:// URL into the path it names; anything else is returned as is.
func plainPath(name string) string {
	if p, ok := objstore.TargetOf(name).Path(); ok {
		return p
	}
	return name
}

// checkWrite checks, before any work, that every output among names can be written: for a
// bucket, that it exists and the credentials may write there; for a local path, that its
// folder (made here when missing) takes a new file. Names that are "" are skipped.
func (s *storage) checkWrite(ctx context.Context, names ...string) error {
	for _, n := range names {
		if n == "" {
			continue
		}
		if err := s.client.MakeParents(ctx, n); err != nil {
			return err
		}
		if err := s.client.CheckWrite(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// configure points cfg at this storage for output: the client, the sink, an append's dedup
// table, and the page cache for an output that is read back at once.
func (s *storage) configure(ctx context.Context, cfg *pipeline.Config, output string) {
	cfg.Store, cfg.Sink = s.client, s.sink(ctx, output)
	s.seed.apply(cfg)
	cfg.NoDirect = cfg.NoDirect || s.cached
}

// sink returns the page writer's sink for output: nil (the local file) for a local path, a
// multipart upload for a bucket URL. The upload starts when the writer opens the sink; just
// before, the incomplete uploads a killed run left at that key are aborted.
func (s *storage) sink(ctx context.Context, output string) pagewriter.SinkOpener {
	if localFile(output) {
		return nil
	}
	start := func() (multipart.Uploader, error) {
		if _, err := s.client.AbortIncomplete(ctx, output, s.abortOlderThan); err != nil {
			return nil, err
		}
		return s.client.NewUpload(ctx, output)
	}
	return pagewriter.Multipart(ctx, output, start, uploadOptions())
}

// partSizeEnv sets the first parts' size of an upload (a size: 8MiB): a tuning knob, and
// the tests' way to make small parts.
const partSizeEnv = "CONVERT_UPLOAD_PART_SIZE"

// uploadOptions are the multipart options of an output upload: the defaults, or the part
// size partSizeEnv gives (also the minimum, when below the store's usual one).
func uploadOptions() multipart.Options {
	var opt multipart.Options
	if n, err := recipe.ParseSize(os.Getenv(partSizeEnv)); err == nil && n > 0 {
		opt.PartSize, opt.MinPartSize = n, min(n, multipart.DefaultMinPartSize)
	}
	return opt
}

// reattach returns pipeline.Resume.Reattach for output: it reattaches the upload a
// checkpoint names, lists its parts and checks them against the checkpoint (aborting the
// upload when they differ). The incomplete uploads of killed runs are not aborted first, as
// for a new upload: the one resumed is among them.
func (s *storage) reattach(output string) func(context.Context, pagewriter.UploadState) (pagewriter.SinkOpener, error) {
	return func(ctx context.Context, u pagewriter.UploadState) (pagewriter.SinkOpener, error) {
		up, parts, err := s.client.ResumeUpload(ctx, output, u.ID)
		if err != nil {
			return nil, err
		}
		sink, err := multipart.Resume(ctx, up, output, u.Stream, uploadOptions(), parts, u.Parts)
		if err != nil {
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			if aerr := up.Abort(actx); aerr != nil {
				err = fmt.Errorf("%w (and aborting it: %w)", err, aerr)
			}
			return nil, err
		}
		s.mu.Lock()
		if s.unopened == nil {
			s.unopened = map[string]*multipart.Sink{}
		}
		s.unopened[output] = sink
		s.mu.Unlock()
		return func(l pagewriter.SinkLayout) (pagewriter.Sink, error) {
			s.mu.Lock()
			delete(s.unopened, output) // the writer's now: it aborts or keeps it
			s.mu.Unlock()
			if l.Stream != u.Stream {
				sink.Abort()
				return nil, fmt.Errorf("resume the upload of %s: its data starts at %d, the checkpoint's at %d: %w", output, l.Stream, u.Stream, multipart.ErrResume)
			}
			return sink, nil
		}, nil
	}
}

// abortUnopened aborts the uploads the run reattached but never opened (it failed between
// the reattachment and its writer's start: the rejects file, the dedup table, the writer),
// unless the checkpoint that names them is still there (state: pipeline.Resume.State),
// kept for the next run to reattach them again. A run that failed for another reason than
// an interruption removed its checkpoint: nothing else would abort the upload, which would
// wait for --abort-incomplete-older-than or a lifecycle rule.
func (s *storage) abortUnopened(state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for output, sink := range s.unopened {
		if state != "" {
			if _, err := os.Stat(atomicfile.PartialName(state, pipeline.CheckpointSuffix)); err == nil {
				continue
			}
		}
		sink.Abort()
		delete(s.unopened, output)
	}
}

// writeSmall writes b at path atomically through the client: a bucket object that appears
// whole, or a local file (internal/atomicfile) in a folder made when missing.
func (s *storage) writeSmall(ctx context.Context, path string, b []byte) error {
	if err := s.client.MakeParents(ctx, path); err != nil {
		return err
	}
	return s.client.WriteFile(ctx, path, b)
}

// maxSmall bounds the small objects read back (completion records).
const maxSmall = 16 << 20

// readSmall reads a small file or object whole (a named pipe is refused, never waited on).
func (s *storage) readSmall(ctx context.Context, path string) ([]byte, error) {
	return s.client.ReadFile(ctx, path, maxSmall)
}

// storageSubcommands are the words convert storage takes first.
func storageSubcommands() []string { return []string{"ls-incomplete", "abort-incomplete"} }

// cmdStorage runs the storage subcommands: ls-incomplete and abort-incomplete.
func cmdStorage(ctx context.Context, args []string, stdout, _ io.Writer) error {
	const synopsis = "storage ls-incomplete PREFIX_URL | storage abort-incomplete URL [--older-than D]"
	fs := flag.NewFlagSet("storage", flag.ContinueOnError)
	olderThan := new(time.Duration)
	durationVar(fs, olderThan, "older-than", "abort-incomplete: only uploads started more than this long ago (e.g. 24h; 0 = all)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageErr("storage", synopsis)
	}
	sub, url := pos[0], pos[1]
	if !slices.Contains(storageSubcommands(), sub) {
		hint := ""
		if s := suggest.Closest(sub, storageSubcommands()); s != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", s)
		}
		return fmt.Errorf("%w: storage: unknown subcommand %s%s: convert %s", errUsage, quote.Q(sub), hint, synopsis)
	}
	st := newStorage()
	defer st.Close()
	switch sub {
	case "ls-incomplete":
		list, err := st.client.ListIncomplete(ctx, url)
		if err != nil {
			return err
		}
		for _, u := range list {
			started := "unknown"
			if !u.Initiated.IsZero() {
				started = u.Initiated.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(stdout, "%s\tstarted %s\tupload %s\n", u.URL, started, u.ID)
		}
		fmt.Fprintf(stdout, "%d incomplete uploads under %s\n", len(list), url)
		return nil
	case "abort-incomplete":
		n, err := st.client.AbortIncomplete(ctx, url, *olderThan)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "aborted %d incomplete uploads to %s\n", n, url)
		return nil
	}
	return usageErr("storage", synopsis)
}
