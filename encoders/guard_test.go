package encoders

import (
	"errors"
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	long := strings.Repeat("é", 1000)
	cases := []struct {
		name string
		call func() error
		want string // "" for no error
	}{
		{"ok", func() error { return nil }, ""},
		{"error", func() error { return errors.New("bad header") }, "bad header"},
		{"runtime error", func() error { var s []int; _ = s[3]; return nil }, "index out of range"},
		{"panic value", func() error { panic("boom") }, `"boom"`},
		{"long value", func() error { panic(long) }, `..."`},
	}
	for _, c := range cases {
		err := Guard("image/png", c.call)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		var dp *DecoderPanic
		if strings.HasPrefix(c.name, "runtime") || strings.HasPrefix(c.name, "panic") || strings.HasPrefix(c.name, "long") {
			if !errors.As(err, &dp) || !errors.Is(err, ErrDecoderPanic) || dp.Reason() != "decoder panic" || !strings.Contains(err.Error(), "image/png") {
				t.Errorf("%s: %v is not a DecoderPanic naming image/png", c.name, err)
			}
			if len(err.Error()) > 2*maxPanicValue+100 {
				t.Errorf("%s: %d-byte message", c.name, len(err.Error()))
			}
		}
	}
}
