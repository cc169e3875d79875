package multipart

import "context"

// Sinks whose object is a local file written in place by parts (pagewriter's direct file
// sink) checkpoint without the store's help: Flush puts the bytes a checkpoint covers in
// their place, and ResumeTo starts again over a file cut at a checkpoint.

// PartBounds returns the offset and size of part k (1-based) in the sink's part layout.
func (s *Sink) PartBounds(k int) (start, size int64) { return s.sched.bounds(k) }

// Flush makes every streamed byte below upTo reach its place through write, for a
// checkpoint at upTo: the caller guarantees that every byte in [stream, upTo) has been
// delivered. It waits for the uploads of the parts below upTo in flight, then, holding the
// sink's lock (so no part buffer is released or reused meanwhile), calls write(off, b) for
// each part still held (not complete, or part 1 and the straddling part, kept until Commit)
// with its bytes in [stream, upTo): b lies in the part's buffer, and writers may go on
// filling the same buffer beyond upTo while write runs. Those parts are sent again whole
// when complete.
func (s *Sink) Flush(upTo int64, write func(off int64, b []byte) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.err != nil {
			return s.err
		}
		busy := false
		for k, q := range s.parts {
			if start, _ := s.sched.bounds(k); q.started && start < upTo {
				busy = true
				break
			}
		}
		if !busy {
			break
		}
		s.cond.Wait()
	}
	for k, q := range s.parts {
		start, size := s.sched.bounds(k)
		lo, hi := max(start, s.stream), min(start+size, upTo)
		if lo >= hi {
			continue
		}
		select {
		case <-q.ready:
		default:
			continue // no byte of it was delivered yet: nothing below upTo lies in it
		}
		if err := write(lo, q.buf[lo-start:hi-start]); err != nil {
			return s.failLocked(err)
		}
	}
	return nil
}

// ResumeTo returns a sink, like New, over an object whose bytes in [stream, end) are in
// place already (a local file cut at a checkpoint): every streamed part that ends at or
// before end is done. The caller delivers again the streamed bytes before FirstStart (part
// 1's, the straddling part's) and those from ResumeOffset to end, then writes on from end.
func ResumeTo(ctx context.Context, u Uploader, name string, stream int64, opt Options, end int64) (*Sink, error) {
	s, err := New(ctx, u, name, stream, opt)
	if err != nil {
		return nil, err
	}
	n := 0
	for s.first+n <= s.opt.MaxParts && s.endOf(n+1) <= end {
		n++
	}
	s.restore(n)
	return s, nil
}
