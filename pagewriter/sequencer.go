package pagewriter

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Position is the claim state handed from chunk to chunk: the first free byte of the data
// region and the number of table rows and allocation entries claimed so far.
type Position struct {
	Cursor, Rows, Entries int64
}

// A Ticket is a chunk's place in the claim order. Tickets are issued in chunk order by one
// goroutine (the producer).
type Ticket struct {
	// Seq is the chunk's sequence number, from 0.
	Seq  int64
	succ *Ticket       // the next ticket, created one ahead
	turn chan struct{} // closed when every earlier chunk has claimed
	open atomic.Bool   // set just before turn is closed

	work  atomic.Pointer[claimWork] // published claim, run by whoever finds the turn open
	taken atomic.Bool               // the claim has been started (by exactly one goroutine)
	done  chan struct{}             // closed when the claim has run
	err   error                     // the claim's error, set before done is closed
}

type claimWork struct{ fn func() error }

// Ready returns a channel that is closed when it is the ticket's turn to claim.
func (t *Ticket) Ready() <-chan struct{} { return t.turn }

// Claimed returns a channel that is closed once the ticket's published claim has run.
func (t *Ticket) Claimed() <-chan struct{} { return t.done }

func newTicket(seq int64) *Ticket {
	return &Ticket{Seq: seq, turn: make(chan struct{}), done: make(chan struct{})}
}

// A Sequencer orders the claims of chunks without a lock. The claim state (Position) is a
// baton handed from ticket to ticket. A chunk's owner publishes its claim (a function that
// places the chunk from the current Position and calls Pass) when the chunk is encoded; the
// claim runs as soon as both the chunk is published and its predecessor has claimed, on
// whichever goroutine sees that first: the publisher, or the goroutine that just passed the
// baton, which goes on down the chain of published chunks. So a chunk waits only for its
// predecessor's claim, never for its write, and never for a busy owner. The writes run after
// the claims, in parallel, on the owners' goroutines.
type Sequencer struct {
	tail   *Ticket // the next ticket to issue
	issued int64

	cursor, rows, entries atomic.Int64

	dead   chan struct{} // closed by Fail
	failed atomic.Bool
	err    error // set once before dead is closed

	own, helped, waits, waitNanos atomic.Int64
}

// NewSequencer returns a sequencer whose first chunk claims from start.
func NewSequencer(start Position) *Sequencer {
	s := &Sequencer{tail: newTicket(0), dead: make(chan struct{})}
	s.tail.open.Store(true)
	close(s.tail.turn)
	s.cursor.Store(start.Cursor)
	s.rows.Store(start.Rows)
	s.entries.Store(start.Entries)
	return s
}

// Issue returns the next ticket. It must be called from one goroutine at a time, in chunk
// order (it is the producer's job); every issued ticket must eventually be claimed, or the
// sequencer failed.
func (s *Sequencer) Issue() *Ticket {
	t := s.tail
	t.succ = newTicket(t.Seq + 1)
	s.tail = t.succ
	s.issued++
	return t
}

// Issued returns how many tickets have been issued. Like Issue, it is for the producer.
func (s *Sequencer) Issued() int64 { return s.issued }

// Publish hands over t's claim. fn runs exactly once, with the baton held, on this or
// another goroutine; it must call Pass on success. Publish returns at once when the turn
// has not come; otherwise it runs fn, and the claims of later published chunks after it.
func (s *Sequencer) Publish(t *Ticket, fn func() error) {
	t.work.Store(&claimWork{fn})
	s.advance(t, true)
}

// advance runs the claims down the chain from t while each is published and its turn open.
// Both sides store their half first and then check the other's (atomics are sequentially
// consistent), so a claim that is published as its turn opens is always taken by one side.
func (s *Sequencer) advance(t *Ticket, own bool) {
	for t != nil && t.open.Load() {
		w := t.work.Load()
		if w == nil || !t.taken.CompareAndSwap(false, true) {
			return
		}
		if own {
			s.own.Add(1)
		} else {
			s.helped.Add(1)
		}
		own = false
		if s.failed.Load() {
			// Carry the cause, so whichever goroutine reports first reports it. Fail sets
			// s.err before it closes dead.
			<-s.dead
			t.err = fmt.Errorf("%w: %w", ErrFailed, s.err)
		} else {
			t.err = w.fn()
		}
		close(t.done)
		if t.err != nil {
			s.Fail(t.err)
			return
		}
		// Only the goroutine that ran t's claim follows t.succ: unlink it, so a ticket its
		// owner keeps does not keep every later ticket of the run alive.
		next := t.succ
		t.succ = nil
		t = next
	}
}

// Position returns the claim state. Only a claim function (holding the baton) may rely on
// it being current; others get a recent value.
func (s *Sequencer) Position() Position {
	return Position{Cursor: s.cursor.Load(), Rows: s.rows.Load(), Entries: s.entries.Load()}
}

// Pass stores the new claim state and opens the turn of t's successor. Only t's claim
// function may call it, once.
func (s *Sequencer) Pass(t *Ticket, p Position) {
	s.cursor.Store(p.Cursor)
	s.rows.Store(p.Rows)
	s.entries.Store(p.Entries)
	n := t.succ
	n.open.Store(true)
	close(n.turn)
}

// WaitClaimed blocks until t's published claim has run and returns its error, or returns
// early when ctx is done or the sequencer failed. It records the time spent blocked.
func (s *Sequencer) WaitClaimed(ctx context.Context, t *Ticket) error {
	select {
	case <-t.done:
		return t.err
	default:
	}
	start := time.Now()
	defer func() { s.waits.Add(1); s.waitNanos.Add(int64(time.Since(start))) }()
	select {
	case <-t.done:
		return t.err
	case <-s.dead:
		return s.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Fail marks the sequencer failed with err (the first error wins) and wakes every waiter.
func (s *Sequencer) Fail(err error) {
	if s.failed.CompareAndSwap(false, true) {
		s.err = err
		close(s.dead)
	}
}

// Err returns the error the sequencer failed with, or nil.
func (s *Sequencer) Err() error {
	select {
	case <-s.dead:
		return s.err
	default:
		return nil
	}
}

// AllPassed reports whether every issued ticket has claimed. Call it from the producer's
// side after the workers are done.
func (s *Sequencer) AllPassed() bool { return s.tail.open.Load() }

// WaitStats describes how chunks claimed and how long their owners waited.
type WaitStats struct {
	Own      int64         // claims run by the chunk's owner as it published
	Helped   int64         // claims run by the goroutine that passed the baton
	Waited   int64         // times an owner blocked for its chunk's claim
	WaitTime time.Duration // total time blocked, summed over owners
}

// Stats returns the wait statistics so far.
func (s *Sequencer) Stats() WaitStats {
	return WaitStats{Own: s.own.Load(), Helped: s.helped.Load(), Waited: s.waits.Load(), WaitTime: time.Duration(s.waitNanos.Load())}
}
