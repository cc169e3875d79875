package flacenc

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/mewkiz/flac"
)

func TestRoundTrip(t *testing.T) {
	interleave := func(chs ...[]int32) []int32 {
		out := make([]int32, 0, len(chs)*len(chs[0]))
		for i := range chs[0] {
			for _, c := range chs {
				out = append(out, c[i])
			}
		}
		return out
	}
	tests := []struct {
		name    string
		samples []int32
		info    Info
		opts    Options
	}{
		{"speech 8k 16-bit", speechLike(8000, 3, 1, 16), Info{8000, 1, 16}, Options{}},
		{"speech 16k 16-bit fast", speechLike(16000, 2, 2, 16), Info{16000, 1, 16}, Options{Level: LevelFast}},
		{"speech 16k 16-bit best", speechLike(16000, 1, 3, 16), Info{16000, 1, 16}, Options{Level: LevelBest}},
		{"music 44.1k stereo 16-bit", musicLike(44100, 2, 2, 4, 16), Info{44100, 2, 16}, Options{}},
		{"music 48k stereo 24-bit", musicLike(48000, 1, 2, 5, 24), Info{48000, 2, 24}, Options{}},
		{"music 22.05k stereo 8-bit", musicLike(22050, 1, 2, 6, 8), Info{22050, 2, 8}, Options{}},
		{"music 6ch 16-bit", musicLike(48000, 0.5, 6, 7, 16), Info{48000, 6, 16}, Options{}},
		{"music 8ch 24-bit", musicLike(96000, 0.2, 8, 8, 24), Info{96000, 8, 24}, Options{}},
		{"music 3ch 12-bit odd rate", musicLike(11111, 1, 3, 9, 12), Info{11111, 3, 12}, Options{}},
		{"music 20-bit 100 kHz", musicLike(100000, 0.3, 2, 10, 20), Info{100000, 2, 20}, Options{}},
		{"speech best 24-bit", speechLike(48000, 0.5, 12, 24), Info{48000, 1, 24}, Options{Level: LevelBest}},
		{"silence stereo", make([]int32, 2*10000), Info{44100, 2, 16}, Options{}},
		{"dc mono", bytes32(5000, -77), Info{44100, 1, 16}, Options{}},
		{"noise 16-bit", whiteNoise(9000, 16, 1), Info{44100, 1, 16}, Options{}},
		{"noise 24-bit stereo", whiteNoise(2*5000, 24, 2), Info{44100, 2, 24}, Options{}},
		{"noise 8-bit", whiteNoise(4100, 8, 3), Info{8000, 1, 8}, Options{}},
		{"one sample", []int32{123}, Info{8000, 1, 16}, Options{}},
		{"one stereo sample", []int32{-32768, 32767}, Info{8000, 2, 16}, Options{}},
		{"empty", nil, Info{8000, 1, 16}, Options{}},
		{"odd length 4097", speechLike(8000, 4097.0/8000, 13, 16), Info{8000, 1, 16}, Options{}},
		{"17 samples", speechLike(8000, 17.0/8000, 14, 16), Info{8000, 1, 16}, Options{}},
		{"block 16", speechLike(8000, 0.1, 15, 16), Info{8000, 1, 16}, Options{BlockSize: 16}},
		{"block 65535", musicLike(44100, 2, 2, 16, 16), Info{44100, 2, 16}, Options{BlockSize: 65535}},
		{"block 1000", musicLike(44100, 0.3, 2, 17, 16), Info{44100, 2, 16}, Options{BlockSize: 1000}},
		{"block 192", musicLike(44100, 0.1, 2, 18, 16), Info{44100, 2, 16}, Options{BlockSize: 192}},
		{"wasted bits", shifted(musicLike(44100, 0.5, 2, 19, 16), 4), Info{44100, 2, 20}, Options{}},
		{"extremes 24-bit", extremes(20000, 24), Info{44100, 2, 24}, Options{}},
		{"left only", interleave(speechLike(8000, 1, 20, 16), make([]int32, 8000)), Info{8000, 2, 16}, Options{}},
		{"identical channels", interleave(speechLike(8000, 1, 21, 16), speechLike(8000, 1, 21, 16)), Info{8000, 2, 16}, Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if raceEnabled && len(tt.samples) > 20000 {
				t.Skip("long input: heavy and single-goroutine, run without -race (race_test.go)")
			}
			b := roundTrip(t, tt.samples, tt.info, tt.opts)
			pcm := len(tt.samples) * tt.info.BitsPerSample / 8
			t.Logf("%d samples -> %d bytes (%.3f of PCM)", len(tt.samples), len(b), float64(len(b))/float64(max(pcm, 1)))
		})
	}
}

