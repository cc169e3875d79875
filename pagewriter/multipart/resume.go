package multipart

import (
	"context"
	"errors"
	"fmt"
)

// Resuming an interrupted upload (docs/STORAGE.md, "Resuming an upload"):
//
//  1. While writing, the caller stores the upload's ID (objstore Upload.ID) and, at each
//     checkpoint, Sink.Uploaded: the number N of parts, counted from the sink's first
//     streamed part, whose uploads have finished, and the offset where part N ends.
//  2. After a crash it reattaches (objstore Client.ResumeUpload(ctx, target, id): the upload
//     and the parts the store lists) and calls Resume with the N it stored: Resume checks
//     the listed parts against the part layout (every part First()..N listed, each of its
//     size: a mismatch is ErrResume, and the caller aborts the upload and starts over),
//     forgets the parts listed above N (uploaded after the checkpoint: they are uploaded
//     again) and returns a sink on which those parts are done.
//  3. The caller writes again from the offset where part N ends (ResumeOffset) to the end,
//     and the finalizer's bytes before the stream start, as for a new sink; Commit uploads
//     part 1 and completes. The object is the one an uninterrupted upload makes.

// Part is one part of an upload as the store lists it.
type Part struct {
	Number int    // 1-based
	Size   int64  // bytes
	ETag   string // the store's tag of the part ("" where the store has none)
}

// Forgetter is an upload reattached after a crash (objstore.Upload) that can drop the
// listed parts above a number from what Complete assembles.
type Forgetter interface {
	// Forget drops the parts numbered above n that the store listed when the upload was
	// resumed and that were not uploaded again since.
	Forget(n int)
}

// ErrResume reports listed parts that are not those the caller expects: abort the upload
// and start over.
var ErrResume = errors.New("multipart: the upload's parts are not those expected")

// Expect checks parts (as listed) against want, the sizes of parts from, from+1, ... the
// caller recorded: each must be listed, with that size. Parts outside that range are not
// checked (the caller uploads them again).
func Expect(parts []Part, from int, want []int64) error {
	got := make(map[int]int64, len(parts))
	for _, p := range parts {
		got[p.Number] = p.Size
	}
	for i, w := range want {
		k := from + i
		s, ok := got[k]
		switch {
		case !ok:
			return fmt.Errorf("%w: part %d is not in the store (%d parts listed, %d expected from part %d)", ErrResume, k, len(parts), len(want), from)
		case s != w:
			return fmt.Errorf("%w: part %d is %d bytes in the store, %d expected", ErrResume, k, s, w)
		}
	}
	return nil
}

// First returns the number of the sink's first streamed part: the first part Uploaded
// counts and Resume restores (part 1, and the part that straddles the stream start, are
// uploaded only at Commit).
func (s *Sink) First() int { return s.first }

// Uploaded returns n, the number of parts First(), First()+1, ... whose uploads have all
// finished, and end, the offset where the last of them ends (the stream start's part
// boundary when n is 0). A checkpoint stores n; bytes before end need not be written again
// after Resume.
func (s *Sink) Uploaded() (n int, end int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.isFinished(s.first + n) {
		n++
	}
	return n, s.endOf(n)
}

// endOf returns where the n-th streamed part ends (where streamed part 1 starts for n = 0).
func (s *Sink) endOf(n int) int64 {
	start, size := s.sched.bounds(s.first + max(n-1, 0))
	if n == 0 {
		return start
	}
	return start + size
}

func (s *Sink) isFinished(k int) bool {
	return k <= s.opt.MaxParts && s.finished[k/64]&(1<<(k%64)) != 0
}

// ResumeOffset returns where the caller writes again after Resume: the end of the parts it
// restored.
func (s *Sink) ResumeOffset() int64 { return s.resumed }

// Resume returns a sink, like New, over an upload that was interrupted after its parts
// First()..First()+n-1 were uploaded (n from Sink.Uploaded at the caller's last
// checkpoint). parts are those the store lists (objstore Client.ResumeUpload): each of those
// n parts must be listed with the size the part layout gives it, else ErrResume (the
// caller then aborts the upload and starts over). Parts listed above them are forgotten (u
// is a Forgetter) and uploaded again. Write again from ResumeOffset on.
func Resume(ctx context.Context, u Uploader, name string, stream int64, opt Options, parts []Part, n int) (*Sink, error) {
	s, err := New(ctx, u, name, stream, opt)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Sink, error) {
		s.stop()
		s.cancel()
		return nil, fmt.Errorf("resume the upload of %s: %w", name, err)
	}
	if n < 0 || s.first+n-1 > s.opt.MaxParts {
		return fail(fmt.Errorf("%w: %d parts", ErrResume, n))
	}
	want := make([]int64, n)
	for i := range want {
		_, want[i] = s.sched.bounds(s.first + i)
	}
	if err := Expect(parts, s.first, want); err != nil {
		return fail(err)
	}
	if f, ok := u.(Forgetter); ok {
		f.Forget(s.first + n - 1)
	}
	s.restore(n)
	return s, nil
}

// restore marks the streamed parts First()..First()+n-1 uploaded.
func (s *Sink) restore(n int) {
	for i := range n {
		k := s.first + i
		s.done[k/64] |= 1 << (k % 64)
		s.finished[k/64] |= 1 << (k % 64)
	}
	s.low = s.first + n
	s.resumed = s.endOf(n)
	s.uploaded = n
}

// UploadID returns the ID of the sink's upload, the one a checkpoint stores for
// Client.ResumeUpload: the Uploader's ID() when it has one, else "".
func (s *Sink) UploadID() string {
	if u, ok := s.u.(interface{ ID() string }); ok {
		return u.ID()
	}
	return ""
}

// Detach stops the sink like Abort but leaves the upload and its finished parts in the
// store, for a later run to Resume: the uploads in flight are cancelled and waited for.
// After Commit or Abort it does nothing.
func (s *Sink) Detach() {
	s.mu.Lock()
	state := s.state
	if state == 0 {
		s.failLocked(fmt.Errorf("%s %s: %w", s.opt.Verb, s.name, ErrAborted))
		s.state = 2
	}
	s.mu.Unlock()
	if state != 0 {
		return
	}
	s.abortOnce.Do(func() {
		s.stop()
		s.cancel()
		s.g.Wait()
		s.mu.Lock()
		s.free, s.parts = nil, nil
		s.mu.Unlock()
	})
}

// FirstStart returns where part First() starts. The streamed bytes before it (in part 1 or
// the part straddling the stream start) are uploaded only at Commit: a resumed sink needs
// them written again, as well as those from ResumeOffset on.
func (s *Sink) FirstStart() int64 { return s.endOf(0) }

// PartsEnd returns where the n-th streamed part (First()+n-1) ends: the end Uploaded would
// report with n parts (FirstStart for 0). A checkpoint whose cursor is below Uploaded's end
// (parts after it finished meanwhile) stores the largest n whose end is at most the cursor.
func (s *Sink) PartsEnd(n int) int64 { return s.endOf(n) }
