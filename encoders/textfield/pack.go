package textfield

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
)

// ErrNoText is a document sample that lacks the text column.
var ErrNoText = errors.New("text column missing")

// DefaultPackColumn is the column name of the rows Pack emits when PackOptions.Output is "".
const DefaultPackColumn = "tokens"

// MaxSeqLen bounds PackOptions.SeqLen (16 Mi tokens).
const MaxSeqLen = 1 << 24

// PackOptions configure the TEXT_PACKED field (NewPacked) and so the packing stage that
// feeds it (pipeline.Pack with the field).
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
// packed stream, as emitted by the packing stage (pipeline.Pack with this field).
type Packed struct {
	name string
	cfg  *packConfig
}

var _ encoders.Packer = (*Packed)(nil)

// NewPacked returns a TEXT_PACKED field named name. Its samples must come from the packing
// stage run with it (pipeline.Pack).
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
		return nil, fmt.Errorf("field %q: %w: kind %d, %d bytes, want %d bytes (%d ids of %d bytes; does the source run through the packing stage, pipeline.Pack, with this field?)",
			f.name, ErrRow, v.Kind, len(v.Bytes), want, f.cfg.seqLen, f.cfg.width)
	}
	nReal := v.Int
	if nReal <= 0 || nReal > int64(f.cfg.seqLen) {
		nReal = int64(f.cfg.seqLen)
	}
	mldf.TextMeta{NumTokens: uint16(min(nReal, MaxNumTokens)), Encoding: encodingOf(f.cfg.width)}.Put(meta)
	return append([]byte(nil), v.Bytes...), nil
}

// PackLayout returns how the packing stage (pipeline.Pack) cuts the stream into this
// field's rows.
func (f *Packed) PackLayout() encoders.PackLayout {
	return encoders.PackLayout{SeqLen: f.cfg.seqLen, Width: f.cfg.width, PadLast: f.cfg.pad, PadID: f.cfg.padID,
		Column: f.cfg.output, Workers: f.cfg.workers}
}

// DocumentIDs returns the ids one document adds to the packed stream: the text in column
// of s tokenized, then the separator id unless NoSeparator. A sample without the column
// is an ErrNoText. Safe for concurrent use.
func (f *Packed) DocumentIDs(s *sample.Sample, column string) ([]uint32, error) {
	v, ok := s.Get(column)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoText, column)
	}
	text, err := textBytes(column, v)
	if err != nil {
		return nil, err
	}
	ids, err := f.cfg.tok.Encode(text, nil)
	if err != nil {
		return nil, err
	}
	if f.cfg.sep {
		ids = append(ids, f.cfg.sepID)
	}
	return ids, nil
}

// AppendRow appends one row's ids to dst at the field's width, little-endian.
func (f *Packed) AppendRow(dst []byte, ids []uint32) []byte { return putIDs(dst, ids, f.cfg.width) }
