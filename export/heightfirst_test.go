package export

import (
	"errors"
	"strings"
	"testing"

	"github.com/mldf/convert/format/mldf"
)

// TestRawImageMessageHeightFirst: a raw image whose payload does not hold its pixels is
// named height first (H×W×C), and says so.
func TestRawImageMessageHeightFirst(t *testing.T) {
	for _, tc := range []struct {
		m    mldf.ImageMeta
		size int
		want string
	}{
		{mldf.ImageMeta{Height: 2, Width: 3, Channels: 3}, 5, "raw image 2x3x3 (height x width x channels) needs 18 bytes, payload has 5"},
		{mldf.ImageMeta{Height: 7, Width: 1, Channels: 1}, 6, "raw image 7x1x1 (height x width x channels) needs 7 bytes, payload has 6"},
		{mldf.ImageMeta{Height: 0, Width: 4, Channels: 4}, 0, "raw image 0x4x4 (height x width x channels) needs 0 bytes"},
	} {
		_, err := rawToPNG(tc.m, make([]byte, tc.size))
		if !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v with %d bytes: %v, want %q", tc.m, tc.size, err, tc.want)
		}
	}
}
