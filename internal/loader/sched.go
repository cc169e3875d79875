package loader

import (
	"context"
	"sync"
	"time"
)

// The scheduler runs the samples of every submitted batch on the loader's threads. Batches
// are served first in, first out, one sample at a time: a thread that finishes its last
// sample of batch k takes the next one of batch k+1 at once, so there is no barrier at the end
// of a batch where threads wait for its slowest image while the caller hands the batch over
// and submits the next one. Worker goroutines start when samples are queued and end when the
// queue is empty (and Close waits for them): none outlives the work it was started for.

// batch is one submitted batch: Submit makes it, the workers decode it, Wait returns its error.
type batch struct {
	p     *Plan
	ctx   context.Context
	idx   []int64
	epoch int64
	bufs  []Buffer

	// guarded by sched.mu
	next    int   // the next position to hand out
	pending int   // positions not finished (handed out or not)
	err     error // the first error
	done    chan struct{}
}

// sched is the loader's sample queue and its statistics.
type sched struct {
	threads int

	mu      sync.Mutex
	cond    *sync.Cond // signalled when running drops to 0
	queue   []*batch   // batches with positions not handed out, in submission order
	running int        // worker goroutines alive
	slotUse []bool     // which worker slots (stats and decoder state) are taken
	workers []*worker  // per slot: decoder and scratch, reused across batches

	st       Stats
	since    time.Time     // start of the statistics period
	lastTick time.Time     // last change of running
	runNs    int64         // integral of running over time
	waitNs   int64         // time callers spent blocked in Wait
	cpuSince time.Duration // procCPU at the start of the period
	noClock  bool          // no per-thread CPU clock: the CPU figures are -1
}

func newSched(threads int) *sched {
	s := &sched{threads: threads, slotUse: make([]bool, threads), workers: make([]*worker, threads)}
	for k := range s.workers {
		s.workers[k] = &worker{}
	}
	s.cond = sync.NewCond(&s.mu)
	now := time.Now()
	s.since, s.lastTick, s.cpuSince = now, now, procCPU()
	s.st.Workers = make([]WorkerStats, threads)
	return s
}

// tick accounts the running workers up to now; called with mu held before running changes.
func (s *sched) tick(now time.Time) {
	s.runNs += int64(s.running) * int64(now.Sub(s.lastTick))
	s.lastTick = now
}

// submit queues b and starts workers up to the thread count (as many as b has samples).
func (s *sched) submit(b *batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.Batches++
	if len(b.idx) == 0 {
		close(b.done)
		return
	}
	s.queue = append(s.queue, b)
	queued := 0
	for _, q := range s.queue {
		queued += len(q.idx) - q.next
	}
	now := time.Now()
	for s.running < s.threads && s.running < queued {
		slot := 0
		for s.slotUse[slot] {
			slot++
		}
		s.slotUse[slot] = true
		s.tick(now)
		s.running++
		go s.work(slot)
	}
}

// take hands out the next sample, or returns nil (and retires the caller) when none is left.
func (s *sched) take(slot int) (*batch, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.queue) > 0 {
		b := s.queue[0]
		if b.err == nil && b.next < len(b.idx) {
			if err := b.ctx.Err(); err != nil {
				s.failLocked(b, err)
			}
		}
		if b.next >= len(b.idx) {
			s.queue[0] = nil
			s.queue = s.queue[1:]
			continue
		}
		j := b.next
		b.next++
		return b, j
	}
	s.tick(time.Now())
	s.running--
	s.slotUse[slot] = false
	if s.running == 0 {
		s.queue = nil // let the backing array go
		s.cond.Broadcast()
	}
	return nil, 0
}

// failLocked records err as b's error and drops its positions not handed out.
func (s *sched) failLocked(b *batch, err error) {
	if b.err == nil {
		b.err = err
	}
	s.doneLocked(b, len(b.idx)-b.next)
	b.next = len(b.idx)
}

func (s *sched) doneLocked(b *batch, k int) {
	b.pending -= k
	if b.pending == 0 && k > 0 {
		close(b.done)
	}
}

// cpuEvery: one sample in cpuEvery per thread is timed with the per-thread CPU clock.
const cpuEvery = 32

// finish records one decoded sample of b: its wall time, and when timed, the thread CPU and
// wall time between the marks t0 and t1 taken around it.
func (s *sched) finish(b *batch, slot int, err error, busy time.Duration, timed bool, t0, t1 threadMark) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &s.st.Workers[slot]
	w.Samples++
	w.BusySeconds += busy.Seconds()
	switch {
	case !timed:
	case t0.cpu < 0 || t1.cpu < 0:
		s.noClock = true
	case t0.tid != t1.tid:
		w.MovedSamples++
	default:
		w.TimedSamples++
		w.CPUSeconds += time.Duration(t1.cpu - t0.cpu).Seconds()
		w.CPUBusySeconds += t1.wall.Sub(t0.wall).Seconds()
	}
	s.st.Samples++
	if err != nil {
		s.failLocked(b, err)
	}
	s.doneLocked(b, 1)
}

