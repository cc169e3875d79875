package imagefield

import (
	"errors"
	"strings"
	"testing"
)

// TestMessagesHeightFirst: an image's size in a message is height first (H×W×C, as
// everywhere in the project), and says so. Each image is a PNG header of a non-square size,
// refused before anything is decoded.
func TestMessagesHeightFirst(t *testing.T) {
	for _, tc := range []struct {
		name      string
		w, h      uint32
		maxPixels int64
		want      error
		text      string
	}{
		{"zero width", 0, 5, 0, ErrDimensions, "header says 5x0 (height x width)"},
		{"wider than 65535", 70000, 10, -1, ErrDimensions, "10x70000 (height x width) exceeds 65535 pixels a side"},
		{"header over the bound", 100000, 50000, 0, ErrTooManyPixels, "header says 50000x100000 (height x width) = 5000000000 pixels"},
		{"decoding over max_pixels", 10000, 8000, 0, ErrTooManyPixels, "of 8000x10000 (height x width) costs 80000000 pixels"},
	} {
		f, err := New("image", Options{Mode: ModeRaw, MaxPixels: tc.maxPixels})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = encodeBytes(f, "wide.png", pngHeader(tc.w, tc.h))
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: %v, want %v saying %q", tc.name, err, tc.want, tc.text)
		}
	}
	_, err := SniffHeader(pngHeader(1<<31, 3))
	if want := "dimensions 3x2147483648 (height x width) out of range"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("PNG of width 2^31: %v, want %q", err, want)
	}
}
