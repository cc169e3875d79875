//go:build unix

package loader

import (
	"syscall"
	"time"
)

// procCPU returns the process's user + system CPU time (every thread: the decoding threads,
// and the caller's, Python's, too), or -1 when it cannot be read.
func procCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
