//go:build cgo

package main

import (
	"os"
	"runtime"
	"testing"
)

// TestSpareProcs: opening a loader leaves GOMAXPROCS at least its decoding threads plus two
// (so calls from Python threads do not take a decoding goroutine's P), never lowers it, and
// leaves a GOMAXPROCS set by the environment alone.
func TestSpareProcs(t *testing.T) {
	if os.Getenv("GOMAXPROCS") != "" {
		t.Skip("GOMAXPROCS is set in the environment: the library leaves it alone")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct{ start, threads, want int }{
		{1, 1, 3}, {2, 2, 4}, {1, 3, 5}, {8, 2, 8}, {4, 2, 4},
	} {
		runtime.GOMAXPROCS(tc.start)
		spareProcs(tc.threads)
		if got := runtime.GOMAXPROCS(0); got != tc.want {
			t.Errorf("GOMAXPROCS %d, %d threads: now %d, want %d", tc.start, tc.threads, got, tc.want)
		}
	}
	t.Setenv("GOMAXPROCS", "1")
	runtime.GOMAXPROCS(1)
	spareProcs(4)
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("with GOMAXPROCS=1 in the environment: now %d", got)
	}
}
