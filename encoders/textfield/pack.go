package textfield

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

// ErrNoText is a document sample that lacks the text column.
var ErrNoText = errors.New("text column missing")

// DefaultPackColumn is the column name of the rows Pack emits when PackOptions.Output is "".
const DefaultPackColumn = "tokens"

// MaxSeqLen bounds PackOptions.SeqLen (16 Mi tokens).
const MaxSeqLen = 1 << 24

// PackOptions configure packing (Pack) and the TEXT_PACKED field (NewPacked). A field and the
// wrapper that feeds it must use the same options.
type PackOptions struct {
	// Tokenizer is the vocabulary name; "" means cl100k_base.
	Tokenizer string
	// SeqLen is the number of tokens per row (>= 1).
	SeqLen int
	// NoSeparator packs documents back to back; by default a separator id follows every
	// document.
	NoSeparator bool
	// SeparatorID is the id after each document; 0 means the tokenizer's <|endoftext|>.
	SeparatorID uint32
	// PadLast pads the last partial row to SeqLen with PadID; by default it is dropped.
	PadLast bool
	// PadID is the padding id; 0 means the tokenizer's <|endoftext|>.
	PadID uint32
	// IDWidth as in TokenizedOptions: 0 (automatic), 2 or 4.
	IDWidth int
	// Output is the column name of the rows; "" means DefaultPackColumn.
	Output string
	// Workers tokenize in parallel; 0 means GOMAXPROCS. Rows do not depend on it.
	Workers int
}

type packConfig struct {
	tok     *Tokenizer
	seqLen  int
	sep     bool
	sepID   uint32
	pad     bool
	padID   uint32
	width   int
	output  string
	workers int
}

func (o PackOptions) resolve() (*packConfig, error) {
	tok, err := NewTokenizer(o.Tokenizer)
	if err != nil {
		return nil, err
	}
	if o.SeqLen < 1 || o.SeqLen > MaxSeqLen {
		return nil, fmt.Errorf("%w: seq_len %d (want 1..%d)", ErrOption, o.SeqLen, MaxSeqLen)
	}
	c := &packConfig{tok: tok, seqLen: o.SeqLen, sep: !o.NoSeparator, sepID: o.SeparatorID,
		pad: o.PadLast, padID: o.PadID, output: o.Output, workers: o.Workers}
	if c.sepID == 0 {
		c.sepID = tok.EOT()
	}
	if c.padID == 0 {
		c.padID = tok.EOT()
	}
	if c.output == "" {
		c.output = DefaultPackColumn
	}
	if c.workers <= 0 {
		c.workers = runtime.GOMAXPROCS(0)
	}
	maxID := tok.VocabSize() - 1
	if c.sep {
		maxID = max(maxID, c.sepID)
	}
	if c.pad {
		maxID = max(maxID, c.padID)
	}
	if c.width, err = idWidth(o.IDWidth, maxID); err != nil {
		return nil, err
	}
	return c, nil
}

// Packed is a TEXT_PACKED field: each sample is one row of SeqLen token ids cut from the
// packed stream, as emitted by the source Pack (or Packed.Pack) returns.
type Packed struct {
	name string
	cfg  *packConfig
}

var _ encoders.Field = (*Packed)(nil)

// NewPacked returns a TEXT_PACKED field named name. Its samples must come from a source
// wrapped by Pack with the same options (Packed.Pack does that).
func NewPacked(name string, opt PackOptions) (*Packed, error) {
	if err := mldf.ValidateName(name); err != nil {
		return nil, err
	}
	cfg, err := opt.resolve()
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", name, err)
	}
	return &Packed{name: name, cfg: cfg}, nil
}

// Name returns the field name.
func (f *Packed) Name() string { return f.name }

// Type returns manifest.TypeTextPacked.
func (f *Packed) Type() mldf.TypeID { return mldf.TypeTextPacked }

// Column returns the column the field reads: PackOptions.Output.
func (f *Packed) Column() string { return f.cfg.output }

// Width returns the bytes per token id (2 or 4).
func (f *Packed) Width() int { return f.cfg.width }

