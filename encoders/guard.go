package encoders

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrDecoderPanic marks a sample whose bytes made a third-party decoder panic (see Guard).
var ErrDecoderPanic = errors.New("third-party decoder panicked")

// DecoderPanic is the error of a sample whose bytes made a third-party decoder (image/png,
// golang.org/x/image/webp, tiktoken-go...) panic: a bug of that library on untrusted input,
// which rejects the sample rather than the run. Its reject reason is "decoder panic".
type DecoderPanic struct {
	Decoder string // the library, e.g. "image/png"
	Value   string // what it panicked with, bounded
}

// maxPanicValue bounds the panic value kept in a DecoderPanic: it may quote the input.
const maxPanicValue = 200

func (e *DecoderPanic) Error() string {
	return fmt.Sprintf("%v: %s panicked on this input: %s", ErrDecoderPanic, e.Decoder, e.Value)
}

// Unwrap returns ErrDecoderPanic.
func (e *DecoderPanic) Unwrap() error { return ErrDecoderPanic }

// Reason is the sample's reject reason class.
func (e *DecoderPanic) Reason() string { return "decoder panic" }

// Guard calls call, which must be nothing but a call into a third-party decoder on
// untrusted bytes (with its results stored by the closure), and turns a panic in it into a
// *DecoderPanic naming decoder. Our own code is never guarded: a panic in it (a
// runtime.Error, a broken invariant) is a bug, and fails the run with its stack.
func Guard(decoder string, call func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &DecoderPanic{Decoder: decoder, Value: bound(fmt.Sprint(p))}
		}
	}()
	return call()
}

// bound cuts s to maxPanicValue bytes (at a rune boundary) and quotes it.
func bound(s string) string {
	if len(s) > maxPanicValue {
		n := maxPanicValue
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "..."
	}
	return fmt.Sprintf("%q", s)
}
