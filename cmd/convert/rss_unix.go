//go:build unix

package main

import (
	"runtime"
	"syscall"
)

// peakRSS returns the process's peak resident set size in bytes: getrusage's ru_maxrss,
// which Linux and the BSDs report in KiB and macOS in bytes.
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024 // int32 on 32-bit systems
}
