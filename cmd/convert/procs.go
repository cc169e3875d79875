package main

import (
	"runtime"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/internal/procs"
	"github.com/mldf/convert/pipeline"
)

// spareProcs gives the run two spare Go processors (internal/procs) when a field of cfg
// spends its time in C (encoders.InC: libjpeg-turbo), and returns the function that puts
// GOMAXPROCS back. Go-only fields keep the default: their workers use every P they get, and
// more Ps than cores only time-slice them (the real-text JSONL job was 20% slower with 4 when
// its output went through the page cache). A local output written with direct I/O gets its
// spare Ps from its sink, whose part writes block (pagewriter).
func spareProcs(cfg pipeline.Config) (restore func()) {
	if !fieldsInC(cfg.Fields) {
		return func() {}
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.NumCPU() // the pipeline's default
	}
	return procs.Spare(workers)
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
