//go:build cgo

// Command libmldf is the batch loader (package internal/loader) as a C shared library, for
// the Python package's ctypes binding:
//
//	go build -buildmode=c-shared -o libmldf.so ./cmd/libmldf
//
// writes libmldf.so and libmldf.h. docs/LOADER.md documents the functions. Handles are
// int64 > 0 (runtime/cgo handles); strings are UTF-8 and NUL-terminated; structured values
// are JSON. A function that fails returns 0 (a handle), -1 or a nonzero status, and sets
// *err to a message allocated with malloc (free it with mldf_free) that names the file and
// the sample. No pointer passed in is kept after a call returns.
package main

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"runtime/debug"
	"unsafe"

	"github.com/mldf/convert/internal/loader"
	"github.com/mldf/convert/internal/procs"
)

func main() {}

// errBadHandle: a handle that is not one the library returned, or was closed.
var errBadHandle = errors.New("libmldf: bad handle")

func setErr(errp **C.char, err error) {
	if errp != nil {
		*errp = C.CString(err.Error())
	}
}

// recoverTo turns a panic into an error, so that no Go panic crosses into the caller.
func recoverTo(errp **C.char, fail func()) {
	if r := recover(); r != nil {
		setErr(errp, fmt.Errorf("libmldf: internal error: %v\n%s", r, debug.Stack()))
		fail()
	}
}

func decodeJSON(s *C.char, v any) error {
	if s == nil {
		return nil
	}
	b := C.GoString(s)
	if b == "" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(b)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func jsonString(v any) *C.char {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return C.CString(string(b))
}

func loaderOf(h C.int64_t) (*loader.Loader, error) {
	if h <= 0 {
		return nil, errBadHandle
	}
	l, ok := safeValue(h).(*loader.Loader)
	if !ok {
		return nil, errBadHandle
	}
	return l, nil
}

func planOf(h C.int64_t) (*loader.Plan, error) {
	if h <= 0 {
		return nil, errBadHandle
	}
	p, ok := safeValue(h).(*loader.Plan)
	if !ok {
		return nil, errBadHandle
	}
	return p, nil
}

// safeValue returns the value of handle h, or nil when h is not a live handle (cgo.Handle.Value
// panics then).
func safeValue(h C.int64_t) (v any) {
	defer func() {
		if recover() != nil {
			v = nil
		}
	}()
	return cgo.Handle(h).Value()
}

func safeDelete(h C.int64_t) {
	defer func() { _ = recover() }()
	cgo.Handle(h).Delete()
}

//export mldf_open
func mldf_open(path *C.char, options *C.char, errp **C.char) (h C.int64_t) {
	defer recoverTo(errp, func() { h = 0 })
	var opt loader.Options
	if err := decodeJSON(options, &opt); err != nil {
		setErr(errp, fmt.Errorf("%w: %w", loader.ErrOptions, err))
		return 0
	}
	if path == nil {
		setErr(errp, fmt.Errorf("%w: no path", loader.ErrOptions))
		return 0
	}
	if opt.Threads <= 0 {
		opt.Threads = defaultProcs
	}
	l, err := loader.Open(context.Background(), C.GoString(path), opt)
	if err != nil {
		setErr(errp, err)
		return 0
	}
	// Spare Ps for the decoding goroutines, kept while the library is loaded: with as many Ps
	// as decoding goroutines, each call from a Python thread (mldf_submit, mldf_wait) and each
	// hand-off of a P from a goroutine in a long cgo call took a P a decoding goroutine then
	// waited for (A/B on 2 cores, 2 threads, S=160: 0.31-0.33 CPU ms an image with GOMAXPROCS
	// 4, 0.34-0.40 with 2).
	procs.Spare(opt.Threads)
	return C.int64_t(cgo.NewHandle(l))
}

// defaultProcs is the Go runtime's GOMAXPROCS when the library loaded (the CPUs this process
// may use): the decoding threads of a loader opened with threads 0.
var defaultProcs = runtime.GOMAXPROCS(0)

//export mldf_close
func mldf_close(h C.int64_t) {
	defer func() { _ = recover() }()
	if l, err := loaderOf(h); err == nil {
		l.Close()
		safeDelete(h)
	}
}

//export mldf_describe
func mldf_describe(h C.int64_t) *C.char {
	defer func() { _ = recover() }()
	l, err := loaderOf(h)
	if err != nil {
		return nil
	}
	return jsonString(l.Describe())
}

//export mldf_order
func mldf_order(h C.int64_t, order *C.char, start, count C.int64_t, out *C.int64_t, errp **C.char) (n C.int64_t) {
	defer recoverTo(errp, func() { n = -1 })
	l, err := loaderOf(h)
	if err != nil {
		setErr(errp, err)
		return -1
	}
	var spec loader.OrderSpec
	if err := decodeJSON(order, &spec); err != nil {
		setErr(errp, fmt.Errorf("%w: %w", loader.ErrOrder, err))
		return -1
	}
	o, err := l.Order(spec)
	if err != nil {
		setErr(errp, err)
		return -1
	}
	if count > 0 {
		if out == nil || start < 0 || start > 1<<62 || count > 1<<40 {
			setErr(errp, fmt.Errorf("%w: start %d count %d", loader.ErrOrder, start, count))
			return -1
		}
		dst := unsafe.Slice((*int64)(unsafe.Pointer(out)), int(count))
		if err := o.Fill(int(start), dst); err != nil {
			setErr(errp, err)
			return -1
		}
	}
	return C.int64_t(o.Len())
}

//export mldf_plan
func mldf_plan(h C.int64_t, plan *C.char, errp **C.char) (p C.int64_t) {
	defer recoverTo(errp, func() { p = 0 })
	l, err := loaderOf(h)
	if err != nil {
		setErr(errp, err)
		return 0
	}
	var spec loader.PlanSpec
	if err := decodeJSON(plan, &spec); err != nil {
		setErr(errp, fmt.Errorf("%w: %w", loader.ErrPlan, err))
		return 0
	}
	pl, err := l.NewPlan(spec)
	if err != nil {
		setErr(errp, err)
		return 0
	}
	return C.int64_t(cgo.NewHandle(pl))
}

//export mldf_plan_outputs
func mldf_plan_outputs(p C.int64_t) *C.char {
	defer func() { _ = recover() }()
	pl, err := planOf(p)
	if err != nil {
		return nil
	}
	return jsonString(pl.Outputs())
}

//export mldf_plan_close
func mldf_plan_close(p C.int64_t) {
	if _, err := planOf(p); err == nil {
		safeDelete(p)
	}
}

func indices(idx *C.int64_t, n C.int64_t) ([]int64, error) {
	if n < 0 || n > 1<<31 || (n > 0 && idx == nil) {
		return nil, fmt.Errorf("%w: %d indices", loader.ErrIndex, n)
	}
	if n == 0 {
		return nil, nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(idx)), int(n)), nil
}

