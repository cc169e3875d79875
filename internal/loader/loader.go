// Package loader is the engine of the batch training loader: it opens an MLDF or FFCV .beton
// file (a local path or a bucket URL), computes the order of the samples of an epoch for one
// rank, and decodes batches of samples through per-field pipelines of ops, in parallel, into buffers
// the caller owns. cmd/libmldf exports it as a C library; python/mldf drives it.
//
// Every random choice (the order, a crop box, a flip, an audio offset) is a pure function of
// the seed, the epoch, the sample index and the op's position, so a batch is the same for any
// number of threads and any batch composition. docs/LOADER.md describes the ops.
package loader

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/mldf/convert/internal/quote"
)

// Version is the loader's version, reported by mldf_version.
const Version = "0.1.0"

// Errors of the package, beside ErrPlan and ErrOrder.
var (
	// ErrClosed: the loader was closed.
	ErrClosed = errors.New("loader: closed")
	// ErrBuffer: an output buffer of the wrong size.
	ErrBuffer = errors.New("loader: bad output buffer")
	// ErrIndex: a sample index outside the file.
	ErrIndex = errors.New("loader: sample index out of range")
	// ErrOptions: bad open options.
	ErrOptions = errors.New("loader: bad options")
	// ErrPanic: a decoder panicked (a bug): the panic is returned as this error.
	ErrPanic = errors.New("loader: internal error")
)

// Options configure Open.
type Options struct {
	// CacheBytes bounds the block cache of a file read from a bucket (DefaultCacheBytes when
	// 0). Local files are memory-mapped and use the page cache.
	CacheBytes int64 `json:"cache_bytes"`
	// ReadaheadBytes bounds the bytes a batch fetches ahead of decoding from a bucket
	// (the cache size when 0).
	ReadaheadBytes int64 `json:"readahead_bytes"`
	// VerifyChecksums checks each payload's CRC-32C as it is read.
	VerifyChecksums bool `json:"verify_checksums"`
	// Threads is the number of decoding goroutines of a Run (runtime.GOMAXPROCS when 0).
	Threads int `json:"threads"`
}

// Loader is an opened file. Its methods are safe for concurrent use; Close waits for the
// Runs in progress.
type Loader struct {
	src *source
	opt Options

	mu     sync.RWMutex // held for reading by Submit, for writing by Close
	closed bool

	sch *sched // the decoding threads and their queue of samples
}

// Open opens the MLDF or FFCV .beton file at path (a local path, or an s3://, gs://, az://
// URL); the format is sniffed as format.Sniff does (MLDF by its signature, .beton by its name).
func Open(ctx context.Context, path string, opt Options) (*Loader, error) {
	if opt.CacheBytes < 0 || opt.ReadaheadBytes < 0 || opt.Threads < 0 {
		return nil, fmt.Errorf("%w: negative cache_bytes, readahead_bytes or threads", ErrOptions)
	}
	src, err := openSource(ctx, path, opt)
	if err != nil {
		return nil, err
	}
	if opt.VerifyChecksums && !src.checked() {
		src.close()
		return nil, fmt.Errorf("%s: %w: verify_checksums is set but the %s file carries no checksums", src.name, ErrOptions, src.c.format())
	}
	threads := opt.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	return &Loader{src: src, opt: opt, sch: newSched(threads)}, nil
}

// Close closes the file and the decoders. Samples of submitted batches that no thread has
// started are dropped (their Wait returns ErrClosed); Close waits for the samples being
// decoded, so no buffer is written after it returns.
func (l *Loader) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	l.sch.shutdown(ErrClosed)
	return l.src.close()
}

// Stats returns the decoding threads' counters since Open or the last reset; reset starts a
// new period.
func (l *Loader) Stats(reset bool) Stats { return l.sch.stats(reset) }

// NumSamples returns the number of samples in the file.
func (l *Loader) NumSamples() int { return l.src.numSamples() }

// PageSamples returns the average number of samples per page, quasi_random's block.
func (l *Loader) PageSamples() int {
	_, region := l.src.dataRegion()
	n := int64(l.src.numSamples())
	if region <= 0 || n == 0 {
		return max(l.src.pageSize()/64, 1)
	}
	return int(max(min(int64(l.src.pageSize())*n/region, n), 1))
}

// Order returns the order of spec on this file.
func (l *Loader) Order(spec OrderSpec) (*Order, error) {
	return NewOrder(l.src.numSamples(), l.PageSamples(), spec)
}

// Description is what mldf_describe returns.
type Description struct {
	Path          string              `json:"path"`
	Format        string              `json:"format"` // MLDF, FFCV .beton
	NumSamples    int                 `json:"num_samples"`
	FormatVersion string              `json:"format_version"`
	PageSize      int                 `json:"page_size"`
	PageSamples   int                 `json:"page_samples"`
	Checksummed   bool                `json:"checksummed"`
	Fields        []FieldDescription  `json:"fields"`
	ClassNames    map[string][]string `json:"class_names,omitempty"`
}

