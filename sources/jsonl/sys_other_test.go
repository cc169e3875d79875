//go:build !unix

package jsonl

import (
	"testing"
	"time"
)

// cpuTime returns zero where the process's CPU time is not read: the benchmarks report no
// MB/cpu-s.
func cpuTime() time.Duration { return 0 }

func mkfifo(t *testing.T) string {
	t.Skip("no named pipes on this system")
	return ""
}
