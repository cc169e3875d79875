package flacdec

import (
	"crypto/md5"
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

// cliDecode decodes b with `flac -d` (libFLAC) to raw signed little-endian PCM and returns
// the samples, or ok false when flac rejects the stream.
func cliDecode(t testing.TB, b []byte, bps int) (samples []int32, ok bool, msg string) {
	t.Helper()
	cli := flacCLI(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "x.flac"), filepath.Join(dir, "x.raw")
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cli, "-d", "-s", "-f", "--force-raw-format", "--endian=little", "--sign=signed", "-o", out, in)
	if o, err := cmd.CombinedOutput(); err != nil {
		return nil, false, string(o)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return fromLE(raw, bps), true, ""
}

// fromLE converts signed little-endian samples of ceil(bps/8) bytes to int32.
func fromLE(raw []byte, bps int) []int32 {
	w := (bps + 7) / 8
	s := make([]int32, len(raw)/w)
	for i := range s {
		var v uint32
		for j := range w {
			v |= uint32(raw[i*w+j]) << (8 * j)
		}
		sh := 32 - 8*w
		s[i] = int32(v<<sh) >> sh
	}
	return s
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
