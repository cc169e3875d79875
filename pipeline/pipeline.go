// Package pipeline runs a conversion: one producer reads samples from a source and cuts them
// into chunks, a pool of workers encodes the chunks' fields, and the page writer places and
// writes them, so that the output is the same bytes for any worker count. It applies the
// error policy (skip or fail, error budgets, the rejects file) and reports progress.
package pipeline

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// Errors returned by Run, wrapped with context.
var (
	ErrConfig        = errors.New("pipeline: invalid configuration")
	ErrTooManyErrors = errors.New("pipeline: too many rejected samples")
	ErrMissingColumn = errors.New("missing column")
	// ErrEmpty means a run that would write no sample (an empty source, every sample
	// rejected or filtered) and does not allow it (Config.AllowEmpty): nothing is written.
	ErrEmpty = errors.New("pipeline: no sample to write")
	// ErrAllRejected means the first LeadRejects samples of a run were all rejected for the
	// same reason: the run stops there rather than reject the rest one by one.
	ErrAllRejected = errors.New("pipeline: every sample rejected so far")
	// ErrPanic marks a run stopped by a panic in the tool's own code (a bug, never a bad
	// sample): the error is a *PanicError carrying the panic's value and stack.
	ErrPanic = errors.New("pipeline: internal error (panic)")
)

// PanicError is the error of a run stopped by a panic in our code: an encoder's, a source's
// or the pipeline's. A panic of a third-party decoder on a sample's bytes does not get here:
// the encoder turns it into the sample's error (encoders.Guard).
type PanicError struct {
	Where string // what was running: the field and the sample, the source, a worker
	Value any    // what the code panicked with
	Stack []byte // the panicking goroutine's stack
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("%v in %s: %v (please report this bug)\n%s", ErrPanic, e.Where, e.Value, e.Stack)
}

// Unwrap returns ErrPanic and, when the code panicked with an error (a runtime.Error), it.
func (e *PanicError) Unwrap() []error {
	if err, ok := e.Value.(error); ok {
		return []error{ErrPanic, err}
	}
	return []error{ErrPanic}
}

// catch turns a panic of the calling goroutine into *err, a *PanicError naming where; it is
// deferred by every goroutine of a run, so that a bug fails the run (its output and rejects
// aborted) with its stack rather than crashing the process or rejecting a sample.
func catch(where string, err *error) {
	if p := recover(); p != nil {
		*err = &PanicError{Where: where, Value: p, Stack: debug.Stack()}
	}
}
