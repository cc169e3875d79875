// Package procs gives the Go runtime spare processors (Ps) for goroutines that spend their time
// in C or blocked in system calls. It is the one place that raises GOMAXPROCS: the converter's
// image workers, the loader library's decoding threads and the page writer's direct sink (whose
// part writes block) call it.
//
// With one P per core and every such goroutine inside a long cgo call, the runtime's sysmon
// takes a goroutine's P after 20 µs whenever no P is idle and wakes a thread to spin on it, at
// every call; the goroutine, back from C, then waits for a P. Two spare Ps keep one idle, so
// sysmon leaves the calls alone: on 2 cores, 2 image workers converted 2000 photos in 1.38 s
// and 2.61 CPU s with GOMAXPROCS 4 against 1.88 s and 3.08 with 2 (docs/PERFORMANCE.md). Go
// code gains nothing from more Ps than cores: only goroutines that wait in C get them.
package procs

import (
	"os"
	"runtime"
	"sync"
)

// mu orders raises and restores from concurrent callers: one never lowers another's raise.
var mu sync.Mutex

// Spare makes GOMAXPROCS at least n + 2 for n goroutines that spend their time in C calls,
// unless the GOMAXPROCS environment variable sets it, and returns the function that puts back
// the value it replaced. Spare never lowers GOMAXPROCS; restore lowers it only when nobody has
// changed it since (a later, larger raise stays).
func Spare(n int) (restore func()) {
	if os.Getenv("GOMAXPROCS") != "" || n <= 0 {
		return func() {}
	}
	mu.Lock()
	defer mu.Unlock()
	prev, want := runtime.GOMAXPROCS(0), n+2
	if prev >= want {
		return func() {}
	}
	runtime.GOMAXPROCS(want)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if runtime.GOMAXPROCS(0) == want {
			runtime.GOMAXPROCS(prev)
		}
	}
}
