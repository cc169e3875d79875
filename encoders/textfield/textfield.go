// Package textfield encodes text columns as the MLDF text fields: TEXT_RAW (UTF-8 bytes),
// TEXT_TOKENIZED (BPE token ids of one document) and TEXT_PACKED (fixed-length rows cut from
// the token stream of consecutive documents, produced by the packing stage pipeline.Pack).
//
// The tokenizers are OpenAI's BPE vocabularies compiled into the binary
// (github.com/tiktoken-go/tokenizer): nothing is downloaded at run time. The descriptor
// arguments record the tokenizer, the id width and the end-of-text handling; their layout is
// in docs/fields/text.md.
package textfield

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sample"
)

// Errors returned by the text fields. They are wrapped with the field name and detail.
var (
	ErrUTF8      = errors.New("text is not valid UTF-8")
	ErrKind      = errors.New("value is not text")
	ErrTokenizer = errors.New("unknown tokenizer")
	ErrOption    = errors.New("invalid text field option")
	ErrRow       = errors.New("packed row has the wrong size")
	ErrTokenLoss = errors.New("tokenizer lost text (tiktoken-go drops U+007F DEL)")
)

// ArgsVersion is the layout version written in byte 0 of the arguments of every text field.
const ArgsVersion = mldf.ArgsVersion

// Argument flag bits (u16 at offset 2 of the arguments).
const (
	FlagEndID   = mldf.TextFlagEnd     // TEXT_TOKENIZED: end id appended; TEXT_PACKED: separator between documents
	FlagPadLast = mldf.TextFlagPadLast // TEXT_PACKED: the last partial row is padded (else dropped)
)

// MaxNumTokens is where TextMeta.num_tokens saturates.
const MaxNumTokens = 65535

// textBytes returns v's bytes if v holds text, checking UTF-8 unless the source already did
// (sample.Value.UTF8).
func textBytes(field string, v sample.Value) ([]byte, error) {
	switch v.Kind {
	case sample.KindString, sample.KindBytes, sample.KindFile:
	default:
		return nil, fmt.Errorf("field %q: %w (kind %d)", field, ErrKind, v.Kind)
	}
	b, err := v.Load()
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", field, err)
	}
	if !(v.UTF8 && v.Kind != sample.KindFile) && !utf8.Valid(b) {
		return nil, fmt.Errorf("field %q: %w at byte %d", field, ErrUTF8, firstInvalid(b))
	}
	return b, nil
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// Raw is a TEXT_RAW field: the payload is the text's UTF-8 bytes, num_tokens 0, encoding 0.
type Raw struct{ name string }

var _ encoders.Field = (*Raw)(nil)

// NewRaw returns a TEXT_RAW field named name.
func NewRaw(name string) (*Raw, error) {
	if err := mldf.ValidateName(name); err != nil {
		return nil, err
	}
	return &Raw{name: name}, nil
}

// Name returns the field name.
func (f *Raw) Name() string { return f.name }

// Type returns manifest.TypeTextRaw.
func (f *Raw) Type() mldf.TypeID { return mldf.TypeTextRaw }

// Arguments returns the descriptor arguments: byte 0 is ArgsVersion, the rest zero.
func (f *Raw) Arguments() [mldf.ArgumentsSize]byte {
	return mldf.TextArgs{}.Marshal()
}

// Encode validates v as UTF-8 and returns a copy of it as the payload.
func (f *Raw) Encode(v sample.Value, meta []byte) ([]byte, error) {
	b := v.Bytes
	if !v.UTF8 || (v.Kind != sample.KindString && v.Kind != sample.KindBytes) {
		// Anything but a string or bytes in memory that its source checked as UTF-8 (a
		// JSONL string, the common case, skips this call) is loaded and checked here.
		var err error
		if b, err = textBytes(f.name, v); err != nil {
			return nil, err
		}
	}
	if err := mldf.CheckPayloadSize(len(b)); err != nil {
		return nil, fmt.Errorf("field %q: %w", f.name, err)
	}
	mldf.TextMeta{NumTokens: 0, Encoding: mldf.TextUTF8}.Put(meta)
	if len(b) == 0 {
		return nil, nil
	}
	return b, nil // a sample's bytes are read-only once emitted (sample.Value): no copy
}

// Pretokenized is the tokenizer name of a field whose values already are token ids (a JSON
// array of integers, such as a Parquet list column of input_ids): they are stored as given.
const Pretokenized = "none"

