//go:build unix

package imgdec

import (
	"syscall"
	"time"
)

// cpuTime returns the process's user+system CPU time, or -1.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
