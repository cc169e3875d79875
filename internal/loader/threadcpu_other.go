//go:build !linux

package loader

// threadMark is the calling thread's id and CPU time; without a per-thread clock cpu is -1.
type threadMark struct {
	tid int
	cpu int64
}

func markThread() threadMark { return threadMark{cpu: -1} }
