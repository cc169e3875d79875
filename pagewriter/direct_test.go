//go:build linux

package pagewriter

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sync/errgroup"
)

// directOrSkip opens a direct sink at path, or skips when the test's file system has no
// direct I/O (tmpfs, some container overlays): the buffered sink then writes, as tested
// elsewhere.
func directOrSkip(t *testing.T, path string, l SinkLayout, opt FileOptions) *directSink {
	t.Helper()
	s, err := LocalFile(path, opt)(l)
	if err != nil {
		t.Fatal(err)
	}
	ds, ok := s.(*directSink)
	if !ok {
		s.Abort()
		t.Skipf("the file system of %s takes no direct writes here (statx STATX_DIOALIGN, O_DIRECT)", filepath.Dir(path))
	}
	return ds
}

// directImage is an output's bytes as a test writes them: a header before stream, a data
// region of batches with gaps, and tables after it; size is not a multiple of any
// alignment.
type directImage struct {
	stream, size int64
	want         []byte
	batches      [][2]int64 // [from, to) of each batch in the data region, in order
	dataEnd      int64
}

func newDirectImage(stream, data, tables int64) *directImage {
	d := &directImage{stream: stream, size: stream + data + tables, dataEnd: stream + data}
	d.want = make([]byte, d.size)
	for i := range d.want {
		d.want[i] = byte(i*31 + i>>12 + 1)
	}
	for off := stream; off < d.dataEnd; {
		n := min(int64(70_000+off%333_333), d.dataEnd-off) // batches cross parts
		d.batches = append(d.batches, [2]int64{off, off + n})
		off += n
	}
	// Gaps of zeros, declared with Zero, at the end of every third batch.
	for i, b := range d.batches {
		if i%3 == 0 {
			clear(d.want[b[1]-1000 : b[1]])
		}
	}
	return d
}

// writeBatch delivers batch i as the page writer does: a gather write of pieces, then
// Zero for its gap.
func (d *directImage) writeBatch(s *directSink, i int) error {
	b := d.batches[i]
	to := b[1]
	if i%3 == 0 {
		to -= 1000
	}
	var bufs [][]byte
	for off := b[0]; off < to; {
		n := min(int64(5000+off%7000), to-off)
		bufs = append(bufs, d.want[off:off+n])
		off += n
	}
	if _, err := s.writev(bufs, b[0]); err != nil {
		return err
	}
	if to < b[1] {
		return s.Zero(to, b[1]-to)
	}
	return nil
}

// finish delivers the tables, then the header, as a finalizer does, and commits.
func (d *directImage) finish(s *directSink) error {
	for off := d.dataEnd; off < d.size; off += 1 << 20 {
		if _, err := s.WriteAt(d.want[off:min(off+1<<20, d.size)], off); err != nil {
			return err
		}
	}
	if _, err := s.WriteAt(d.want[:d.stream], 0); err != nil {
		return err
	}
	return s.Commit(d.size)
}

// Batches written in parallel (each in increasing offset order, as the writer's workers
// do), gaps, tables and the header give the file byte for byte, cut to its size.
func TestDirectSinkWrites(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		stream, data, tables int64
	}{
		{"header page of 2 MiB", 2 << 20, 37<<20 + 12345, 3<<20 + 7},
		{"stream in a later part", 6 << 20, 9<<20 + 1, 100},
		{"no header", 0, 5<<20 + 3, 4097},
		{"smaller than a part", 4096, 5000, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out")
			s := directOrSkip(t, path, SinkLayout{Stream: tc.stream}, FileOptions{})
			d := newDirectImage(tc.stream, tc.data, tc.tables)
			var g errgroup.Group
			for w := range 2 {
				g.Go(func() error {
					for i := w; i < len(d.batches); i += 2 {
						if err := d.writeBatch(s, i); err != nil {
							return err
						}
					}
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				t.Fatal(err)
			}
			if err := d.finish(s); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, d.want) {
				t.Fatalf("the file (%d bytes) differs from what was written (%d bytes)", len(got), len(d.want))
			}
		})
	}
}

