package flacdec

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// flacCLI returns the path of the reference `flac` tool or skips the test.
func flacCLI(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("flac")
	if err != nil {
		t.Skip("flac CLI not on PATH")
	}
	return p
}

// cliDecode decodes b with `flac -d` (libFLAC) to WAV and returns the samples at bps bits,
// or ok false when flac rejects the stream. (flac writes raw PCM only at 8/16/24/32 bits;
// WAV holds every depth, left-justified in whole bytes, 8-bit unsigned.)
func cliDecode(t testing.TB, b []byte, bps int) (samples []int32, ok bool, msg string) {
	t.Helper()
	cli := flacCLI(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "x.flac"), filepath.Join(dir, "x.wav")
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cli, "-d", "-s", "-f", "-o", out, in)
	if o, err := cmd.CombinedOutput(); err != nil {
		return nil, false, string(o)
	}
	w, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s, err := wavSamples(w, bps)
	if err != nil {
		t.Fatalf("flac -d output: %v", err)
	}
	return s, true, ""
}

// wavSamples returns the samples of the WAV flac -d writes, at bps bits.
func wavSamples(b []byte, bps int) ([]int32, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, fmt.Errorf("not a WAV file")
	}
	width := 0
	for p := 12; p+8 <= len(b); {
		id, n := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:]))
		body := b[p+8 : min(len(b), p+8+n)]
		switch id {
		case "fmt ":
			if len(body) < 16 {
				return nil, fmt.Errorf("short fmt chunk")
			}
			width = int(binary.LittleEndian.Uint16(body[12:])) / int(binary.LittleEndian.Uint16(body[2:]))
		case "data":
			if width == 0 {
				return nil, fmt.Errorf("data before fmt")
			}
			s := make([]int32, len(body)/width)
			for i := range s {
				var v int32
				if width == 1 {
					v = int32(body[i]) - 128
				} else {
					var u uint32
					for j := range width {
						u |= uint32(body[i*width+j]) << (8 * j)
					}
					sh := 32 - 8*width
					v = int32(u<<sh) >> sh
				}
				s[i] = v >> (8*width - bps)
			}
			return s, nil
		}
		p += 8 + n + n&1
	}
	return nil, fmt.Errorf("no data chunk")
}

// pcmMD5 is the MD5 RFC 9639 defines over interleaved samples.
func pcmMD5(samples []int32, bps int) [16]byte {
	w := (bps + 7) / 8
	b := make([]byte, 0, len(samples)*w)
	for _, x := range samples {
		for i := range w {
			b = append(b, byte(x>>(8*i)))
		}
	}
	return md5.Sum(b)
}

// sameSamples fails the test at the first sample that differs.
func sameSamples(t testing.TB, name string, got, want []int32, channels int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: decoded %d samples, want %d", name, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: sample %d channel %d = %d, want %d", name, i/channels, i%channels, got[i], want[i])
		}
	}
}

// sharedDir returns ../shared/testdata/mini/audio or skips the test.
func sharedDir(t testing.TB) string {
	t.Helper()
	d := filepath.Join("..", "..", "..", "shared", "testdata", "mini", "audio")
	if _, err := os.Stat(d); err != nil {
		t.Skip("../shared/testdata/mini not present (a plain clone has no ../shared)")
	}
	return d
}

// exec_LookPath reports whether the flac CLI is on PATH (tests that also work without it).
func exec_LookPath() (string, error) { return exec.LookPath("flac") }