//export mldf_batch_bytes
func mldf_batch_bytes(p C.int64_t, idx *C.int64_t, n C.int64_t, sizes *C.int64_t, errp **C.char) (total C.int64_t) {
	defer recoverTo(errp, func() { total = -1 })
	pl, err := planOf(p)
	if err != nil {
		setErr(errp, err)
		return -1
	}
	ix, err := indices(idx, n)
	if err != nil {
		setErr(errp, err)
		return -1
	}
	got, err := pl.BatchBytes(ix)
	if err != nil {
		setErr(errp, err)
		return -1
	}
	var dst []int64
	if sizes != nil {
		dst = unsafe.Slice((*int64)(unsafe.Pointer(sizes)), len(got))
	}
	var sum int64
	for k, s := range got {
		if dst != nil {
			dst[k] = s
		}
		sum += s
	}
	return C.int64_t(sum)
}

//export mldf_run
func mldf_run(p C.int64_t, idx *C.int64_t, n C.int64_t, epoch C.int64_t, outs *unsafe.Pointer, dataSizes *C.int64_t, errp **C.char) (status C.int) {
	defer recoverTo(errp, func() { status = 1 })
	b, err := submit(p, idx, n, epoch, outs, dataSizes)
	if err == nil {
		err = b.Wait()
	}
	if err != nil {
		setErr(errp, err)
		return 1
	}
	return 0
}

