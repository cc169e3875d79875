//go:build !linux

package loader

import "time"

// threadMark is the calling thread's id, CPU time and the wall clock; without a per-thread
// clock cpu is -1.
type threadMark struct {
	tid  int
	cpu  int64
	wall time.Time
}

func markThread() threadMark { return threadMark{cpu: -1, wall: time.Now()} }