// TestRoundTripCLI decodes the same streams with the reference decoder, which
// also checks every CRC and the STREAMINFO MD5, and supports 32-bit audio.
func TestRoundTripCLI(t *testing.T) {
	if raceEnabled {
		t.Skip("every width through the flac CLI: heavy and single-goroutine, run without -race (race_test.go)")
	}
	flacCLI(t)
	tests := []struct {
		name    string
		samples []int32
		info    Info
		opts    Options
	}{
		{"speech 16-bit", speechLike(8000, 2, 1, 16), Info{8000, 1, 16}, Options{}},
		{"music stereo 16-bit", musicLike(44100, 1, 2, 2, 16), Info{44100, 2, 16}, Options{}},
		{"music stereo 24-bit best", musicLike(48000, 0.5, 2, 3, 24), Info{48000, 2, 24}, Options{Level: LevelBest}},
		{"music 6ch 8-bit", musicLike(32000, 0.5, 6, 4, 8), Info{32000, 6, 8}, Options{}},
		{"music 32-bit stereo", musicLike(44100, 0.5, 2, 5, 32), Info{44100, 2, 32}, Options{}},
		{"noise 32-bit", whiteNoise(5000, 32, 6), Info{44100, 1, 32}, Options{}},
		{"extremes 32-bit", extremes(10000, 32), Info{44100, 2, 32}, Options{}},
		{"odd rate 12-bit", musicLike(12345, 0.5, 1, 7, 12), Info{12345, 1, 12}, Options{}},
		{"5-bit 700001 Hz", musicLike(700001, 0.05, 1, 11, 5), Info{700001, 1, 5}, Options{}},
		{"10-bit stereo", musicLike(44100, 0.5, 2, 12, 10), Info{44100, 2, 10}, Options{}},
		{"4-bit noise", whiteNoise(3000, 4, 13), Info{8000, 1, 4}, Options{}},
		{"31-bit stereo", musicLike(44100, 0.2, 2, 14, 31), Info{44100, 2, 31}, Options{}},
		{"one sample", []int32{-5}, Info{8000, 1, 16}, Options{}},
		{"silence", make([]int32, 5000), Info{8000, 1, 16}, Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Append(nil, tt.samples, tt.info, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			cliTest(t, b) // checks the MD5 of the decoded samples
			if tt.info.BitsPerSample%8 != 0 {
				return // flac -d writes raw PCM only for 8/16/24/32 bits
			}
			got := cliDecode(t, b, tt.info)
			if len(got) != len(tt.samples) {
				t.Fatalf("flac -d gave %d samples, want %d", len(got), len(tt.samples))
			}
			for i := range got {
				if got[i] != tt.samples[i] {
					t.Fatalf("sample %d = %d, want %d", i, got[i], tt.samples[i])
				}
			}
		})
	}
}

func bytes32(n int, v int32) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func shifted(s []int32, k uint) []int32 {
	for i := range s {
		s[i] <<= k
	}
	return s
}

// extremes alternates full-scale values, the worst case for predictors.
func extremes(n, bps int) []int32 {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(bps)))
	lo, hi := int32(-1)<<(bps-1), int32(1<<(bps-1)-1)
	if bps == 32 {
		hi = 1<<31 - 1
	}
	s := make([]int32, n)
	for i := range s {
		switch rng.IntN(4) {
		case 0:
			s[i] = lo
		case 1:
			s[i] = hi
		case 2:
			s[i] = 0
		default:
			if i > 0 {
				s[i] = s[i-1]
			}
		}
	}
	return s
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name    string
		samples []int32
		info    Info
		opts    Options
		want    error
	}{
		{"zero rate", []int32{1}, Info{0, 1, 16}, Options{}, ErrInfo},
		{"rate too high", []int32{1}, Info{1 << 20, 1, 16}, Options{}, ErrInfo},
		{"no channels", []int32{1}, Info{8000, 0, 16}, Options{}, ErrInfo},
		{"9 channels", make([]int32, 9), Info{8000, 9, 16}, Options{}, ErrInfo},
		{"3 bits", []int32{1}, Info{8000, 1, 3}, Options{}, ErrInfo},
		{"33 bits", []int32{1}, Info{8000, 1, 33}, Options{}, ErrInfo},
		{"block 15", []int32{1}, Info{8000, 1, 16}, Options{BlockSize: 15}, ErrOptions},
		{"block 65536", []int32{1}, Info{8000, 1, 16}, Options{BlockSize: 65536}, ErrOptions},
		{"bad level", []int32{1}, Info{8000, 1, 16}, Options{Level: 9}, ErrOptions},
		{"ragged", []int32{1, 2, 3}, Info{8000, 2, 16}, Options{}, ErrSampleCount},
		{"16-bit overflow", []int32{0, 32768}, Info{8000, 1, 16}, Options{}, ErrSampleRange},
		{"16-bit underflow", append(make([]int32, 5000), -32769), Info{8000, 1, 16}, Options{}, ErrSampleRange},
		{"8-bit", []int32{0, 0, 128, 0}, Info{8000, 2, 8}, Options{}, ErrSampleRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("prefix")
			got, err := Append(dst, tt.samples, tt.info, tt.opts)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if string(got) != "prefix" {
				t.Fatalf("dst changed on error: %q", got)
			}
			if err := Encode(&bytes.Buffer{}, tt.samples, tt.info); tt.opts == (Options{}) && !errors.Is(err, tt.want) {
				t.Fatalf("Encode err = %v, want %v", err, tt.want)
			}
		})
	}
	// The error names the sample.
	_, err := Append(nil, append(make([]int32, 2*5000), 0, 40000), Info{8000, 2, 16}, Options{})
	if want := "sample 5000 of 5001"; err == nil || !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Fatalf("err = %v, want it to name %q", err, want)
	}
	if want := "channel 1"; !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Fatalf("err = %v, want it to name %q", err, want)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	err := Encode(failWriter{}, []int32{1, 2, 3}, Info{8000, 1, 16})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("disk full")) {
		t.Fatalf("err = %v", err)
	}
}

