package pipeline

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/mldf/convert/internal/atomicfile"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pagewriter"
)

// rejectsFile is the rejects JSONL being written: an objstore.Writer, so that a local path
// and a bucket URL are one code path (a temporary file renamed at close, or an object that
// appears at close).
type rejectsFile struct {
	obj  *objstore.Writer
	part *atomicfile.File // a resumable run's rejects: a named local file that survives a crash
	// remote: the rejects path is a URL; part is a local file in the run's state (see
	// rejectsPartial), uploaded to the path at the commit.
	remote bool
	n      int64 // bytes written
	store  *objstore.Client
	ctx    context.Context
	w      *bufio.Writer
	path   string
	lines  bool // a line was written
}

func openRejects(ctx context.Context, store *objstore.Client, path string) (*rejectsFile, error) {
	obj, err := store.Create(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("rejects file: %w", err)
	}
	return &rejectsFile{obj: obj, store: store, ctx: ctx, path: path, w: bufio.NewWriterSize(obj, 64<<10)}, nil
}

// rejectsPartial names the local file holding a resumable run's rejects so far: beside a
// local rejects path (".BASE.partial"), else (a bucket URL) beside the path that stands for
// the output (the output, or Resume.State in the resume cache directory for an output in a
// bucket): ".OUT.rejects-partial".
func rejectsPartial(local, rejects string) string {
	if localPath(rejects) {
		return atomicfile.PartialName(rejects, pagewriter.PartialSuffix)
	}
	return atomicfile.PartialName(local, RejectsPartialSuffix)
}

// RejectsPartialSuffix names the local file of a resumable run's rejects bound for a bucket,
// beside the path that stands for the output (".OUT.rejects-partial").
const RejectsPartialSuffix = ".rejects-partial"

// openRejectsPartial opens the rejects of a resumable run: the named local file tmp
// (rejectsPartial) kept by an interrupted run, reopened and cut to keep bytes. A local path
// is its commit's target; a bucket URL gets the file's bytes uploaded at the commit.
func openRejectsPartial(ctx context.Context, store *objstore.Client, path, tmp string, keep int64) (*rejectsFile, error) {
	remote := !localPath(path)
	target := path
	if remote {
		target = tmp // never renamed: uploaded, then removed
	}
	af, err := atomicfile.OpenPartial(target, tmp, 0o644, keep == 0)
	if err == nil {
		if err = af.Truncate(keep); err == nil {
			_, err = af.Seek(keep, io.SeekStart)
		}
		if err != nil {
			af.Keep(af.File.Close)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("rejects file %s: %w", quote.S(path), err)
	}
	return &rejectsFile{part: af, remote: remote, store: store, ctx: ctx, path: path, n: keep, lines: keep > 0, w: bufio.NewWriterSize(af.File, 64<<10)}, nil
}

// write appends one line.
func (f *rejectsFile) write(line []byte) error {
	f.lines = true
	n, err := f.w.Write(line)
	f.n += int64(n)
	return err
}

// sync flushes the lines so far to a resumable run's file and returns its length (the
// checkpointer fsyncs it).
func (f *rejectsFile) sync() (int64, error) {
	return f.n, f.w.Flush()
}

// close publishes the file if it holds a line; otherwise it discards it and removes an older
// rejects file at the path, which would describe another run. With discard (an interrupted
// run) it only discards the file, leaving the path as it was.
func (f *rejectsFile) close(discard bool) error {
	if f.part != nil {
		return f.closePartial(discard)
	}
	if discard {
		f.obj.Abort()
		return nil
	}
	if !f.lines {
		f.obj.Abort()
		if err := f.store.Remove(context.WithoutCancel(f.ctx), f.path); err != nil {
			return fmt.Errorf("rejects file %s: remove the one of an earlier run: %w", f.path, err)
		}
		return nil
	}
	if err := f.w.Flush(); err != nil {
		f.obj.Abort()
		return fmt.Errorf("rejects file %s: %w", f.path, err)
	}
	if err := f.obj.Close(); err != nil {
		return fmt.Errorf("rejects file %s: %w", f.path, err)
	}
	return nil
}

// closePartial is close for a resumable run's file: an interrupted run keeps it for the next.
func (f *rejectsFile) closePartial(interrupted bool) error {
	if interrupted {
		f.w.Flush()
		f.part.Keep(f.part.File.Close)
		return nil
	}
	if !f.lines {
		f.part.Abort()
		if err := f.store.Remove(context.WithoutCancel(f.ctx), f.path); err != nil {
			return fmt.Errorf("rejects file %s: remove the one of an earlier run: %w", f.path, err)
		}
		return nil
	}
	if err := f.w.Flush(); err != nil {
		f.part.Abort()
		return fmt.Errorf("rejects file %s: %w", f.path, err)
	}
	if f.remote {
		return f.upload()
	}
	if err := f.part.Commit(); err != nil {
		return fmt.Errorf("rejects file %s: %w", f.path, err)
	}
	return nil
}

// upload writes a finished run's local rejects file to its bucket URL (an object that
// appears whole at the close) and removes the local file.
func (f *rejectsFile) upload() error {
	defer f.part.Abort()
	if _, err := f.part.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rejects file %s: %w", f.path, err)
	}
	obj, err := f.store.Create(f.ctx, f.path)
	if err != nil {
		return fmt.Errorf("rejects file %s: %w", f.path, err)
	}
	if _, err := io.Copy(obj, io.LimitReader(f.part.File, f.n)); err != nil {
		obj.Abort()
		return fmt.Errorf("rejects file %s: %w", f.path, err)
	}
	if err := obj.Close(); err != nil {
		return fmt.Errorf("rejects file %s: %w", f.path, err)
	}
	return nil
}
