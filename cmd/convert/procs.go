package main

import (
	"os"
	"runtime"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/pipeline"
)

// spareProcs gives the Go runtime two more processors (GOMAXPROCS) than the run has encoding
// workers when a field of cfg spends its time in C (encoders.InC: libjpeg-turbo), and returns
// the function that puts the old value back. With one P per core and every worker inside a
// long C call, the runtime takes a worker's P at each call and wakes a thread to spin on it;
// on 2 cores that churn cost a quarter of the images job's wall time (2000 images, jpeg 256:
// 1.88 s and 3.08 CPU s with GOMAXPROCS 2, 1.38 s and 2.61 CPU s with 4; docs/PERFORMANCE.md).
// Go-only fields keep the default: their workers use every P they get, and more Ps than
// cores only time-slice them (the real-text JSONL job was 20% slower with 4). A GOMAXPROCS
// in the environment always wins.
func spareProcs(cfg pipeline.Config) (restore func()) {
	if os.Getenv("GOMAXPROCS") != "" || !fieldsInC(cfg.Fields) {
		return func() {}
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.NumCPU() // the pipeline's default
	}
	prev := runtime.GOMAXPROCS(0)
	if workers+2 <= prev {
		return func() {}
	}
	runtime.GOMAXPROCS(workers + 2)
	return func() { runtime.GOMAXPROCS(prev) }
}

// fieldsInC reports whether a field of fields spends its time in C.
func fieldsInC(fields []pipeline.Binding) bool {
	for _, b := range fields {
		if c, ok := b.Field.(encoders.InC); ok && c.InC() {
			return true
		}
	}
	return false
}