// TokenizedOptions configure a TEXT_TOKENIZED field.
type TokenizedOptions struct {
	// Tokenizer is the vocabulary name (see Tokenizers); "" means cl100k_base; Pretokenized
	// ("none") takes the ids from the value (a JSON array of integers).
	Tokenizer string
	// AppendEnd appends an end id after the document's tokens.
	AppendEnd bool
	// EndID is the id appended; 0 means the tokenizer's <|endoftext|>.
	EndID uint32
	// IDWidth is 2 (int16) or 4 (int32) bytes per id; 0 chooses 2 when every id the field can
	// write (the vocabulary and EndID) is <= 32767, else 4. The built-in vocabularies all need 4.
	IDWidth int
}

// Tokenized is a TEXT_TOKENIZED field: the payload is the document's token ids,
// little-endian int16 or int32, optionally followed by an end id.
type Tokenized struct {
	name  string
	tok   *Tokenizer
	end   bool
	endID uint32
	width int
}

var _ encoders.Field = (*Tokenized)(nil)

// NewTokenized returns a TEXT_TOKENIZED field named name.
func NewTokenized(name string, opt TokenizedOptions) (*Tokenized, error) {
	if err := mldf.ValidateName(name); err != nil {
		return nil, err
	}
	if opt.Tokenizer == Pretokenized {
		return newPretokenized(name, opt)
	}
	tok, err := NewTokenizer(opt.Tokenizer)
	if err != nil {
		return nil, err
	}
	f := &Tokenized{name: name, tok: tok, end: opt.AppendEnd, endID: opt.EndID}
	if f.endID == 0 {
		f.endID = tok.EOT()
	}
	maxID := tok.VocabSize() - 1
	if f.end {
		maxID = max(maxID, f.endID)
	}
	if f.width, err = idWidth(opt.IDWidth, maxID); err != nil {
		return nil, fmt.Errorf("field %q: %w", name, err)
	}
	return f, nil
}

// idWidth applies the width rule: int16 only when every id fits.
func idWidth(want int, maxID uint32) (int, error) {
	switch want {
	case 0:
		if maxID <= 32767 {
			return 2, nil
		}
		return 4, nil
	case 2:
		if maxID > 32767 {
			return 0, fmt.Errorf("%w: ids up to %d do not fit int16", ErrOption, maxID)
		}
		return 2, nil
	case 4:
		if maxID > 1<<31-1 {
			return 0, fmt.Errorf("%w: ids up to %d do not fit int32", ErrOption, maxID)
		}
		return 4, nil
	}
	return 0, fmt.Errorf("%w: id width %d (want 2 or 4)", ErrOption, want)
}

func encodingOf(width int) uint8 {
	if width == 2 {
		return mldf.TextTokens16
	}
	return mldf.TextTokens32
}

// Name returns the field name.
func (f *Tokenized) Name() string { return f.name }

// Type returns manifest.TypeTextTokenized.
func (f *Tokenized) Type() mldf.TypeID { return mldf.TypeTextTokenized }

// Width returns the bytes per token id (2 or 4).
func (f *Tokenized) Width() int { return f.width }

// Tokenizer returns the field's tokenizer.
func (f *Tokenized) Tokenizer() *Tokenizer { return f.tok }

// Arguments returns the descriptor arguments (docs/fields/text.md).
func (f *Tokenized) Arguments() [mldf.ArgumentsSize]byte {
	var flags uint16
	endID := uint32(0)
	if f.end {
		flags |= FlagEndID
		endID = f.endID
	}
	return putArgs(f.tok, f.width, flags, endID, 0, 0)
}

// putArgs writes the argument layout shared by TEXT_TOKENIZED and TEXT_PACKED.
func putArgs(tok *Tokenizer, width int, flags uint16, endID, seqLen, padID uint32) [mldf.ArgumentsSize]byte {
	a := mldf.TextArgs{Width: uint8(width), Flags: flags, EndID: endID, SeqLen: seqLen, PadID: padID, Tokenizer: Pretokenized}
	if tok != nil { // else pretokenized: vocabulary size unknown (0)
		a.VocabSize, a.Tokenizer = tok.VocabSize(), tok.Name()
	}
	return a.Marshal()
}