// FieldDescription is one field of a Description: its type and its decoded arguments.
type FieldDescription struct {
	Name         string `json:"name"`
	Type         string `json:"type"`
	Codec        string `json:"codec,omitempty"` // images: raw, jpeg, png; audio: pcm, flac
	Channels     int    `json:"channels,omitempty"`
	MaxRes       int    `json:"max_resolution,omitempty"`
	DType        string `json:"dtype,omitempty"`
	Shape        []int  `json:"shape,omitempty"`
	Layout       string `json:"layout,omitempty"` // NDARRAY: fixed, npy
	SampleFormat string `json:"sample_format,omitempty"`
	TokenWidth   int    `json:"token_width,omitempty"`
	NumClasses   int    `json:"num_classes,omitempty"`
	// Ops are the decoder ops that apply to the field.
	Ops []string `json:"ops"`
}

// Describe describes the file.
func (l *Loader) Describe() Description {
	s := l.src
	d := Description{Path: s.name, Format: s.c.format(), NumSamples: s.numSamples(), FormatVersion: s.version(),
		PageSize: s.pageSize(), PageSamples: l.PageSamples(), Checksummed: s.checked()}
	for _, f := range s.fields {
		fd := FieldDescription{Name: f.Name, Type: f.TypeName, Codec: f.Codec, Channels: f.Channels, MaxRes: f.MaxRes,
			TokenWidth: f.TokenWidth, NumClasses: len(f.ClassNames), Ops: []string{}}
		switch f.Kind {
		case kindInt:
			fd.Ops = []string{"Int"}
		case kindFloat:
			fd.Ops = []string{"Float"}
		case kindBytes:
			fd.Ops = []string{"Bytes"}
		case kindJSON:
			fd.Ops = []string{"JSON", "Bytes"}
		case kindText:
			fd.Ops = []string{"Text", "Bytes"}
		case kindNDArray:
			fd.Ops = []string{"NDArray", "Bytes"}
			if f.Recorded && f.Layout == 0 {
				fd.Layout, fd.DType, fd.Shape = "fixed", f.DType, f.Shape
			} else if f.Recorded {
				fd.Layout = "npy"
			}
		case kindImage:
			fd.Ops = []string{"RandomResizedCrop", "CenterCrop", "Resize", "Bytes"}
		case kindAudioPCM:
			fd.Ops = []string{"Audio", "Bytes"}
			fd.SampleFormat = map[int]string{pcmInt16: "int16", pcmInt32: "int32", pcmFloat32: "float32"}[f.PCMFormat]
		case kindAudioFLAC:
			fd.Ops = []string{"Audio", "Bytes"}
		default:
			if f.Payload {
				fd.Ops = []string{"Bytes"}
			}
		}
		if f.ClassNames != nil {
			if d.ClassNames == nil {
				d.ClassNames = map[string][]string{}
			}
			d.ClassNames[f.Name] = f.ClassNames
		}
		d.Fields = append(d.Fields, fd)
	}
	return d
}

// Buffer is one output's memory for a batch: Data for a fixed output (n × the output's
// item size bytes); Offsets (n+1 entries, filled by Run) and Data for a variable one.
type Buffer struct {
	Data    []byte
	Offsets []int64
}

// BatchBytes returns, per output, the bytes of Data a batch of the samples idx needs.
func (p *Plan) BatchBytes(idx []int64) ([]int64, error) {
	p.l.mu.RLock()
	defer p.l.mu.RUnlock()
	if p.l.closed {
		return nil, ErrClosed
	}
	if err := p.checkIndices(idx); err != nil {
		return nil, err
	}
	sizes := make([]int64, len(p.fields))
	for k, f := range p.fields {
		if !f.out.Variable {
			sizes[k] = int64(len(idx)) * int64(f.out.itemSize)
			continue
		}
		for _, i := range idx {
			n, err := p.l.src.payloadSize(int(i), f.field)
			if err != nil {
				return nil, err
			}
			sizes[k] += int64(n)
		}
	}
	return sizes, nil
}

func (p *Plan) checkIndices(idx []int64) error {
	n := int64(p.l.src.numSamples())
	for k, i := range idx {
		if i < 0 || i >= n {
			return fmt.Errorf("%s: %w: index %d (batch position %d) of %d samples", p.l.src.name, ErrIndex, i, k, n)
		}
	}
	return nil
}

// Run decodes the samples idx into bufs (one per output, in Outputs order), with the random
// ops of epoch, on the loader's threads: Submit, then Wait. It returns the first error
// (naming the file, the sample and the field); the buffers' contents are then unspecified.
func (p *Plan) Run(ctx context.Context, idx []int64, epoch int64, bufs []Buffer) error {
	b, err := p.Submit(ctx, idx, epoch, bufs)
	if err != nil {
		return err
	}
	return b.Wait()
}

