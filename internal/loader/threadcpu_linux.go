//go:build linux

package loader

import "golang.org/x/sys/unix"

// threadMark is the calling OS thread's id and CPU time (user + system, nanoseconds), or
// cpu -1 when the clock cannot be read. Two marks taken by one goroutine measure its CPU
// time between them only when both name the same thread: a goroutine that is not locked to
// its thread can move between threads when it is preempted or leaves a cgo call.
type threadMark struct {
	tid int
	cpu int64
}

func markThread() threadMark {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return threadMark{cpu: -1}
	}
	return threadMark{tid: unix.Gettid(), cpu: ts.Nano()}
}
