//go:build linux

package loader

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// threadMark is the calling OS thread's id, its CPU time (user + system, nanoseconds; -1 when
// the clock cannot be read) and the wall clock. Two marks taken by one goroutine measure its
// CPU time between them only when both name the same thread: a goroutine that is not locked
// to its thread can move between threads when it is preempted or leaves a cgo call.
type threadMark struct {
	tid  int
	cpu  int64
	wall time.Time
}

// markThread reads the clock with a raw system call: it returns at once, and a
// scheduler-aware call (unix.ClockGettime) would let the runtime hand the worker's P to
// another thread in between, which then costs the worker a wait for a P on a busy machine.
func markThread() threadMark {
	var ts unix.Timespec
	if _, _, e := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_THREAD_CPUTIME_ID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return threadMark{cpu: -1, wall: time.Now()}
	}
	return threadMark{tid: unix.Gettid(), cpu: ts.Nano(), wall: time.Now()}
}
