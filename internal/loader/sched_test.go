package loader

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// allocT allocates the buffers of a batch of idx.
func allocT(t testing.TB, p *Plan, idx []int64) []Buffer {
	t.Helper()
	sizes, err := p.BatchBytes(idx)
	if err != nil {
		t.Fatal(err)
	}
	outs := p.Outputs()
	bufs := make([]Buffer, len(outs))
	for k, o := range outs {
		bufs[k].Data = make([]byte, sizes[k])
		if o.Variable {
			bufs[k].Offsets = make([]int64, len(idx)+1)
		}
	}
	return bufs
}

// TestSubmitAhead: batches submitted before the previous ones are waited for (the
// prefetch thread's pattern) come out as Run makes them one at a time, for 1 and 3 threads;
// an error in one batch stays in that batch, in order, and Stats count what was done.
func TestSubmitAhead(t *testing.T) {
	path := imageFile(t, 40, 64, 48, 17)
	batches := [][]int64{{0, 1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12, 13}, {14, 15, 16, 17, 18}, {19, 20, 21, 22, 23, 24}, {}}
	ref := openT(t, path, Options{Threads: 1})
	rp := planT(t, ref, rrcPlan)
	want := make([][]Buffer, len(batches))
	for k, idx := range batches {
		b, err := runT(t, rp, idx, 3)
		if (err != nil) != (k == 2) {
			t.Fatalf("reference batch %d: %v", k, err)
		}
		want[k] = b
	}
	for _, threads := range []int{1, 3} {
		l := openT(t, path, Options{Threads: threads})
		p := planT(t, l, rrcPlan)
		l.Stats(true)
		pend := make([]*Pending, len(batches))
		got := make([][]Buffer, len(batches))
		for k, idx := range batches {
			got[k] = allocT(t, p, idx)
			var err error
			if pend[k], err = p.Submit(context.Background(), idx, 3, got[k]); err != nil {
				t.Fatal(err)
			}
		}
		for k := range batches {
			err := pend[k].Wait()
			if k == 2 {
				if err == nil || !strings.Contains(err.Error(), "sample 17") {
					t.Fatalf("threads %d: batch 2: want the error of sample 17, got %v", threads, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("threads %d: batch %d: %v", threads, k, err)
			}
			for o := range got[k] {
				if !bytes.Equal(got[k][o].Data, want[k][o].Data) {
					t.Fatalf("threads %d: batch %d output %d differs from Run's", threads, k, o)
				}
			}
		}
		st := l.Stats(false)
		if st.Threads != threads || len(st.Workers) != threads || st.Batches != int64(len(batches)) {
			t.Fatalf("threads %d: stats %+v", threads, st)
		}
		var samples int64
		var busy float64
		for _, w := range st.Workers {
			samples += w.Samples
			busy += w.BusySeconds
			if w.Samples < 0 || w.BusySeconds < 0 {
				t.Fatalf("threads %d: worker stats %+v", threads, w)
			}
		}
		// every sample of the good batches; of the bad one at least the failing sample,
		// at most all
		if good := int64(7 + 7 + 6); st.Samples != samples || samples < good+1 || samples > good+5 {
			t.Fatalf("threads %d: %d samples decoded (workers %d)", threads, st.Samples, samples)
		}
		if st.BusySeconds != busy || busy <= 0 || st.WallSeconds <= 0 || st.RunningSeconds < 0 ||
			st.StarvedSeconds < 0 || st.WaitSeconds < 0 || st.WaitSeconds > st.WallSeconds {
			t.Fatalf("threads %d: stats %+v", threads, st)
		}
		// busy time is wall time inside the threads' decodes: it fits in their lifetime
		if st.BusySeconds > st.RunningSeconds*1.001+1e-3 || st.RunningSeconds > float64(threads)*st.WallSeconds*1.001+1e-3 {
			t.Fatalf("threads %d: busy %.4f, running %.4f, wall %.4f", threads, st.BusySeconds, st.RunningSeconds, st.WallSeconds)
		}
		if st.ProcessCPUSeconds < 0 && cpuTime() > 0 {
			t.Fatalf("threads %d: no process CPU time", threads)
		}
		checkThreadCPU(t, st)
		st = l.Stats(true)
		if st2 := l.Stats(false); st2.Samples != 0 || st2.Batches != 0 || st2.BusySeconds != 0 || st2.WallSeconds > st.WallSeconds {
			t.Fatalf("threads %d: after a reset: %+v", threads, st2)
		}
	}
}

// TestCloseWithBatchesQueued: Close drops the samples no thread has started (their Wait
// says the loader was closed), waits for the ones being decoded, and leaves no goroutine.
func TestCloseWithBatchesQueued(t *testing.T) {
	path := imageFile(t, 64, 64, 48, -1)
	l, err := Open(context.Background(), path, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	p := planT(t, l, rrcPlan)
	late := allocT(t, p, []int64{0})
	var pend []*Pending
	for k := range 8 {
		idx := make([]int64, 8)
		for j := range idx {
			idx[j] = int64(8*k + j)
		}
		b, err := p.Submit(context.Background(), idx, 0, allocT(t, p, idx))
		if err != nil {
			t.Fatal(err)
		}
		pend = append(pend, b)
	}
	l.Close()
	for k, b := range pend {
		if err := b.Wait(); err != nil && !errors.Is(err, ErrClosed) {
			t.Fatalf("batch %d: %v", k, err)
		}
	}
	if _, err := p.Submit(context.Background(), []int64{0}, 0, late); !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after Close: %v", err)
	}
	goleak.VerifyNone(t)
}

// checkThreadCPU: the decoding threads' CPU time is measured (on Linux), adds up over the
// workers, and fits in the wall time of the samples it was measured over (a thread clock
// ticks at most as fast as the wall clock; 2 ms of slack for the clocks' granularity).
func checkThreadCPU(t *testing.T, st Stats) {
	t.Helper()
	if runtime.GOOS != "linux" {
		if st.CPUSeconds != -1 {
			t.Fatalf("no thread clock here, yet cpu_seconds %v", st.CPUSeconds)
		}
		return
	}
	var cpu, cpuBusy float64
	var moved, timed int64
	for _, w := range st.Workers {
		if w.CPUSeconds < 0 || w.CPUBusySeconds < 0 || w.CPUSeconds > w.CPUBusySeconds+2e-3 {
			t.Fatalf("worker stats %+v", w)
		}
		cpu += w.CPUSeconds
		cpuBusy += w.CPUBusySeconds
		moved += w.MovedSamples
		timed += w.TimedSamples
		if w.Samples > 0 && w.TimedSamples+w.MovedSamples < (w.Samples+cpuEvery-1)/cpuEvery {
			t.Fatalf("worker timed %d and moved %d of %d samples, want one in %d", w.TimedSamples, w.MovedSamples, w.Samples, cpuEvery)
		}
	}
	if st.CPUSeconds != cpu || st.CPUBusySeconds != cpuBusy || st.MovedSamples != moved || st.TimedSamples != timed {
		t.Fatalf("totals differ from the workers' sums: %+v", st)
	}
	if timed == 0 || cpu <= 0 || cpuBusy > st.BusySeconds*1.001+1e-6 {
		t.Fatalf("thread CPU not measured: %+v", st)
	}
}