// Pending is a submitted batch.
type Pending struct {
	s *sched
	b *batch
}

// Wait blocks until the batch is decoded and returns its first error (naming the file, the
// sample and the field), ErrClosed when the loader was closed before it was decoded, or the
// submission context's error.
func (b *Pending) Wait() error { return b.s.wait(b.b) }

// Submit checks the buffers, fetches the batch's blocks of a file in a bucket, and queues the
// samples idx for decoding into bufs (as Run) on the loader's threads, behind the batches
// submitted before. It returns at once: the caller keeps idx and bufs unchanged until Wait
// returns. The threads go from one batch's last samples to the next batch's first, so a
// caller that keeps one batch submitted ahead keeps them busy.
func (p *Plan) Submit(ctx context.Context, idx []int64, epoch int64, bufs []Buffer) (*Pending, error) {
	l := p.l
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, ErrClosed
	}
	if len(bufs) != len(p.fields) {
		return nil, fmt.Errorf("%w: %d buffers for %d outputs", ErrBuffer, len(bufs), len(p.fields))
	}
	if err := p.checkIndices(idx); err != nil {
		return nil, err
	}
	n := len(idx)
	for k, f := range p.fields {
		b := &bufs[k]
		if !f.out.Variable {
			if int64(len(b.Data)) < int64(n)*int64(f.out.itemSize) {
				return nil, fmt.Errorf("%w: output %s has %d bytes, %d samples need %d", ErrBuffer, quote.Q(f.name), len(b.Data), n, int64(n)*int64(f.out.itemSize))
			}
			continue
		}
		if len(b.Offsets) != n+1 {
			return nil, fmt.Errorf("%w: output %s has %d offsets, %d samples need %d", ErrBuffer, quote.Q(f.name), len(b.Offsets), n, n+1)
		}
		b.Offsets[0] = 0
		for j, i := range idx {
			size, err := l.src.payloadSize(int(i), f.field)
			if err != nil {
				return nil, err
			}
			b.Offsets[j+1] = b.Offsets[j] + int64(size)
		}
		if b.Offsets[n] > int64(len(b.Data)) {
			return nil, fmt.Errorf("%w: output %s has %d data bytes, the batch needs %d", ErrBuffer, quote.Q(f.name), len(b.Data), b.Offsets[n])
		}
	}
	if err := l.src.prefetch(ctx, idx, p.fieldIndices()); err != nil {
		return nil, err
	}
	b := &batch{p: p, ctx: ctx, idx: idx, epoch: epoch, bufs: bufs, pending: n, done: make(chan struct{})}
	l.sch.submit(b)
	return &Pending{s: l.sch, b: b}, nil
}

func (p *Plan) fieldIndices() []int {
	fs := make([]int, len(p.fields))
	for k, f := range p.fields {
		fs[k] = f.field
	}
	return fs
}

// one decodes batch position j (sample i) into every output.
func (p *Plan) one(w *worker, j int, i, epoch int64, bufs []Buffer) (err error) {
	src := p.l.src
	field := ""
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: sample %d, field %s: %w: %v\n%s", src.name, i, quote.Q(field), ErrPanic, r, debug.Stack())
		}
	}()
	rc := runCtx{seed: p.seed, epoch: epoch, sample: i}
	for k := range p.fields {
		f := &p.fields[k]
		field = f.name
		v, err := src.get(int(i), f.field, p.l.opt.VerifyChecksums)
		if err != nil {
			return err
		}
		var dst []byte
		b := &bufs[k]
		if f.out.Variable {
			dst = b.Data[b.Offsets[j]:b.Offsets[j+1]]
		} else {
			dst = b.Data[j*f.out.itemSize : (j+1)*f.out.itemSize]
		}
		rc.field = f.field
		if err := f.st.decode(w, rc, v, dst); err != nil {
			return fmt.Errorf("%s: sample %d, field %s: %w", src.name, i, quote.Q(f.name), err)
		}
	}
	return nil
}

func putI64(b []byte, v int64)   { binary.LittleEndian.PutUint64(b, uint64(v)) }
func putF64(b []byte, v float64) { binary.LittleEndian.PutUint64(b, math.Float64bits(v)) }

// ItemSize returns the bytes per sample of a fixed output (0 for a variable one).
func (o Output) ItemSize() int { return o.itemSize }

// Codecs lists the payload codecs the loader decodes.
func Codecs() []string { return codecs() }

func codecs() []string {
	return []string{"int", "float", "bytes", "json", "text", "ndarray", "jpeg", "png", "raw", "pcm", "flac"}
}