// Arguments returns the descriptor arguments (docs/fields/text.md).
func (f *Packed) Arguments() [mldf.ArgumentsSize]byte {
	var flags uint16
	sepID, padID := uint32(0), uint32(0)
	if f.cfg.sep {
		flags |= FlagEndID
		sepID = f.cfg.sepID
	}
	if f.cfg.pad {
		flags |= FlagPadLast
		padID = f.cfg.padID
	}
	return putArgs(f.cfg.tok, f.cfg.width, flags, sepID, uint32(f.cfg.seqLen), padID)
}

// Encode stores one row. v is the KindBytes value Pack emits: SeqLen ids of the field's
// width, with v.Int the number of ids that are not padding. num_tokens is that number,
// saturated at 65535.
func (f *Packed) Encode(v sample.Value, meta []byte) ([]byte, error) {
	want := f.cfg.seqLen * f.cfg.width
	if v.Kind != sample.KindBytes || len(v.Bytes) != want {
		return nil, fmt.Errorf("field %q: %w: kind %d, %d bytes, want %d bytes (%d ids of %d bytes; is the source wrapped by Pack with the same options?)",
			f.name, ErrRow, v.Kind, len(v.Bytes), want, f.cfg.seqLen, f.cfg.width)
	}
	nReal := v.Int
	if nReal <= 0 || nReal > int64(f.cfg.seqLen) {
		nReal = int64(f.cfg.seqLen)
	}
	mldf.TextMeta{NumTokens: uint16(min(nReal, MaxNumTokens)), Encoding: encodingOf(f.cfg.width)}.Put(meta)
	return append([]byte(nil), v.Bytes...), nil
}

// Pack wraps src with the field's options: see the function Pack.
func (f *Packed) Pack(src sources.Source, column string) sources.Source {
	return &packer{src: src, column: column, cfg: f.cfg}
}

// Pack returns a source that tokenizes the text column of src's samples in order, joins
// the ids into one stream (each document followed by the separator id unless NoSeparator)
// and cuts it into rows of SeqLen ids; the last partial row is dropped, or padded with
// PadID when PadLast. Each row is one sample whose column PackOptions.Output holds a
// KindBytes value: the row's ids little-endian at the chosen width, with Int the number of
// non-padding ids. Row i holds stream ids [i*SeqLen, (i+1)*SeqLen).
//
// Samples of src that carry an error, lack the column or hold invalid UTF-8 add nothing to
// the stream; they are passed on (with Err set) in stream order, for the error policy.
// Tokenization runs on Workers goroutines; the rows are the same for any number.
func Pack(src sources.Source, column string, opt PackOptions) (sources.Source, error) {
	cfg, err := opt.resolve()
	if err != nil {
		return nil, err
	}
	return &packer{src: src, column: column, cfg: cfg}, nil
}

type packer struct {
	src    sources.Source
	column string
	cfg    *packConfig
}

// Len returns -1: the number of rows is known only at the end.
func (p *packer) Len() int64 { return -1 }

type doc struct {
	s   sample.Sample
	ids []uint32
	err error
}

type batch struct {
	docs []doc
	done chan struct{}
}

const (
	batchDocs  = 256
	batchBytes = 256 << 10
)

