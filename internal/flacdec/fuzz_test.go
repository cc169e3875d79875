package flacdec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/internal/flacenc"
)

// FuzzDecode decodes arbitrary bytes: never a panic, and what decodes without error is
// consistent with its STREAMINFO (sample count, channels, MD5, sample range). Seeds: the
// small real files in testdata and short streams of our encoder.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.flac")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, c := range []struct{ nch, bps, block int }{{1, 16, 192}, {2, 24, 256}, {2, 8, 64}, {3, 12, 100}, {2, 32, 300}} {
		s := testClip(600, c.nch, c.bps, 1)
		b, err := flacenc.Append(nil, s, flacenc.Info{SampleRate: 8000, Channels: c.nch, BitsPerSample: c.bps}, flacenc.Options{BlockSize: c.block})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, info, err := DecodeOptions(b, Options{MaxSamples: 1 << 22})
		if err != nil {
			return
		}
		if len(s)%info.Channels != 0 || len(s) == 0 {
			t.Fatalf("%d samples for %d channels", len(s), info.Channels)
		}
		if info.TotalSamples != 0 && uint64(len(s)/info.Channels) != info.TotalSamples {
			t.Fatalf("%d samples per channel, STREAMINFO %d", len(s)/info.Channels, info.TotalSamples)
		}
		if info.MD5Set() && pcmMD5(s, info.BitsPerSample) != info.MD5 {
			t.Fatal("accepted with a wrong MD5")
		}
		if info.BitsPerSample < 32 && !inRange(s, uint(info.BitsPerSample)) {
			t.Fatal("accepted samples beyond the bit depth")
		}
	})
}
