package pagewriter

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
)

// The write-behind does not change the file: with it on (the default of the buffered sink,
// writeback started and data synced on the way) or off, concurrent writes at disjoint
// offsets, past syncBehindStep in all, give the same file.
func TestLocalFileWriteBehind(t *testing.T) {
	const piece, pieces = 1 << 20, (syncBehindStep + 2*writeBehindStep) >> 20
	want := make([]byte, piece*pieces)
	for i := range want {
		want[i] = byte(i*7 + i>>20)
	}
	for _, opt := range []FileOptions{{NoDirect: true}, {NoDirect: true, NoWriteBehind: true}, {Preallocate: true}} {
		path := filepath.Join(t.TempDir(), "out")
		s, err := LocalFile(path, opt)(SinkLayout{})
		if err != nil {
			t.Fatal(err)
		}
		var g errgroup.Group
		for w := range 2 {
			g.Go(func() error {
				for k := pieces - 1 - w; k >= 0; k -= 2 { // from the end: out of order
					if _, err := s.WriteAt(want[k*piece:(k+1)*piece], int64(k*piece)); err != nil {
						return err
					}
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(int64(len(want))); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%+v: the file differs from what was written", opt)
		}
	}
}

// A local file takes gather writes (where the system has pwritev) unless wrapped, and the
// gathered writeRange gives the same file as the copying one.
func TestLocalFileGatherWrite(t *testing.T) {
	var items []Item
	var offs []int64
	off := int64(100)
	for i := range 500 {
		p := bytes.Repeat([]byte{byte(i*13 + 1)}, 1+(i*7919)%20000)
		items = append(items, Item{Data: p})
		offs = append(offs, off)
		off += int64(len(p) + i%4)
		if i == 250 {
			off += maxGap + 1 // a gap declared with Zero
		}
	}
	want := make([]byte, off)
	for k, it := range items {
		copy(want[offs[k]:], it.Data)
	}
	for _, tc := range []struct {
		name    string
		opt     FileOptions
		wrapped bool
	}{
		{"buffered", FileOptions{NoDirect: true}, false},
		{"wrapped", FileOptions{Wrap: func(f File, role string) File { return struct{ File }{f} }}, true},
		{"direct where the file system has it", FileOptions{}, false},
	} {
		path := filepath.Join(t.TempDir(), "out")
		s, err := LocalFile(path, tc.opt)(SinkLayout{})
		if err != nil {
			t.Fatal(err)
		}
		_, direct := s.(*directSink)
		if got := s.(vectorWriter).vectored(); got != (direct || haveWritev && !tc.wrapped) {
			t.Fatalf("%s: vectored %v", tc.name, got)
		}
		var seg []byte
		if _, err := writeRange(s, 0, off, items, offs, &seg, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(off); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: the file differs from what was written", tc.name)
		}
	}
}

// An fdatasync error seen by the write-behind fails the commit: the kernel reports a
// write-back error once per open file, so the final fsync might not see it again. Nothing
// appears at the target.
func TestWriteBehindSyncErrorFailsCommit(t *testing.T) {
	errSync := errors.New("fdatasync: input/output error")
	called := make(chan struct{}, 1)
	opt := FileOptions{NoDirect: true, syncData: func(uintptr) error {
		select {
		case called <- struct{}{}:
		default:
		}
		return errSync
	}}
	path := filepath.Join(t.TempDir(), "out")
	s, err := LocalFile(path, opt)(SinkLayout{})
	if err != nil {
		t.Fatal(err)
	}
	piece := make([]byte, 1<<20)
	const n = (syncBehindStep + 2*writeBehindStep) >> 20
	for k := range n {
		if _, err := s.WriteAt(piece, int64(k)<<20); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-called: // the write-behind synced, and failed
	case <-time.After(time.Minute):
		t.Fatal("the write-behind never synced")
	}
	if err := s.Commit(n << 20); !errors.Is(err, errSync) {
		t.Fatalf("Commit = %v, want the write-behind's error", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("target after a failed commit: %v", err)
	}
}

// The write-behind's goroutine ends with the sink, whether it commits or aborts.
func TestWriteBehindStops(t *testing.T) {
	base := runtime.NumGoroutine()
	for _, commit := range []bool{true, false} {
		s, err := LocalFile(filepath.Join(t.TempDir(), "out"), FileOptions{NoDirect: true})(SinkLayout{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.WriteAt(make([]byte, writeBehindStep+1), 0); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = s.Commit(writeBehindStep + 1)
		} else {
			err = s.Abort()
		}
		if err != nil {
			t.Fatal(err)
		}
		if n := runtime.NumGoroutine(); n > base {
			t.Fatalf("commit %v: %d goroutines after, %d before", commit, n, base)
		}
	}
}
