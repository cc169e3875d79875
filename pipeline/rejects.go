package pipeline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/pagewriter"
)

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