func TestAppendKeepsPrefix(t *testing.T) {
	s := speechLike(8000, 0.5, 30, 16)
	info := Info{8000, 1, 16}
	plain, err := Append(nil, s, info, Options{})
	if err != nil {
		t.Fatal(err)
	}
	withPrefix, err := Append([]byte("xyz"), s, info, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if string(withPrefix[:3]) != "xyz" || !bytes.Equal(withPrefix[3:], plain) {
		t.Fatal("Append with a prefix differs from Append(nil)")
	}
	var buf bytes.Buffer
	if err := Encode(&buf, s, info); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), plain) {
		t.Fatal("Encode differs from Append")
	}
}

func TestCodedNumber(t *testing.T) {
	// Known encodings from the UTF-8 scheme, extended to 36 bits.
	tests := []struct {
		v    uint64
		want []byte
	}{
		{0, []byte{0}},
		{0x7F, []byte{0x7F}},
		{0x80, []byte{0xC2, 0x80}},
		{0x7FF, []byte{0xDF, 0xBF}},
		{0x800, []byte{0xE0, 0xA0, 0x80}},
		{0xFFFF, []byte{0xEF, 0xBF, 0xBF}},
		{0x10000, []byte{0xF0, 0x90, 0x80, 0x80}},
		{1<<36 - 1, []byte{0xFE, 0xBF, 0xBF, 0xBF, 0xBF, 0xBF, 0xBF}},
	}
	for _, tt := range tests {
		if got := appendCodedNumber(nil, tt.v); !bytes.Equal(got, tt.want) {
			t.Errorf("appendCodedNumber(%#x) = % x, want % x", tt.v, got, tt.want)
		}
	}
}

func ExampleEncode() {
	// One second of a 16-bit mono ramp at 8 kHz.
	samples := make([]int32, 8000)
	for i := range samples {
		samples[i] = int32(i%200) * 100
	}
	var buf bytes.Buffer
	if err := Encode(&buf, samples, Info{SampleRate: 8000, Channels: 1, BitsPerSample: 16}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(buf.Len() < len(samples)*2/3, string(buf.Bytes()[:4]))
	// Output: true fLaC
}

func TestStreamInfo(t *testing.T) {
	parse := func(b []byte) *flac.Stream {
		t.Helper()
		s, err := flac.New(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// One frame: its size is everything after the 42-byte header.
	one := speechLike(8000, 0.25, 40, 16)
	b := roundTrip(t, one, Info{8000, 1, 16}, Options{})
	si := parse(b).Info
	if si.BlockSizeMin != DefaultBlockSize || si.BlockSizeMax != DefaultBlockSize {
		t.Errorf("block sizes %d..%d, want %d", si.BlockSizeMin, si.BlockSizeMax, DefaultBlockSize)
	}
	if int(si.FrameSizeMin) != len(b)-42 || int(si.FrameSizeMax) != len(b)-42 {
		t.Errorf("frame sizes %d..%d, want %d", si.FrameSizeMin, si.FrameSizeMax, len(b)-42)
	}
	if si.NSamples != uint64(len(one)) {
		t.Errorf("total samples %d, want %d", si.NSamples, len(one))
	}
	// Speech then a silent frame: the silent frame is the smallest one and
	// is 6 (header) + 2*3 (two constant subframes) + 2 (CRC) bytes.
	two := append(musicLike(44100, 1024.0/44100, 2, 41, 16), make([]int32, 2*1024)...)
	b = roundTrip(t, two, Info{44100, 2, 16}, Options{BlockSize: 1024})
	si = parse(b).Info
	if si.FrameSizeMin != 14 || int(si.FrameSizeMax) != len(b)-42-14 {
		t.Errorf("frame sizes %d..%d, want 14..%d", si.FrameSizeMin, si.FrameSizeMax, len(b)-42-14)
	}
	if si.BlockSizeMin != 1024 || si.BlockSizeMax != 1024 {
		t.Errorf("block sizes %d..%d, want 1024", si.BlockSizeMin, si.BlockSizeMax)
	}
}