// A checkpoint (Writer.Sync -> syncTo) puts every byte below its cursor on disk, though
// the parts holding them are not complete; a run resumed from the file cut there (Keep)
// writes on and gives the file an uninterrupted run gives.
func TestDirectSinkResume(t *testing.T) {
	d := newDirectImage(2<<20, 23<<20+999, 1<<20+5)
	for _, cut := range []int{1, 3, 17, len(d.batches) - 1} {
		path := filepath.Join(t.TempDir(), "out")
		s := directOrSkip(t, path, SinkLayout{Stream: d.stream}, FileOptions{Partial: true})
		for i := range cut {
			if err := d.writeBatch(s, i); err != nil {
				t.Fatal(err)
			}
		}
		// A later batch is delivered too (a worker ahead of the checkpoint): it may reach
		// the disk or not; the resumed run cuts it off.
		if cut+1 < len(d.batches) {
			if err := d.writeBatch(s, cut+1); err != nil {
				t.Fatal(err)
			}
		}
		cursor := d.batches[cut][0]
		if err := s.syncTo(cursor); err != nil {
			t.Fatal(err)
		}
		partial := s.o.TempPath()
		if err := s.suspend(); err != nil {
			t.Fatal(err)
		}
		onDisk, err := os.ReadFile(partial)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(onDisk)) < cursor || !bytes.Equal(onDisk[d.stream:cursor], d.want[d.stream:cursor]) {
			t.Fatalf("cut after batch %d: the checkpointed bytes [%d, %d) are not on disk", cut, d.stream, cursor)
		}
		r := directOrSkip(t, path, SinkLayout{Stream: d.stream}, FileOptions{Partial: true, Keep: cursor})
		for i := cut; i < len(d.batches); i++ {
			if err := d.writeBatch(r, i); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.finish(r); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, d.want) {
			t.Fatalf("resumed after batch %d: the file differs from an uninterrupted run's", cut)
		}
	}
}

// Aborted, the sink leaves nothing at the target and no goroutine behind.
func TestDirectSinkAbort(t *testing.T) {
	base := runtime.NumGoroutine()
	path := filepath.Join(t.TempDir(), "out")
	s := directOrSkip(t, path, SinkLayout{Stream: 4096}, FileOptions{})
	d := newDirectImage(4096, 9<<20, 10)
	for i := range d.batches {
		if err := d.writeBatch(s, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("target after Abort: %v", err)
	}
	if n := runtime.NumGoroutine(); n > base {
		t.Fatalf("%d goroutines after Abort, %d before", n, base)
	}
}

// writeAt copies a buffer direct I/O cannot take (an unaligned address or length), and
// turns the descriptor buffered for good when the file system refuses a direct write
// (EINVAL: here an unaligned offset): the bytes land either way.
func TestDirectFileWriteAt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	s := directOrSkip(t, path, SinkLayout{}, FileOptions{})
	defer s.Abort()
	f := s.f
	buf := make([]byte, 3*f.align+1)
	for i := range buf {
		buf[i] = byte(i%251 + 1)
	}
	for _, tc := range []struct {
		name     string
		b        []byte
		off      int64
		buffered bool
	}{
		{"aligned", buf[:f.align], 0, false},
		{"unaligned address", buf[1 : 1+f.align], int64(f.align), false},
		{"unaligned length", buf[:f.align+1], 2 * int64(f.align), false},
		{"unaligned offset: buffered from now on", buf[:f.align], 5*int64(f.align) + 1, true},
	} {
		if err := f.writeAt(tc.b, tc.off); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// Read back through a descriptor of its own (the sink's is direct).
		all, err := os.ReadFile(fmt.Sprintf("/proc/self/fd/%d", f.fd))
		if err != nil {
			t.Fatalf("%s: read back: %v", tc.name, err)
		}
		if int64(len(all)) < tc.off+int64(len(tc.b)) || !bytes.Equal(all[tc.off:tc.off+int64(len(tc.b))], tc.b) {
			t.Fatalf("%s: read back differs", tc.name)
		}
		if f.buffered != tc.buffered {
			t.Fatalf("%s: buffered = %v", tc.name, f.buffered)
		}
	}
}

// A direct sink gives the run two spare Go processors while it is open (its part writes
// block holding theirs) and puts GOMAXPROCS back when it commits, aborts or is suspended.
func TestDirectSinkSpareProcs(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set in the environment: it wins, nothing is raised")
	}
	before := runtime.GOMAXPROCS(0)
	for _, end := range []string{"commit", "abort", "suspend"} {
		path := filepath.Join(t.TempDir(), "out")
		s := directOrSkip(t, path, SinkLayout{}, FileOptions{Partial: end == "suspend"})
		if got := runtime.GOMAXPROCS(0); got != before+2 {
			t.Fatalf("%s: GOMAXPROCS %d while open, want %d", end, got, before+2)
		}
		var err error
		switch end {
		case "commit":
			if _, err = s.WriteAt([]byte("x"), 0); err == nil {
				err = s.Commit(1)
			}
		case "abort":
			err = s.Abort()
		case "suspend":
			err = s.suspend()
		}
		if err != nil {
			t.Fatalf("%s: %v", end, err)
		}
		if got := runtime.GOMAXPROCS(0); got != before {
			t.Fatalf("%s: GOMAXPROCS %d after, want %d", end, got, before)
		}
	}
}
