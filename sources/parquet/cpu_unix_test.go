//go:build unix

package parquet

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used (user and system): on a shared
// machine a benchmark's CPU time per operation is steadier than its wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
