package pagewriter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/mldf/convert/internal/atomicfile"
)

// Suffixes of a resumable writer's files, beside the target (atomicfile.PartialName): the
// output itself, and the spills of the rows, the allocation entries and a staged data region.
const (
	PartialSuffix = ".partial"
	rowsSuffix    = ".partial-rows"
	allocSuffix   = ".partial-alloc"
	stagedSuffix  = ".partial-data"
)

// ErrNotResumable is a sink that cannot be made durable at a checkpoint (an upload).
var ErrNotResumable = errors.New("pagewriter: the output cannot be checkpointed")

// Partial makes a Writer resumable: its output and spill files are named hidden files beside
// Target (".BASE.partial", ".BASE.partial-rows", ...) instead of unnamed ones, so that they
// survive a crash; Sync makes them durable at a chunk boundary, and a later Writer given the
// State recorded then continues from it. The sink must be a LocalFile with the same Target
// and FileOptions.Partial set.
type Partial struct {
	Target string
	// From, when not nil, continues the files of an earlier writer from the state a Sync
	// recorded: each file is cut to its length in that state. nil starts them empty.
	From *State
}

// State is what a checkpoint records of a Writer: the claim position after the last chunk it
// covers and the payload bytes written before it.
type State struct {
	Position Position
	Payloads int64
}

// PartialFiles returns the paths of the files a resumable writer of target keeps: the output
// first, then the spills. A finished or aborted run removes them all.
func PartialFiles(target string) []string {
	var out []string
	for _, s := range []string{PartialSuffix, rowsSuffix, allocSuffix, stagedSuffix} {
		out = append(out, atomicfile.PartialName(target, s))
	}
	return out
}

// RemovePartial removes the files PartialFiles names; missing ones are no error.
func RemovePartial(target string) error {
	var errs []error
	for _, p := range PartialFiles(target) {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// openPartialSpill opens a resumable writer's spill file, cut to keep bytes.
func openPartialSpill(target, suffix, role string, keep int64, wrap WrapFunc) (*Spill, error) {
	path := atomicfile.PartialName(target, suffix)
	f, err := atomicfile.OpenLocked(path, 0o600, keep == 0)
	if err != nil {
		return nil, fmt.Errorf("open %s scratch file: %w", role, err)
	}
	if err := f.Truncate(keep); err != nil {
		f.Close()
		return nil, fmt.Errorf("cut %s to its checkpoint: %w", path, err)
	}
	s := &Spill{File: f, path: path}
	if wrap != nil {
		s.File = wrap(f, role)
	}
	return s, nil
}

// spillLen is the length a spill of n records of size rec has at a checkpoint.
func spillLen(n int64, rec int) int64 { return n * int64(rec) }

// tracker follows which chunks have been written, for Sync: every chunk before next is.
type tracker struct {
	mu   sync.Mutex
	next int64
	out  map[int64]struct{} // written chunks at or after next
	wake chan struct{}      // closed and replaced when next moves
}

func newTracker() *tracker { return &tracker{out: map[int64]struct{}{}, wake: make(chan struct{})} }

func (t *tracker) written(seq int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if seq != t.next {
		t.out[seq] = struct{}{}
		return
	}
	t.next++
	for {
		if _, ok := t.out[t.next]; !ok {
			break
		}
		delete(t.out, t.next)
		t.next++
	}
	close(t.wake)
	t.wake = make(chan struct{})
}

// wait returns once every chunk before seq is written, or ctx is done, or dead is closed.
func (t *tracker) wait(ctx context.Context, seq int64, dead <-chan struct{}) error {
	for {
		t.mu.Lock()
		next, wake := t.next, t.wake
		t.mu.Unlock()
		if next >= seq {
			return nil
		}
		select {
		case <-wake:
		case <-dead:
			return ErrFailed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ClaimPosition returns the claim position: in a Batch's OnClaim, the position after every
// earlier chunk (the state a checkpoint at this chunk's start records).
func (w *Writer) ClaimPosition() Position { return w.seq.Position() }

// Sync waits until every chunk before chunk seq (a ticket's Seq) is written and makes the
// output and the spills durable (fsync): a checkpoint of the state recorded at chunk seq's
// claim (ClaimPosition, whose Cursor is cursor) may then be written. Later chunks may be written meanwhile; a resumed writer cuts
// them off. It needs a resumable writer (Options.Partial).
func (w *Writer) Sync(ctx context.Context, seq, cursor int64) error {
	if w.track == nil {
		return ErrNotResumable
	}
	if err := w.track.wait(ctx, seq, w.seq.dead); err != nil {
		if e := w.seq.Err(); e != nil {
			return fmt.Errorf("%w: %w", ErrFailed, e)
		}
		return err
	}
	switch s := w.sink.(type) {
	case *directSink:
		if err := s.syncTo(cursor); err != nil {
			return err
		}
	case *fileSink:
		if err := s.o.File.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", s.o.TempPath(), err)
		}
	case *teeSink:
		if err := s.sync(); err != nil {
			return err
		}
	default:
		return ErrNotResumable
	}
	for _, s := range []*Spill{w.rows, w.alloc, w.data} {
		if s != nil {
			if err := s.Sync(); err != nil {
				return fmt.Errorf("sync %s: %w", s.path, err)
			}
		}
	}
	return nil
}

// Suspend stops the writer like Abort but keeps a resumable writer's files for a later run
// (an interrupted run resumes from its last checkpoint). A writer that is not resumable is
// aborted.
func (w *Writer) Suspend() error {
	w.seq.Fail(errAborted)
	if !w.state.CompareAndSwap(0, 1) {
		return nil
	}
	if w.track == nil {
		return w.cleanup()
	}
	w.closeSpills()
	if fs, ok := w.sink.(*fileSink); ok {
		fs.stopBehind()
		return fs.o.af.Keep(fs.o.File.Close)
	}
	if ds, ok := w.sink.(*directSink); ok {
		return ds.suspend()
	}
	if t, ok := w.sink.(*teeSink); ok {
		t.Detach() // the upload stays in the bucket for the next run
		return nil
	}
	return w.sink.Abort()
}

// removeSpills removes a resumable writer's spill files (after Finish or Abort).
func (w *Writer) removeSpills() {
	for _, s := range w.spills() {
		if s != nil && s.path != "" {
			os.Remove(s.path)
		}
	}
}

// spills returns the writer's spill files, and the tail file of a resumable upload.
func (w *Writer) spills() []*Spill {
	l := []*Spill{w.rows, w.alloc, w.data}
	if t, ok := w.sink.(*teeSink); ok {
		l = append(l, t.tail)
	}
	return l
}
