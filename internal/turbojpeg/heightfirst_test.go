//go:build cgo

package turbojpeg

import (
	"errors"
	"strings"
	"testing"
)

// TestMessagesHeightFirst: an image's size in an argument error is height first (H×W, as
// everywhere in the project), and says so.
func TestMessagesHeightFirst(t *testing.T) {
	var p Planes
	err := p.Alloc(6, 0, Samp420)
	if want := "0x6 (height x width) planes"; !errors.Is(err, ErrArgument) || !strings.Contains(err.Error(), want) {
		t.Errorf("Alloc(6, 0): %v, want %q", err, want)
	}
	p = Planes{Width: 70000, Height: 4, Subsampling: Samp420}
	if err, want := p.check(), "4x70000 (height x width) planes"; !errors.Is(err, ErrArgument) || !strings.Contains(err.Error(), want) {
		t.Errorf("check of 70000 wide planes: %v, want %q", err, want)
	}
}
