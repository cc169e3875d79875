package turbojpeg

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestDamagingWarning(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want bool
	}{
		// Every JWRN_* of libjpeg-turbo 2.1.5's jerror.h, formatted.
		{"Corrupt JPEG data: premature end of data segment", true},
		{"Premature end of JPEG file", true},
		{"Corrupt JPEG data: bad Huffman code", true},
		{"Corrupt JPEG data: bad arithmetic code", true},
		{"Corrupt JPEG data: found marker 0xd9 instead of RST3", true},
		{"Inconsistent progression sequence for component 0 coefficient 1", true},
		{"Invalid SOS parameters for sequential JPEG", true},
		{"Unknown Adobe color transform code 7", true},
		{"Application transferred too many scanlines", true},
		{"Corrupt JPEG data: 3 extraneous bytes before marker 0xd9", false},
		{"Warning: unknown JFIF revision number 3.01", false},
		{"Corrupt JPEG data: bad ICC marker", false},
		// Case does not matter (the issue: "Premature end" missed "premature end").
		{"CORRUPT JPEG DATA: PREMATURE END OF DATA SEGMENT", true},
		{"corrupt jpeg data: 12 EXTRANEOUS BYTES BEFORE MARKER 0xD9", false},
		// Anything unknown counts as damage.
		{"Corrupt JPEG data: something new", true},
		{"A warning from a newer libjpeg-turbo", true},
		{"", true},
	} {
		if got := DamagingWarning(tc.msg); got != tc.want {
			t.Errorf("DamagingWarning(%q) = %v, want %v", tc.msg, got, tc.want)
		}
	}
}

// TestLinkedWarnings decodes damaged JPEGs with the libjpeg-turbo we link and checks the exact
// warning each gives, in both decode paths, and how it is classified. It
// also shows why no warning can be trusted: libjpeg reports only the first one, so junk
// before a marker hides a truncated scan after it.
func TestLinkedWarnings(t *testing.T) {
	if !Available() {
		t.Skip("built without cgo")
	}
	base := testJPEG(t, 256, 256, false)
	rst, err1 := os.ReadFile("../../encoders/imagefield/testdata/go_video-001.restart2.jpeg")
	prog, err2 := os.ReadFile("../../encoders/imagefield/testdata/go_video-001.progressive.jpeg")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	eoi := []byte{0xff, 0xd9}
	sos := bytes.Index(base, []byte{0xff, 0xda})
	mid := sos + (len(base)-sos)/2
	nth := func(b []byte, marker func(byte) bool, n int) int {
		for i := 0; i+1 < len(b); i++ {
			if b[i] == 0xff && marker(b[i+1]) {
				if n--; n == 0 {
					return i
				}
			}
		}
		t.Fatal("marker not found")
		return 0
	}
	isRST := func(c byte) bool { return c >= 0xd0 && c <= 0xd7 }
	isSOS := func(c byte) bool { return c == 0xda }
	r2 := nth(rst, isRST, 2)
	p3 := nth(prog, isSOS, 3)
	lostRST := bytes.Clone(rst)
	lostRST[r2+1] ^= 0x02 // RSTn becomes RSTn±2
	// The entropy decoder reads a few bytes ahead into its bit buffer and drops them at a
	// restart marker: only junk beyond that is reported.
	junkRST := cat(rst[:r2], bytes.Repeat([]byte{0x55}, 32), rst[r2:])
	junkProg := cat(prog[:p3], []byte{0x55, 0x66}, prog[p3:])
	badHuff := bytes.Clone(base)
	for i := mid; i < mid+64; i += 2 { // stuffed 0xFF bytes: runs of 1 bits, which no Huffman code is
		badHuff[i], badHuff[i+1] = 0xff, 0x00
	}
	for _, tc := range []struct {
		name    string
		data    []byte
		msg     string // exact, as libjpeg-turbo 2.1.5 writes it
		damaged bool
	}{
		{"cut in the scan, EOI appended", cat(base[:mid], eoi), "Corrupt JPEG data: premature end of data segment", true},
		{"cut in the scan", base[:mid], "Premature end of JPEG file", true},
		{"progressive, cut, EOI appended", cat(prog[:len(prog)*3/4], eoi), "Corrupt JPEG data: premature end of data segment", true},
		{"restart marker renumbered", lostRST, "Corrupt JPEG data: found marker 0x", true},
		{"bad Huffman code", badHuff, "Corrupt JPEG data: bad Huffman code", true},
		{"junk before EOI", cat(base[:len(base)-2], []byte{1, 2, 3}, eoi), "Corrupt JPEG data: 3 extraneous bytes before marker 0xd9", false},
		{"junk before a restart marker", junkRST, " extraneous bytes before marker 0xd", false},
		// The first warning is harmless; the truncation after it is not reported at all.
		{"junk, then cut with EOI (hidden)", cat(junkProg[:len(junkProg)*3/4], eoi), "Corrupt JPEG data: 2 extraneous bytes before marker 0xda", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _ := NewDecoder()
			defer d.Close()
			_, _, _, err := d.Decode(tc.data, 8, RGB, nil)
			var p Planes
			errYUV := d.DecodeYUV(tc.data, 8, &p)
			for path, err := range map[string]error{"Decode": err, "DecodeYUV": errYUV} {
				if !errors.Is(err, ErrWarning) || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("%s: %v, want the warning %q", path, err, tc.msg)
				}
				if errors.Is(err, ErrDamaged) != tc.damaged {
					t.Fatalf("%s: %v: damaged %v, want %v", path, err, errors.Is(err, ErrDamaged), tc.damaged)
				}
			}
		})
	}
}
