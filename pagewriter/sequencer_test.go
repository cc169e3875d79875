package pagewriter

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"golang.org/x/sync/errgroup"
)

// TestSequencerOrder publishes many tickets from several goroutines in scrambled order: every
// claim runs exactly once, in ticket order, and no claim is lost (a lost wake-up would hang).
func TestSequencerOrder(t *testing.T) {
	const n = 20000
	s := NewSequencer(Position{})
	tickets := make([]*Ticket, n)
	for i := range tickets {
		tickets[i] = s.Issue()
	}
	order := make([]int64, 0, n) // appended only by claims, which run one at a time
	g, ctx := errgroup.WithContext(context.Background())
	const workers = 8
	for w := range workers {
		g.Go(func() error {
			// Worker w owns tickets w, w+8, ...; it publishes them in pairs swapped.
			var mine []*Ticket
			for i := w; i < n; i += workers {
				mine = append(mine, tickets[i])
			}
			for i := 0; i+1 < len(mine); i += 2 {
				mine[i], mine[i+1] = mine[i+1], mine[i]
			}
			for k, tk := range mine {
				s.Publish(tk, func() error {
					p := s.Position()
					if p.Rows != tk.Seq {
						return errors.New("claim out of order")
					}
					order = append(order, tk.Seq)
					s.Pass(tk, Position{Rows: p.Rows + 1})
					return nil
				})
				if k%3 == 0 {
					runtime.Gosched()
				}
			}
			for _, tk := range mine {
				if err := s.WaitClaimed(ctx, tk); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if !s.AllPassed() || len(order) != n {
		t.Fatalf("%d claims, all passed %v", len(order), s.AllPassed())
	}
	st := s.Stats()
	if st.Own+st.Helped != n {
		t.Fatalf("stats %+v", st)
	}
}

func TestSequencerFail(t *testing.T) {
	s := NewSequencer(Position{})
	a, b := s.Issue(), s.Issue()
	boom := errors.New("boom")
	s.Publish(b, func() error { t.Error("claim after a failure ran"); return nil })
	s.Publish(a, func() error { return boom })
	if err := s.WaitClaimed(context.Background(), a); !errors.Is(err, boom) {
		t.Fatalf("a: %v", err)
	}
	if err := s.WaitClaimed(context.Background(), b); !errors.Is(err, boom) {
		t.Fatalf("b: %v", err)
	}
	if s.AllPassed() {
		t.Fatal("all passed after a failure")
	}
}