// Run tokenizes in parallel batches and packs and emits in order.
func (p *packer) Run(ctx context.Context, emit func(sample.Sample) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	work := make(chan *batch)
	order := make(chan *batch, 2*p.cfg.workers+2)

	g.Go(func() error {
		defer close(order)
		defer close(work)
		b := &batch{}
		size := 0
		send := func() error {
			b.done = make(chan struct{})
			for _, ch := range []chan *batch{order, work} {
				select {
				case ch <- b:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			b, size = &batch{}, 0
			return nil
		}
		err := p.src.Run(gctx, func(s sample.Sample) error {
			b.docs = append(b.docs, doc{s: s})
			size += len(s.Value(p.column).Bytes)
			if len(b.docs) >= batchDocs || size >= batchBytes {
				return send()
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(b.docs) > 0 {
			return send()
		}
		return nil
	})
	for range p.cfg.workers {
		g.Go(func() error {
			for b := range work {
				for i := range b.docs {
					p.tokenize(&b.docs[i])
				}
				close(b.done)
			}
			return nil
		})
	}

	emitErr := p.emitRows(gctx, order, emit)
	if emitErr != nil {
		cancel()
		_ = g.Wait()
		return emitErr
	}
	return g.Wait()
}

func (p *packer) tokenize(d *doc) {
	if d.s.Err != nil {
		d.err = d.s.Err
		return
	}
	v, ok := d.s.Get(p.column)
	if !ok {
		d.err = fmt.Errorf("%s: %w: %q", d.s.Origin, ErrNoText, p.column)
		return
	}
	text, err := textBytes(p.column, v)
	if err != nil {
		d.err = fmt.Errorf("%s: %w", d.s.Origin, err)
		return
	}
	ids, err := p.cfg.tok.Encode(text, nil)
	if err != nil {
		d.err = fmt.Errorf("%s: %w", d.s.Origin, err)
		return
	}
	if p.cfg.sep {
		ids = append(ids, p.cfg.sepID)
	}
	d.ids = ids
	d.s.Values = nil
}

// docEnd records where a document's ids end in the stream, for the rows' Origin.
type docEnd struct {
	end    int64
	origin string
}

// emitRows packs the batches in order and emits rows and error samples.
func (p *packer) emitRows(ctx context.Context, order <-chan *batch, emit func(sample.Sample) error) error {
	L := p.cfg.seqLen
	var (
		pending  []uint32 // stream ids not yet emitted; pending[0] is stream position base
		base     int64
		total    int64
		ends     []docEnd
		index    int64
		row      int64
		inputAcc int64
	)
	emitOne := func(s sample.Sample) error {
		s.Index = index
		index++
		return emit(s)
	}
	emitRow := func(ids []uint32, nReal int) error {
		start, stop := base, base+int64(L)
		for len(ends) > 0 && ends[0].end <= start {
			ends = ends[1:]
		}
		origin := ""
		if len(ends) > 0 {
			origin = ends[0].origin
			last := ends[len(ends)-1].origin
			for _, e := range ends {
				if e.end >= stop {
					last = e.origin
					break
				}
			}
			if last != origin {
				origin += " .. " + last
			}
		}
		key := "row:" + strconv.FormatInt(row, 10)
		row++
		b := putIDs(make([]byte, 0, L*p.cfg.width), ids, p.cfg.width)
		s := sample.Sample{Key: key, Origin: origin, InputBytes: inputAcc,
			Values: []sample.Column{{Name: p.cfg.output, Value: sample.Value{Kind: sample.KindBytes, Bytes: b, Int: int64(nReal)}}}}
		inputAcc = 0
		base += int64(L)
		return emitOne(s)
	}
	for b := range order {
		select {
		case <-b.done:
		case <-ctx.Done():
			return nil // the group's error explains
		}
		for i := range b.docs {
			d := &b.docs[i]
			if d.err != nil {
				if err := emitOne(sample.Sample{Index: d.s.Index, Key: d.s.Key, Origin: d.s.Origin, InputBytes: d.s.InputBytes, Err: d.err}); err != nil {
					return err
				}
				continue
			}
			pending = append(pending, d.ids...)
			total += int64(len(d.ids))
			inputAcc += d.s.InputBytes
			ends = append(ends, docEnd{end: total, origin: d.s.Origin})
			d.ids = nil
			k := 0
			for ; k+L <= len(pending); k += L {
				if err := emitRow(pending[k:k+L], L); err != nil {
					return err
				}
			}
			if k > 0 {
				pending = append(pending[:0], pending[k:]...)
			}
		}
	}
	if len(pending) > 0 && p.cfg.pad {
		nReal := len(pending)
		for len(pending) < L {
			pending = append(pending, p.cfg.padID)
		}
		return emitRow(pending, nReal)
	}
	return nil
}