// Encode tokenizes v and returns its ids (a pretokenized field parses them from v).
func (f *Tokenized) Encode(v sample.Value, meta []byte) ([]byte, error) {
	var ids []uint32
	if f.tok == nil {
		var err error
		if ids, err = parseIDs(f.name, v, f.width); err != nil {
			return nil, err
		}
	} else {
		if v.Kind == sample.KindJSON {
			return nil, fmt.Errorf("field %q: %w: the value holds token ids, not text (use tokenizer: %s)", f.name, ErrKind, Pretokenized)
		}
		b, err := textBytes(f.name, v)
		if err != nil {
			return nil, err
		}
		if ids, err = f.tok.Encode(b, nil); err != nil {
			return nil, fmt.Errorf("field %q: %w", f.name, err)
		}
	}
	if f.end {
		ids = append(ids, f.endID)
	}
	if err := mldf.CheckPayloadSize(len(ids) * f.width); err != nil {
		return nil, fmt.Errorf("field %q: %w", f.name, err)
	}
	mldf.TextMeta{NumTokens: uint16(min(len(ids), MaxNumTokens)), Encoding: encodingOf(f.width)}.Put(meta)
	if len(ids) == 0 {
		return nil, nil
	}
	return putIDs(make([]byte, 0, len(ids)*f.width), ids, f.width), nil
}

// putIDs appends ids little-endian, width bytes each.
func putIDs(dst []byte, ids []uint32, width int) []byte {
	if width == 2 {
		for _, id := range ids {
			dst = binary.LittleEndian.AppendUint16(dst, uint16(id))
		}
		return dst
	}
	for _, id := range ids {
		dst = binary.LittleEndian.AppendUint32(dst, id)
	}
	return dst
}

// DecodeIDs reads the ids of a TEXT_TOKENIZED or TEXT_PACKED payload of the given encoding
// (manifest.TextTokens16 or TextTokens32).
func DecodeIDs(payload []byte, encoding uint8) ([]uint32, error) {
	width := 4
	if encoding == mldf.TextTokens16 {
		width = 2
	} else if encoding != mldf.TextTokens32 {
		return nil, fmt.Errorf("%w: encoding %d holds no token ids", ErrOption, encoding)
	}
	if len(payload)%width != 0 {
		return nil, fmt.Errorf("%w: %d bytes is not a multiple of %d", ErrRow, len(payload), width)
	}
	ids := make([]uint32, len(payload)/width)
	for i := range ids {
		if width == 2 {
			ids[i] = uint32(binary.LittleEndian.Uint16(payload[2*i:]))
		} else {
			ids[i] = binary.LittleEndian.Uint32(payload[4*i:])
		}
	}
	return ids, nil
}

// newPretokenized returns a TEXT_TOKENIZED field that stores the ids its values hold.
func newPretokenized(name string, opt TokenizedOptions) (*Tokenized, error) {
	if opt.AppendEnd && opt.EndID == 0 {
		return nil, fmt.Errorf("field %q: %w: appending an end id to pretokenized text needs the id", name, ErrOption)
	}
	width := opt.IDWidth
	if width == 0 {
		width = 4
	}
	if _, err := idWidth(width, opt.EndID); err != nil {
		return nil, fmt.Errorf("field %q: %w", name, err)
	}
	return &Tokenized{name: name, end: opt.AppendEnd, endID: opt.EndID, width: width}, nil
}

// parseIDs reads a JSON array of token ids that fit the id width.
func parseIDs(field string, v sample.Value, width int) ([]uint32, error) {
	if v.Kind != sample.KindJSON {
		return nil, fmt.Errorf("field %q: %w: a pretokenized field takes a JSON array of ids (kind %d)", field, ErrKind, v.Kind)
	}
	limit := uint64(1<<31 - 1)
	if width == 2 {
		limit = 32767
	}
	b := v.Bytes
	i := 0
	space := func() {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
	}
	bad := func(what string) error {
		return fmt.Errorf("field %q: %w: token ids: %s at byte %d", field, ErrKind, what, i)
	}
	space()
	if i >= len(b) || b[i] != '[' {
		return nil, bad("not a JSON array")
	}
	i++
	ids := make([]uint32, 0, len(b)/4)
	space()
	if i < len(b) && b[i] == ']' {
		i++
	} else {
		for {
			space()
			start := i
			var n uint64
			for i < len(b) && b[i] >= '0' && b[i] <= '9' {
				n = n*10 + uint64(b[i]-'0')
				if n > limit {
					return nil, bad(fmt.Sprintf("an id above %d", limit))
				}
				i++
			}
			if i == start || (b[start] == '0' && i-start > 1) {
				return nil, bad("not a non-negative JSON integer")
			}
			ids = append(ids, uint32(n))
			space()
			if i < len(b) && b[i] == ',' {
				i++
				continue
			}
			if i < len(b) && b[i] == ']' {
				i++
				break
			}
			return nil, bad("expected , or ]")
		}
	}
	space()
	if i != len(b) {
		return nil, bad("trailing data")
	}
	return ids, nil
}
