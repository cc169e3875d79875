package mldf

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/mldf/convert/format"
)

// TestFileVerifyOptions: the format.File of an MLDF file refuses to decode without a
// registered decoder (format/mldf/decode is not linked into this test), and
// RequireChecksums fails a file without checksums after its report line.
func TestFileVerifyOptions(t *testing.T) {
	r, err := Open(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f := &File{r}
	if _, err := f.Verify(t.Context(), format.VerifyOptions{Decode: true}); !errors.Is(err, ErrNoDecoder) {
		t.Errorf("Decode without a decoder: %v", err)
	}
	rep, err := f.Verify(t.Context(), format.VerifyOptions{RequireChecksums: true})
	if r.Header().Flags&FlagChecksummed != 0 {
		if err != nil {
			t.Fatal(err)
		}
	} else if !errors.Is(err, ErrNoChecksums) || rep == nil {
		t.Fatalf("no checksums: %v, %v", rep, err)
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil || !strings.HasPrefix(b.String(), goldenPath+": ") {
		t.Errorf("report %q, %v", b.String(), err)
	}
}