//export mldf_submit
func mldf_submit(p C.int64_t, idx *C.int64_t, n C.int64_t, epoch C.int64_t, outs *unsafe.Pointer, dataSizes *C.int64_t, errp **C.char) (t C.int64_t) {
	defer recoverTo(errp, func() { t = 0 })
	b, err := submit(p, idx, n, epoch, outs, dataSizes)
	if err != nil {
		setErr(errp, err)
		return 0
	}
	return C.int64_t(cgo.NewHandle(b))
}

//export mldf_wait
func mldf_wait(t C.int64_t, errp **C.char) (status C.int) {
	defer recoverTo(errp, func() { status = 1 })
	var b *loader.Pending
	if t > 0 {
		b, _ = safeValue(t).(*loader.Pending)
	}
	if b == nil {
		setErr(errp, fmt.Errorf("%w: not a submitted batch", errBadHandle))
		return 1
	}
	err := b.Wait()
	safeDelete(t)
	if err != nil {
		setErr(errp, err)
		return 1
	}
	return 0
}

//export mldf_stats
func mldf_stats(h C.int64_t, reset C.int) *C.char {
	defer func() { _ = recover() }()
	l, err := loaderOf(h)
	if err != nil {
		return nil
	}
	return jsonString(l.Stats(reset != 0))
}

// submit queues a batch (mldf_run, mldf_submit). The indices are copied; the output
// buffers must stay valid until the batch is waited for.
func submit(p C.int64_t, idx *C.int64_t, n C.int64_t, epoch C.int64_t, outs *unsafe.Pointer, dataSizes *C.int64_t) (*loader.Pending, error) {
	pl, err := planOf(p)
	if err != nil {
		return nil, err
	}
	ix, err := indices(idx, n)
	if err != nil {
		return nil, err
	}
	ix = append([]int64(nil), ix...)
	outputs := pl.Outputs()
	nptr := 0
	for _, o := range outputs {
		nptr++
		if o.Variable {
			nptr++
		}
	}
	if outs == nil {
		return nil, fmt.Errorf("%w: no output pointers", loader.ErrBuffer)
	}
	ptrs := unsafe.Slice(outs, nptr)
	var sizes []int64
	if dataSizes != nil {
		sizes = unsafe.Slice((*int64)(unsafe.Pointer(dataSizes)), len(outputs))
	}
	bufs := make([]loader.Buffer, len(outputs))
	k := 0
	for j, o := range outputs {
		if o.Variable {
			if ptrs[k] == nil || (ptrs[k+1] == nil && sizes != nil && sizes[j] > 0) {
				return nil, fmt.Errorf("%w: output %d (%s): null pointer", loader.ErrBuffer, j, o.Name)
			}
			bufs[j].Offsets = unsafe.Slice((*int64)(ptrs[k]), int(n)+1)
			var size int64
			if sizes != nil {
				size = sizes[j]
			} else if size, err = variableBytes(pl, ix, j); err != nil {
				return nil, err
			}
			if size > 0 {
				bufs[j].Data = unsafe.Slice((*byte)(ptrs[k+1]), int(size))
			}
			k += 2
			continue
		}
		size := int(n) * o.ItemSize()
		if size > 0 {
			if ptrs[k] == nil {
				return nil, fmt.Errorf("%w: output %d (%s): null pointer", loader.ErrBuffer, j, o.Name)
			}
			bufs[j].Data = unsafe.Slice((*byte)(ptrs[k]), size)
		}
		k++
	}
	return pl.Submit(context.Background(), ix, int64(epoch), bufs)
}

// variableBytes returns the data bytes output j needs for the samples ix.
func variableBytes(pl *loader.Plan, ix []int64, j int) (int64, error) {
	s, err := pl.BatchBytes(ix)
	if err != nil {
		return 0, err
	}
	return s[j], nil
}

//export mldf_free
func mldf_free(p unsafe.Pointer) {
	C.free(p)
}

//export mldf_version
func mldf_version() *C.char {
	commit := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				commit = s.Value
			}
		}
	}
	return jsonString(map[string]any{"version": loader.Version, "commit": commit, "codecs": loader.Codecs(), "abi": 2})
}