// work is one worker goroutine: samples from the queue until it is empty. (It does not lock
// its OS thread for the per-thread CPU clock: a locked goroutine that blocks hands its
// thread over twice, and measured half the throughput on a loaded machine. A sample whose
// goroutine ended on another thread than it started on is counted as moved, not timed.)
func (s *sched) work(slot int) {
	w := s.workers[slot]
	for {
		b, j := s.take(slot)
		if b == nil {
			return
		}
		// One sample in cpuEvery is timed with the thread clock (system calls are slow in
		// some VMs: a clock read around every sample cost 11% more CPU per image in one).
		timed := w.n%cpuEvery == 0
		w.n++
		var m0, m1 threadMark
		t0 := time.Now()
		if timed {
			m0 = markThread()
		}
		err := b.p.one(w, j, b.idx[j], b.epoch, b.bufs)
		if timed {
			m1 = markThread()
		}
		s.finish(b, slot, err, time.Since(t0), timed, m0, m1)
	}
}

// wait blocks until b is decoded (or failed) and returns its error.
func (s *sched) wait(b *batch) error {
	t0 := time.Now()
	<-b.done
	d := time.Since(t0)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waitNs += int64(d)
	return b.err
}

// shutdown fails the queued positions of every batch with err and waits for the workers to
// end: after it no buffer of any batch is touched.
func (s *sched) shutdown(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.queue {
		if b.next < len(b.idx) {
			s.failLocked(b, err)
		}
	}
	for s.running > 0 {
		s.cond.Wait()
	}
	for _, w := range s.workers {
		w.close()
	}
}

// Stats are the loader's counters over a period (since Open or the last reset): how busy
// its threads were. They are the diagnostic for a loader that does not keep its cores busy.
type Stats struct {
	// Threads is the number of decoding threads.
	Threads int `json:"threads"`
	// WallSeconds is the length of the period.
	WallSeconds float64 `json:"wall_seconds"`
	// Batches and Samples submitted / decoded in the period.
	Batches int64 `json:"batches"`
	Samples int64 `json:"samples"`
	// BusySeconds is the wall time threads spent decoding samples, summed over threads;
	// BusySeconds / (Threads × WallSeconds) is the threads' utilisation.
	BusySeconds float64 `json:"busy_seconds"`
	// ProcessCPUSeconds is the CPU time of the whole process in the period (every thread:
	// the decoding threads, and the caller's); below BusySeconds when the machine's other
	// processes took the cores. -1 where the platform has no such clock.
	ProcessCPUSeconds float64 `json:"process_cpu_seconds"`
	// RunningSeconds is the time worker goroutines were alive (decoding, or between two
	// samples), summed; Threads × WallSeconds - RunningSeconds is time with no sample queued
	// for a thread: the loader waited for the caller to submit work.
	RunningSeconds float64 `json:"running_seconds"`
	// StarvedSeconds = Threads × WallSeconds - RunningSeconds.
	StarvedSeconds float64 `json:"starved_seconds"`
	// WaitSeconds is the time callers spent blocked waiting for batches to finish.
	WaitSeconds float64 `json:"wait_seconds"`
	// TimedSamples are the samples timed with the per-thread CPU clock: one in 32 per
	// thread (reading the clock is a system call, which costs in some VMs), less those
	// whose goroutine moved to another OS thread while decoding (MovedSamples).
	// CPUSeconds is the decoding threads' CPU time (user + system) while decoding those
	// samples, CPUBusySeconds their wall time. CPUSeconds / CPUBusySeconds is the share of
	// a sample's wall time its thread was on a core: below 1 when the thread was
	// descheduled (other threads of the process, Python's, or other processes took the
	// cores); times BusySeconds, the decoding threads' CPU time. CPUSeconds is -1 where
	// the platform has no per-thread clock.
	TimedSamples   int64   `json:"timed_samples"`
	CPUSeconds     float64 `json:"cpu_seconds"`
	CPUBusySeconds float64 `json:"cpu_busy_seconds"`
	MovedSamples   int64   `json:"moved_samples"`
	// Workers are the same per thread.
	Workers []WorkerStats `json:"workers"`
}

// WorkerStats are one thread's counters.
type WorkerStats struct {
	Samples        int64   `json:"samples"`
	BusySeconds    float64 `json:"busy_seconds"`
	TimedSamples   int64   `json:"timed_samples"`
	CPUSeconds     float64 `json:"cpu_seconds"`
	CPUBusySeconds float64 `json:"cpu_busy_seconds"`
	MovedSamples   int64   `json:"moved_samples"`
}

// stats returns the counters since the last reset; reset starts a new period.
func (s *sched) stats(reset bool) Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.tick(now)
	st := s.st
	st.Threads = s.threads
	st.Workers = append([]WorkerStats(nil), s.st.Workers...)
	st.WallSeconds = now.Sub(s.since).Seconds()
	st.RunningSeconds = time.Duration(s.runNs).Seconds()
	st.StarvedSeconds = max(float64(s.threads)*st.WallSeconds-st.RunningSeconds, 0)
	st.WaitSeconds = time.Duration(s.waitNs).Seconds()
	for k, w := range st.Workers {
		st.BusySeconds += w.BusySeconds
		st.CPUSeconds += w.CPUSeconds
		st.CPUBusySeconds += w.CPUBusySeconds
		st.MovedSamples += w.MovedSamples
		st.TimedSamples += w.TimedSamples
		if s.noClock {
			st.Workers[k].CPUSeconds = -1
		}
	}
	if s.noClock {
		st.CPUSeconds = -1
	}
	cpu := procCPU()
	st.ProcessCPUSeconds = -1
	if cpu >= 0 && s.cpuSince >= 0 {
		st.ProcessCPUSeconds = (cpu - s.cpuSince).Seconds()
	}
	if reset {
		s.st = Stats{Workers: make([]WorkerStats, s.threads)}
		s.since, s.runNs, s.waitNs, s.cpuSince = now, 0, 0, cpu
	}
	return st
}
