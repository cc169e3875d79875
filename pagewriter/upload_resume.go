package pagewriter

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/mldf/convert/pagewriter/multipart"
)

// UploadState is what a checkpoint records of a resumable writer whose sink is a multipart
// upload: the upload's ID, the stream start the sink was opened with, and
// multipart.Sink.Uploaded's part count and end at the checkpoint. The bytes from End to the
// checkpoint's cursor are in the writer's tail file (see teeSink).
type UploadState struct {
	ID     string `json:"id"`
	Stream int64  `json:"stream"`
	Parts  int    `json:"parts"`
	End    int64  `json:"end"`
}

// teeSink is the sink of a resumable writer that uploads: every byte delivered to the
// upload is also written at its offset to a local tail file (".BASE.partial" beside the
// Partial target), so that a resumed run can deliver again what the upload had not finished
// at the checkpoint. Release punches out the file's blocks of the parts the bucket holds,
// so the file stays about two parts plus the parts in flight on disk.
type teeSink struct {
	*multipart.Sink
	tail   *Spill
	stream int64
	final  atomic.Bool // the finalizer writes: the tail file is complete
	mu     sync.Mutex
	last   UploadState // at the last Sync
}

func (t *teeSink) WriteAt(p []byte, off int64) (int, error) {
	if !t.final.Load() {
		if _, err := t.tail.WriteAt(p, off); err != nil {
			t.Sink.Abort()
			return 0, fmt.Errorf("write %s: %w", t.tail.path, err)
		}
	}
	return t.Sink.WriteAt(p, off)
}

// openTee wraps an upload sink of a resumable writer: it opens the tail file (cut to the
// checkpoint's cursor, or empty) and, on a resumed upload, delivers again the bytes from
// the upload's ResumeOffset to the cursor.
func openTee(s *multipart.Sink, l SinkLayout, staged bool, p *Partial, wrap WrapFunc) (*teeSink, error) {
	var cursor int64
	if p.From != nil && !staged {
		cursor = p.From.Position.Cursor
	}
	tail, err := openPartialSpill(p.Target, PartialSuffix, "output", cursor, wrap)
	if err != nil {
		return nil, err
	}
	t := &teeSink{Sink: s, tail: tail, stream: l.Stream}
	if p.From == nil || staged {
		// A staged data region (a .beton) reaches the sink only from the finalizer.
		return t, nil
	}
	from := s.ResumeOffset()
	if from == 0 {
		tail.Close()
		return nil, fmt.Errorf("resume the upload of %s: %w (the upload was not reattached)", s.Name(), ErrNotResumable)
	}
	// The streamed bytes the upload sends only at Commit, then those after its parts.
	err = redeliver(s, tail, l.Stream, min(cursor, s.FirstStart()))
	if err == nil {
		err = redeliver(s, tail, from, cursor)
	}
	if err != nil {
		tail.Close()
		return nil, fmt.Errorf("resume the upload of %s from %s: %w", s.Name(), tail.path, err)
	}
	return t, nil
}

// redeliver writes tail's bytes [from, to) to the sink again.
func redeliver(s *multipart.Sink, tail io.ReaderAt, from, to int64) error {
	buf := make([]byte, 4<<20)
	for off := from; off < to; {
		b := buf[:min(int64(len(buf)), to-off)]
		if _, err := tail.ReadAt(b, off); err != nil && err != io.EOF {
			return err
		}
		if _, err := s.WriteAt(b, off); err != nil {
			return err
		}
		off += int64(len(b))
	}
	return nil
}

// syncTee records the upload's state and makes the tail file durable: at a checkpoint,
// once every earlier chunk is delivered.
func (t *teeSink) sync() error {
	n, end := t.Sink.Uploaded()
	if err := t.tail.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", t.tail.path, err)
	}
	t.mu.Lock()
	t.last = UploadState{ID: t.Sink.UploadID(), Stream: t.stream, Parts: n, End: end}
	t.mu.Unlock()
	return nil
}

// Upload returns what the last Sync recorded of a resumable writer's upload, for a
// checkpoint at cursor, or nil when the writer does not upload. Parts that finished past the
// cursor (filled by chunks after the checkpoint) are not counted: a resumed run writes their
// bytes again.
func (w *Writer) Upload(cursor int64) *UploadState {
	t, ok := w.sink.(*teeSink)
	if !ok {
		return nil
	}
	t.mu.Lock()
	u := t.last
	t.mu.Unlock()
	for u.Parts > 0 && u.End > cursor {
		u.Parts--
		u.End = t.Sink.PartsEnd(u.Parts)
	}
	return &u
}

// Release tells a resumable writer that a checkpoint recording the upload state u is
// durable: the tail file's bytes below u.End (in the bucket) are no longer needed.
func (w *Writer) Release(u *UploadState) {
	t, ok := w.sink.(*teeSink)
	if !ok || u == nil {
		return
	}
	if f, ok := t.tail.File.(*os.File); ok && u.End > t.Sink.FirstStart() {
		punchHole(f.Fd(), t.Sink.FirstStart(), u.End)
	}
}
