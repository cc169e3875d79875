package textfield

import (
	"math"

	"github.com/mldf/convert/encoders"
)

// The choices and ranges of the text fields' recipe options.
var (
	// TokenizerChoices are the values of tokenizer: the built-in vocabularies (Tokenizers)
	// in the documentation's order, and none (the values are token ids already).
	TokenizerChoices = []string{"cl100k_base", "o200k_base", "p50k_base", "r50k_base", "none"}
	// Remainders are the values of remainder.
	Remainders = []string{"drop", "pad"}
)

// MaxPadID is the largest pad_id: a token id is a uint32.
const MaxPadID = math.MaxUint32

var (
	_ encoders.Field = (*Raw)(nil)
	_ encoders.Field = (*Tokenized)(nil)
	_ encoders.Field = (*Packed)(nil)
)

func init() {
	encoders.Register(encoders.FieldSpec{Type: "text",
		New: func(name string, _ *encoders.Options) (encoders.Field, error) { return NewRaw(name) }})
	encoders.Register(encoders.FieldSpec{
		Type: "tokens",
		Keys: []string{"tokenizer", "append_eot"},
		Defaults: func(o *encoders.Options) {
			o.SetDefault("tokenizer", DefaultTokenizer)
		},
		Check: func(_ string, o *encoders.Options, c *encoders.Checker) {
			c.OneOf("tokenizer", o.String("tokenizer"), TokenizerChoices)
		},
		New: func(name string, o *encoders.Options) (encoders.Field, error) {
			return NewTokenized(name, TokenizedOptions{Tokenizer: o.String("tokenizer"), AppendEnd: o.Bool("append_eot")})
		},
	})
	encoders.Register(encoders.FieldSpec{
		Type: "packed",
		Keys: []string{"tokenizer", "seq_len", "remainder", "pad_id"},
		Defaults: func(o *encoders.Options) {
			o.SetDefault("tokenizer", DefaultTokenizer)
			o.SetDefault("remainder", "drop")
		},
		Check: func(_ string, o *encoders.Options, c *encoders.Checker) {
			c.OneOf("tokenizer", o.String("tokenizer"), TokenizerChoices)
			if n := o.Int("seq_len"); n == 0 && !o.Refused("seq_len") {
				c.Add("seq_len", "%s: seq_len is required (1..%d tokens per row)", c.Where, MaxSeqLen)
			} else if n != 0 {
				c.In("seq_len", n, 1, MaxSeqLen, "")
			}
			c.OneOf("remainder", o.String("remainder"), Remainders)
			if id, ok := o.Lookup("pad_id"); ok {
				if n, _ := id.(int64); n < 0 || n > MaxPadID {
					c.Add("pad_id", "%s: pad_id %d is out of range: 0..%d", c.Where, n, int64(MaxPadID))
				}
			}
		},
		New: func(name string, o *encoders.Options) (encoders.Field, error) {
			opt := PackOptions{Tokenizer: o.String("tokenizer"), SeqLen: int(o.Int("seq_len")), PadLast: o.String("remainder") == "pad"}
			if id, ok := o.Lookup("pad_id"); ok {
				n, _ := id.(int64)
				opt.PadID = uint32(n)
			}
			return NewPacked(name, opt)
		},
	})
}
