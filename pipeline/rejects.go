package pipeline

import (
	"bufio"
	"context"
	"fmt"

	"github.com/mldf/convert/objstore"
)

// rejectsFile is the rejects JSONL being written: an objstore.Writer, so that a local path
// and a bucket URL are one code path (a temporary file renamed at close, or an object that
// appears at close).
type rejectsFile struct {
	obj   *objstore.Writer
	store *objstore.Client
	ctx   context.Context
	w     *bufio.Writer
	path  string
	lines bool // a line was written
}

func openRejects(ctx context.Context, store *objstore.Client, path string) (*rejectsFile, error) {
	obj, err := store.Create(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("rejects file: %w", err)
	}
	return &rejectsFile{obj: obj, store: store, ctx: ctx, path: path, w: bufio.NewWriterSize(obj, 64<<10)}, nil
}

// write appends one line.
func (f *rejectsFile) write(line []byte) error {
	f.lines = true
	_, err := f.w.Write(line)
	return err
}

// close publishes the file if it holds a line; otherwise it discards it and removes an older
// rejects file at the path, which would describe another run. With discard (an interrupted
// run) it only discards the file, leaving the path as it was.
func (f *rejectsFile) close(discard bool) error {
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
