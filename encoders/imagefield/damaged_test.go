package imagefield

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/mldf/convert/internal/turbojpeg"
)

// allPaths returns the field on every decode path: libjpeg-turbo planar (YUV), libjpeg-turbo
// RGB, and the Go decoders.
func allPaths(t *testing.T, o Options) []*Field {
	fs := variants(t, o)
	if fs[0].turbo {
		g, _ := New("image", o)
		g.rgb = true
		fs = append(fs, g)
	}
	return fs
}

// TestDamagedJPEG: a baseline JPEG cut in the middle of its scan with an EOI
// marker appended (libjpeg-turbo warns "Corrupt JPEG data: premature end of data segment",
// lower-case p) is rejected on every decode path and in every mode that decodes it, instead
// of being stored with a grey bottom. Harmless warnings still let the image through, and a
// harmless warning hiding a truncation does not.
func TestDamagedJPEG(t *testing.T) {
	if raceEnabled {
		t.Skip("every damage on both decoder paths: heavy and single-goroutine, run without -race (race_test.go)")
	}
	base := jpegBytes(t, 256, 192, 3)
	sos := bytes.Index(base, []byte{0xff, 0xda})
	cut := sos + (len(base)-sos)/2
	eoi := []byte{0xff, 0xd9}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	prog, err := os.ReadFile("testdata/go_video-001.progressive.jpeg")
	if err != nil {
		t.Fatal(err)
	}
	third := 0
	for i, n := 0, 0; i+1 < len(prog); i++ {
		if prog[i] == 0xff && prog[i+1] == 0xda {
			if n++; n == 3 {
				third = i
				break
			}
		}
	}
	junkProg := cat(prog[:third], []byte{0x55, 0x66}, prog[third:])
	for _, tc := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"cut in the scan, EOI appended", cat(base[:cut], eoi), false},
		{"cut in the scan", base[:cut], false},
		{"progressive cut, EOI appended", cat(prog[:len(prog)*3/4], eoi), false},
		{"junk before a scan, then cut, EOI appended", cat(junkProg[:len(junkProg)*3/4], eoi), false},
		{"junk before EOI (harmless)", cat(base[:len(base)-2], []byte{1, 2, 3}, eoi), true},
		{"junk before a scan (harmless)", junkProg, true},
	} {
		for _, o := range []Options{
			{Mode: ModeJPEG}, {Mode: ModeJPEG, MaxResolution: 100}, {Mode: ModeRaw},
			{Mode: ModePNG, Channels: 1}, {Mode: ModeSmart, MaxResolution: 100},
		} {
			for _, f := range allPaths(t, o) {
				name := tc.name + "/" + o.Mode.String() + "/" + pathName(f)
				out, m, err := encodeBytes(f, "cut.jpg", tc.data)
				if !tc.ok {
					if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "cut.jpg") {
						t.Errorf("%s: err %v, want ErrCorrupt naming the file", name, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				got := decodePayload(t, out, m)
				want := reference(t, f, tc.data)
				if d := meanAbsDiff(t, got, want); d > 7 {
					t.Errorf("%s: differs from the Go decoder's image by %.2f", name, d)
				}
			}
		}
	}
}

// TestDamagedJPEGSkipsSecondDecode: a warning that already says the data is damaged is
// rejected without the Go decoder's second opinion; its message says what libjpeg-turbo saw.
func TestDamagedJPEGSkipsSecondDecode(t *testing.T) {
	if !turbojpeg.Available() {
		t.Skip("built without cgo")
	}
	base := jpegBytes(t, 256, 192, 3)
	cut := append(bytes.Clone(base[:len(base)*2/3]), 0xff, 0xd9)
	f, _ := New("image", Options{Mode: ModeJPEG})
	_, _, err := encodeBytes(f, "cut.jpg", cut)
	if !errors.Is(err, ErrCorrupt) || !errors.Is(err, turbojpeg.ErrDamaged) ||
		!strings.Contains(err.Error(), "premature end of data segment") {
		t.Fatalf("%v", err)
	}
	t.Log(err)
}
