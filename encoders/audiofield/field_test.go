package audiofield

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/internal/resample"
	"github.com/mldf/convert/internal/wav"
	"github.com/mldf/convert/sample"
)

var _ encoders.Field = (*Field)(nil)

const sharedAudio = "../../../shared/testdata/mini/audio"

func sharedDir(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(sharedAudio); err != nil {
		t.Skipf("shared test data not present: %v", err)
	}
	return sharedAudio
}

// mustField panics on a configuration error (test set-up only).
func mustField(f *Field, err error) *Field {
	if err != nil {
		panic(err)
	}
	return f
}

func encode(f *Field, v sample.Value) ([]byte, mldf.AudioMeta, error) {
	meta := make([]byte, mldf.AudioMetaSize)
	p, err := f.Encode(v, meta)
	return p, mldf.GetAudioMeta(meta), err
}

// decodePayload turns a stored payload back into samples: int16/int32 as int32, float32 as
// float32, FLAC through DecodeFLAC.
func decodePayload(t testing.TB, f *Field, p []byte, m mldf.AudioMeta) (ints []int32, floats []float32) {
	t.Helper()
	if m.Codec == mldf.AudioCodecFLAC {
		c, _, err := DecodeFLAC(p)
		if err != nil {
			t.Fatalf("stored FLAC does not decode: %v", err)
		}
		if c.BitDepth != int(m.BitDepth) || c.Frames() != int(m.NumSamples) || c.SampleRate != int(m.SampleRate) || c.Channels != int(m.NumChannels) {
			t.Fatalf("FLAC %d bit %d frames %d Hz %d ch, meta %+v", c.BitDepth, c.Frames(), c.SampleRate, c.Channels, m)
		}
		return c.Int, nil
	}
	switch f.opt.Format {
	case Int16:
		for i := 0; i+2 <= len(p); i += 2 {
			ints = append(ints, int32(int16(binary.LittleEndian.Uint16(p[i:]))))
		}
	case Int32:
		for i := 0; i+4 <= len(p); i += 4 {
			ints = append(ints, int32(binary.LittleEndian.Uint32(p[i:])))
		}
	case Float32:
		for i := 0; i+4 <= len(p); i += 4 {
			floats = append(floats, math.Float32frombits(binary.LittleEndian.Uint32(p[i:])))
		}
	}
	if n := len(ints) + len(floats); n != int(m.NumSamples)*int(m.NumChannels) {
		t.Fatalf("%d samples in payload, meta says %d x %d", n, m.NumSamples, m.NumChannels)
	}
	return ints, floats
}

func testSignal(n, bits int) []int32 {
	s := make([]int32, n)
	hi := float64(int64(1)<<(bits-1) - 1)
	for i := range s {
		s[i] = int32(math.Round(hi * 0.9 * math.Sin(float64(i)*0.05) * math.Cos(float64(i)*0.0031)))
	}
	s[0], s[1] = int32(-hi-1), int32(hi) // extremes
	return s
}

// TestRoundTripWAV: for 8/16/24/32-bit and float inputs, the stored payload decodes to the
// source samples (exactly where the format holds them; else the documented conversion).
func TestRoundTripWAV(t *testing.T) {
	for _, bits := range []int{8, 16, 24, 32} {
		for _, ch := range []int{1, 2} {
			src := testSignal(500*ch, bits)
			b, err := wav.Encode(wav.Format{SampleRate: 16000, Channels: ch, Source: wav.PCM, ValidBits: bits}, src, nil)
			if err != nil {
				t.Fatal(err)
			}
			v := sample.Value{Kind: sample.KindBytes, Bytes: b, Name: "x.wav"}
			// int32 waveform: exact (shifted to 32 bits).
			f32 := mustField(NewWaveform("a", Options{Format: Int32}))
			p, m, err := encode(f32, v)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := decodePayload(t, f32, p, m)
			for i := range src {
				if got[i] != src[i]<<(32-bits) {
					t.Fatalf("%d-bit int32: sample %d = %d, want %d", bits, i, got[i], src[i]<<(32-bits))
				}
			}
			if m.BitDepth != 32 || m.Codec != 0 || m.NumSamples != 500 || m.NumChannels != uint16(ch) || m.SampleRate != 16000 {
				t.Fatalf("meta %+v", m)
			}
			// int16 waveform: exact for <= 16 bits, rounded for more.
			f16 := mustField(NewWaveform("a", Options{}))
			p, m, err = encode(f16, v)
			if err != nil {
				t.Fatal(err)
			}
			got, _ = decodePayload(t, f16, p, m)
			for i := range src {
				if want := requantize(src[i], bits, 16); got[i] != want || (bits <= 16 && got[i] != src[i]<<(16-bits)) {
					t.Fatalf("%d-bit int16: sample %d = %d, want %d", bits, i, got[i], want)
				}
			}
			// float32 waveform: x / 2^(bits-1).
			ff := mustField(NewWaveform("a", Options{Format: Float32}))
			p, m, err = encode(ff, v)
			if err != nil {
				t.Fatal(err)
			}
			_, gotF := decodePayload(t, ff, p, m)
			for i := range src {
				if want := float32(src[i]) / float32(int64(1)<<(bits-1)); gotF[i] != want {
					t.Fatalf("%d-bit float32: sample %d = %v, want %v", bits, i, gotF[i], want)
				}
			}
			// FLAC at the source depth: exact for 8/16/24; 32-bit sources become 24-bit.
			fc := mustField(NewCompressed("a", Options{}))
			p, m, err = encode(fc, v)
			if err != nil {
				t.Fatal(err)
			}
			got, _ = decodePayload(t, fc, p, m)
			wantDepth := min(bits, 24)
			if int(m.BitDepth) != wantDepth || m.Codec != mldf.AudioCodecFLAC {
				t.Fatalf("FLAC meta %+v", m)
			}
			for i := range src {
				if want := requantize(src[i], bits, wantDepth); got[i] != want {
					t.Fatalf("%d-bit FLAC: sample %d = %d, want %d", bits, i, got[i], want)
				}
			}
		}
	}
}

func TestRoundTripFloatWAV(t *testing.T) {
	src := make([]float32, 1000)
	for i := range src {
		src[i] = float32(math.Sin(float64(i) * 0.01))
	}
	src[3], src[4] = 1.5, -1.5 // out of range: clipped in integer formats
	for _, bits := range []int{32, 64} {
		b, _ := wav.Encode(wav.Format{SampleRate: 48000, Channels: 2, Source: wav.Float, ValidBits: bits}, nil, src)
		v := sample.Value{Kind: sample.KindBytes, Bytes: b, Name: "f.wav"}
		ff := mustField(NewWaveform("a", Options{Format: Float32}))
		p, m, err := encode(ff, v)
		if err != nil {
			t.Fatal(err)
		}
		_, got := decodePayload(t, ff, p, m)
		for i := range src {
			if got[i] != src[i] {
				t.Fatalf("float%d: sample %d = %v, want %v", bits, i, got[i], src[i])
			}
		}
		f16 := mustField(NewWaveform("a", Options{}))
		p, m, _ = encode(f16, v)
		ints, _ := decodePayload(t, f16, p, m)
		for i := range src {
			if ints[i] != floatToInt(src[i], 16) {
				t.Fatalf("float->int16 sample %d", i)
			}
		}
		if ints[3] != 32767 || ints[4] != -32768 {
			t.Fatalf("no clipping: %d %d", ints[3], ints[4])
		}
		fc := mustField(NewCompressed("a", Options{BitDepth: 16}))
		p, m, err = encode(fc, v)
		if err != nil {
			t.Fatal(err)
		}
		ints, _ = decodePayload(t, fc, p, m)
		for i := range src {
			if ints[i] != floatToInt(src[i], 16) {
				t.Fatalf("float->FLAC16 sample %d", i)
			}
		}
	}
}

// TestFLACInputs: every real FLAC that decodes converts; passthrough stores the original
// bytes; the waveform equals the decoded samples; conversions go through the encoder.
func TestFLACInputs(t *testing.T) {
	dir := sharedDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "flac", "*", "*.flac"))
	for _, path := range files {
		data, _ := os.ReadFile(path)
		clip, _, err := DecodeFLAC(data)
		if err != nil {
			continue // covered by TestSharedFiles
		}
		v := sample.Value{Kind: sample.KindFile, Path: path, Name: filepath.Base(path)}
		fc := mustField(NewCompressed("a", Options{}))
		p, m, err := encode(fc, v)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !bytes.Equal(p, data) {
			t.Errorf("%s: not stored as its original bytes", path)
		}
		if int(m.BitDepth) != clip.BitDepth || int(m.NumSamples) != clip.Frames() {
			t.Errorf("%s: meta %+v", path, m)
		}
		// Waveform int32 equals the decoded samples.
		fw := mustField(NewWaveform("a", Options{Format: Int32}))
		p, m, err = encode(fw, v)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := decodePayload(t, fw, p, m)
		for i := range clip.Int {
			if got[i] != clip.Int[i]<<(32-clip.BitDepth) {
				t.Fatalf("%s: sample %d", path, i)
			}
		}
		// A segment is re-encoded and decodes to exactly that segment.
		seg := v
		seg.Offset, seg.Duration = 0.01, 0.02
		p, m, err = encode(fc, seg)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(p, data) {
			t.Fatalf("%s: segment stored as the whole file", path)
		}
		got, _ = decodePayload(t, fc, p, m)
		start := int(math.Round(0.01 * float64(clip.SampleRate)))
		n := min(clip.Frames()-start, int(math.Round(0.02*float64(clip.SampleRate))))
		want := clip.Int[start*clip.Channels : (start+n)*clip.Channels]
		if len(got) != len(want) {
			t.Fatalf("%s: segment of %d samples, want %d", path, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: segment sample %d", path, i)
			}
		}
	}
}

// TestFLACAgainstReference compares the decoded samples with the reference decoder (flac -d),
// when the flac command is installed.
func TestFLACAgainstReference(t *testing.T) {
	dir := sharedDir(t)
	bin, err := exec.LookPath("flac")
	if err != nil {
		t.Skip("flac command not installed")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "flac", "*", "*.flac"))
	for _, path := range files {
		data, _ := os.ReadFile(path)
		clip, _, err := DecodeFLAC(data)
		if err != nil {
			continue
		}
		out := filepath.Join(t.TempDir(), "x.raw")
		cmd := exec.Command(bin, "-d", "-s", "-f", "--force-raw-format", "--endian=little", "--sign=signed", "-o", out, path)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: flac -d: %v %s", path, err, msg)
		}
		raw, _ := os.ReadFile(out)
		want := appendLE(nil, clip.Int, (clip.BitDepth+7)/8)
		if !bytes.Equal(raw, want) {
			t.Errorf("%s: samples differ from flac -d", path)
		}
	}
}

// TestSharedFiles: every real audio file either converts or fails with a named, typed error.
func TestSharedFiles(t *testing.T) {
	dir := sharedDir(t)
	expect := map[string]error{
		"scipy_test-44100Hz-le-1ch-4bytes-early-eof-no-data.wav": wav.ErrNoData,
		"scipy_test-44100Hz-le-1ch-4bytes-early-eof.wav":         wav.ErrTruncated,
		"scipy_test-44100Hz-le-1ch-4bytes-incomplete-chunk.wav":  wav.ErrTruncated,
		"scipy_test-8000Hz-le-3ch-5S-24bit-inconsistent.wav":     wav.ErrFormat,
		"scipy_test-8000Hz-le-3ch-5S-36bit.wav":                  wav.ErrUnsupported,
		"scipy_test-8000Hz-le-3ch-5S-45bit.wav":                  wav.ErrUnsupported,
		"scipy_test-8000Hz-le-3ch-5S-53bit.wav":                  wav.ErrUnsupported,
		"scipy_test-8000Hz-le-3ch-5S-64bit.wav":                  wav.ErrUnsupported,
		"06 - missing streaminfo metadata block.flac":            ErrNoStreamInfo,
		"11 - incorrect metadata block length.flac":              ErrCorrupt,
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".wav") || strings.HasSuffix(p, ".flac")) {
			files = append(files, p)
		}
		return nil
	})
	if len(files) < 30 {
		t.Fatalf("only %d files found", len(files))
	}
	fields := []*Field{
		mustField(NewWaveform("w", Options{})),
		mustField(NewWaveform("w", Options{Format: Float32, SampleRate: 16000, Mono: true})),
		mustField(NewCompressed("c", Options{})),
	}
	for _, p := range files {
		want := expect[filepath.Base(p)]
		for _, f := range fields {
			_, m, err := encode(f, sample.Value{Kind: sample.KindFile, Path: p, Name: filepath.Base(p)})
			switch {
			case want == nil && err != nil:
				t.Errorf("%s (%s): %v", p, f.opt.Format, err)
			case want != nil && !errors.Is(err, want):
				t.Errorf("%s: err = %v, want %v", p, err, want)
			case err != nil && !strings.Contains(err.Error(), p):
				t.Errorf("%s: error does not name the file: %v", p, err)
			case err == nil && (m.NumSamples == 0 || m.SampleRate == 0):
				t.Errorf("%s: empty result %+v", p, m)
			}
		}
	}
}

// flacFixture returns a small valid FLAC stream made by the encoder.
func flacFixture(t testing.TB, bits, ch int) ([]byte, []int32) {
	t.Helper()
	src := testSignal(3000*ch, bits)
	b, err := EncodeFLAC(src, ch, bits, 16000)
	if err != nil {
		t.Fatal(err)
	}
	return b, src
}

// TestFaultyFLAC: MD5 mismatch, bad sync, missing STREAMINFO, 32-bit, truncation.
func TestFaultyFLAC(t *testing.T) {
	good, src := flacFixture(t, 16, 2)
	c, info, err := DecodeFLAC(good)
	if err != nil || !info.MD5Set {
		t.Fatalf("fixture: %v md5set=%v", err, info.MD5Set)
	}
	for i := range src {
		if c.Int[i] != src[i] {
			t.Fatalf("fixture sample %d", i)
		}
	}
	firstFrame := 8 + 34 // fLaC + block header + STREAMINFO (the encoder writes no other blocks)
	if good[4]&0x80 == 0 {
		t.Fatal("fixture has more than one metadata block")
	}
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte{}, good...)) }
	cases := []struct {
		name string
		b    []byte
		err  error
		msg  string
	}{
		{"md5 mismatch", mod(func(b []byte) []byte { b[8+18] ^= 1; return b }), ErrMD5, "MD5"},
		{"bad sync", mod(func(b []byte) []byte { b[firstFrame] = 0; return b }), ErrCorrupt, "sync"},
		{"missing streaminfo", mod(func(b []byte) []byte { b[4] = 0x80 | 1; return b }), ErrNoStreamInfo, ""},
		{"streaminfo length", mod(func(b []byte) []byte { b[7] = 30; return b }), ErrCorrupt, "length"},
		{"no signature", mod(func(b []byte) []byte { b[0] = 'X'; return b }), ErrFormat, ""},
		{"truncated", good[:len(good)-100], ErrCorrupt, ""},
		{"header only", good[:firstFrame], ErrCorrupt, ""},
		{"flipped bit in frame", mod(func(b []byte) []byte { b[len(b)/2] ^= 0x10; return b }), ErrCorrupt, ""},
		{"32-bit", mod(func(b []byte) []byte { setBPS(b, 32); return b }), ErrUnsupported, "32-bit"},
	}
	for _, c := range cases {
		_, err := Decode(c.b)
		if !errors.Is(err, c.err) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want %v (%q)", c.name, err, c.err, c.msg)
		}
		f := mustField(NewCompressed("a", Options{}))
		_, _, err = encode(f, sample.Value{Kind: sample.KindBytes, Bytes: c.b, Name: "bad.flac"})
		if !errors.Is(err, c.err) || !strings.Contains(err.Error(), "bad.flac") {
			t.Errorf("%s: field err = %v", c.name, err)
		}
	}
	// An all-zero MD5 means "not computed": the check is skipped.
	noMD5 := mod(func(b []byte) []byte { clear(b[8+18 : 8+34]); return b })
	if _, info, err := DecodeFLAC(noMD5); err != nil || info.MD5Set {
		t.Fatalf("unset MD5: %v %v", err, info.MD5Set)
	}
}

// setBPS rewrites the bits-per-sample field of STREAMINFO (5 bits, value-1, at byte 12..13 of
// the block body).
func setBPS(b []byte, bps int) {
	body := b[8:]
	v := uint8(bps - 1)
	body[12] = body[12]&^1 | v>>4
	body[13] = body[13]&0x0f | (v&0x0f)<<4
}

func TestFLACDepths(t *testing.T) {
	for _, bits := range []int{8, 12, 16, 20, 24} {
		for _, ch := range []int{1, 3, 8} {
			b, src := flacFixture(t, bits, ch)
			c, _, err := DecodeFLAC(b)
			if err != nil {
				t.Fatalf("%d bit %d ch: %v", bits, ch, err)
			}
			if c.BitDepth != bits || c.Channels != ch || len(c.Int) != len(src) {
				t.Fatalf("%d bit %d ch: got %d bit %d ch", bits, ch, c.BitDepth, c.Channels)
			}
			for i := range src {
				if c.Int[i] != src[i] {
					t.Fatalf("%d bit %d ch: sample %d", bits, ch, i)
				}
			}
		}
	}
}

func TestResampleAndDownmix(t *testing.T) {
	const in = 48000
	n := in / 10
	src := make([]int32, 2*n)
	for i := 0; i < n; i++ {
		src[2*i] = int32(10000 * math.Sin(2*math.Pi*440*float64(i)/in))
		src[2*i+1] = int32(6000 * math.Sin(2*math.Pi*1000*float64(i)/in))
	}
	b, _ := wav.Encode(wav.Format{SampleRate: in, Channels: 2, Source: wav.PCM, ValidBits: 16}, src, nil)
	v := sample.Value{Kind: sample.KindBytes, Bytes: b, Name: "s.wav"}
	f := mustField(NewWaveform("a", Options{Format: Float32, SampleRate: 16000, Mono: true}))
	p, m, err := encode(f, v)
	if err != nil {
		t.Fatal(err)
	}
	if m.SampleRate != 16000 || m.NumChannels != 1 || int(m.NumSamples) != n/3 || m.BitDepth != 32 {
		t.Fatalf("meta %+v", m)
	}
	_, got := decodePayload(t, f, p, m)
	// Expected: mono mean (rounded), then the resampler.
	mono := make([]float32, n)
	for i := range mono {
		mono[i] = float32(math.Round(float64(src[2*i]+src[2*i+1])/2)) / 32768
	}
	r, _ := resample.New(in, 16000)
	want := r.Resample(nil, mono)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sample %d: %v, want %v", i, got[i], want[i])
		}
	}
	// FLAC of a resampled input keeps the source depth (16).
	fc := mustField(NewCompressed("a", Options{SampleRate: 16000}))
	p, m, err = encode(fc, v)
	if err != nil {
		t.Fatal(err)
	}
	ints, _ := decodePayload(t, fc, p, m)
	if m.BitDepth != 16 || m.NumChannels != 2 || len(ints) != 2*n/3 {
		t.Fatalf("meta %+v, %d samples", m, len(ints))
	}
}

func TestSegmentsAndMaxDuration(t *testing.T) {
	src := testSignal(8000, 16) // 1 s at 8 kHz
	b, _ := wav.Encode(wav.Format{SampleRate: 8000, Channels: 1, Source: wav.PCM, ValidBits: 16}, src, nil)
	v := sample.Value{Kind: sample.KindBytes, Bytes: b, Name: "m.wav"}
	f := mustField(NewWaveform("a", Options{}))
	cases := []struct {
		off, dur   float64
		start, end int
		err        error
	}{
		{0, 0, 0, 8000, nil},
		{0.25, 0.5, 2000, 6000, nil},
		{0.5, 0, 4000, 8000, nil},
		{0.9, 0.5, 7200, 8000, nil}, // clamped at the end
		{1.0, 0.1, 0, 0, ErrSegment},
		{2, 0, 0, 0, ErrSegment},
		{-1, 0, 0, 0, ErrSegment},
		{math.NaN(), 0, 0, 0, ErrSegment},
		{1e308, 0, 0, 0, ErrSegment},
		{0.5, 1e308, 4000, 8000, nil},
		{0, 1e-9, 0, 0, ErrEmpty},
	}
	for _, c := range cases {
		v.Offset, v.Duration = c.off, c.dur
		p, m, err := encode(f, v)
		if c.err != nil {
			if !errors.Is(err, c.err) || !strings.Contains(err.Error(), "m.wav") {
				t.Errorf("%v+%v: err %v", c.off, c.dur, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got, _ := decodePayload(t, f, p, m)
		if len(got) != c.end-c.start {
			t.Fatalf("%v+%v: %d samples", c.off, c.dur, len(got))
		}
		for i := range got {
			if got[i] != src[c.start+i] {
				t.Fatalf("%v+%v: sample %d", c.off, c.dur, i)
			}
		}
	}
	v.Offset, v.Duration = 0, 0
	tr := mustField(NewWaveform("a", Options{MaxDuration: 0.3}))
	_, m, err := encode(tr, v)
	if err != nil || m.NumSamples != 2400 {
		t.Fatalf("truncate: %v %+v", err, m)
	}
	if _, m, err := encode(mustField(NewWaveform("a", Options{MaxDuration: 1e300})), v); err != nil || m.NumSamples != 8000 {
		t.Fatalf("huge max_duration: %v %+v", err, m)
	}
	tiny, _ := wav.Encode(wav.Format{SampleRate: 10, Channels: 1, Source: wav.PCM, ValidBits: 16}, src, nil)
	if _, _, err := encode(mustField(NewWaveform("a", Options{SampleRate: 16000})), sample.Value{Kind: sample.KindBytes, Bytes: tiny}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("10 Hz -> 16 kHz: %v", err)
	}
	empty, _ := wav.Encode(wav.Format{SampleRate: 8000, Channels: 1, Source: wav.PCM, ValidBits: 16}, nil, nil)
	for _, e := range []*Field{f, mustField(NewWaveform("a", Options{Format: Float32})), mustField(NewCompressed("a", Options{}))} {
		if _, _, err := encode(e, sample.Value{Kind: sample.KindBytes, Bytes: empty, Name: "empty.wav"}); !errors.Is(err, ErrEmpty) {
			t.Fatalf("empty WAV: %v", err)
		}
	}
	sk := mustField(NewWaveform("a", Options{MaxDuration: 0.3, SkipLong: true}))
	if _, _, err := encode(sk, v); !errors.Is(err, ErrTooLong) {
		t.Fatalf("skip: %v", err)
	}
	// A FLAC input longer than max_duration is truncated, so not passed through.
	fb, _ := flacFixture(t, 16, 1)
	fc := mustField(NewCompressed("a", Options{MaxDuration: 0.1}))
	p, m, err := encode(fc, sample.Value{Kind: sample.KindBytes, Bytes: fb, Name: "x.flac"})
	if err != nil || m.NumSamples != 1600 || bytes.Equal(p, fb) {
		t.Fatalf("FLAC truncate: %v %+v", err, m)
	}
}

func TestArguments(t *testing.T) {
	opts := []Options{
		{Format: Int32, SampleRate: 16000, Mono: true, MaxDuration: 20, SkipLong: true},
		{Format: Float32},
		{},
	}
	for _, o := range opts {
		f := mustField(NewWaveform("a", o))
		got, err := ParseArguments(f.Arguments())
		if err != nil {
			t.Fatal(err)
		}
		want := f.Options()
		if got.Format != want.Format || got.SampleRate != want.SampleRate || got.Mono != want.Mono || got.MaxDuration != want.MaxDuration ||
			got.SkipLong != want.SkipLong || got.BitDepth != want.BitDepth || got.NoPassthrough != want.NoPassthrough {
			t.Errorf("round trip %+v -> %+v", want, got)
		}
	}
	c := mustField(NewCompressed("c", Options{BitDepth: 16, NoPassthrough: true}))
	got, _ := ParseArguments(c.Arguments())
	if got.Format != FLAC || got.BitDepth != 16 || !got.NoPassthrough {
		t.Errorf("compressed args %+v", got)
	}
	a := c.Arguments()
	if a[0] != ArgsVersion || a[18] != 1 || a[19] != 80 || binary.LittleEndian.Uint16(a[20:]) != 900 {
		t.Errorf("args bytes %x", a[:24])
	}
	var bad [mldf.ArgumentsSize]byte
	if _, err := ParseArguments(bad); err == nil {
		t.Error("version 0 accepted")
	}
	if _, err := NewWaveform("a", Options{Format: FLAC}); err == nil {
		t.Error("waveform with FLAC format accepted")
	}
	if _, err := NewCompressed("a", Options{BitDepth: 32}); err == nil {
		t.Error("32-bit FLAC accepted")
	}
	if _, err := NewWaveform("", Options{}); err == nil {
		t.Error("empty name accepted")
	}
}

func TestBadValues(t *testing.T) {
	f := mustField(NewWaveform("a", Options{}))
	for _, v := range []sample.Value{
		{Kind: sample.KindInt, Int: 3},
		{Kind: sample.KindBytes, Bytes: []byte("OggS not audio"), Name: "x.ogg"},
		{Kind: sample.KindBytes, Bytes: nil, Name: "empty.wav"},
		{Kind: sample.KindFile, Path: filepath.Join(t.TempDir(), "missing.wav")},
	} {
		if _, _, err := encode(f, v); err == nil {
			t.Errorf("%+v accepted", v)
		}
	}
}

// TestConcurrent encodes from many goroutines through one field (run with -race).
func TestConcurrent(t *testing.T) {
	src := testSignal(4410, 16)
	b, _ := wav.Encode(wav.Format{SampleRate: 44100, Channels: 1, Source: wav.PCM, ValidBits: 16}, src, nil)
	f := mustField(NewWaveform("a", Options{SampleRate: 16000}))
	ref, _, err := encode(f, sample.Value{Kind: sample.KindBytes, Bytes: b})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, _, err := encode(f, sample.Value{Kind: sample.KindBytes, Bytes: b})
			if err != nil || !bytes.Equal(p, ref) {
				t.Errorf("concurrent encode differs: %v", err)
			}
		}()
	}
	wg.Wait()
}

func FuzzDecode(f *testing.F) {
	if files, err := filepath.Glob(filepath.Join(sharedAudio, "flac", "*", "*.flac")); err == nil {
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil && len(b) < 8000 {
				f.Add(b)
			}
		}
	}
	b, _ := flacFixture(f, 16, 2)
	f.Add(b)
	b, _ = flacFixture(f, 24, 1)
	f.Add(b[:600])
	w, _ := wav.Encode(wav.Format{SampleRate: 8000, Channels: 1, Source: wav.PCM, ValidBits: 16}, testSignal(100, 16), nil)
	f.Add(w)
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b)
		if err != nil {
			return
		}
		if c.Channels <= 0 || (len(c.Int)+len(c.Float))%c.Channels != 0 {
			t.Fatalf("inconsistent clip: %d channels, %d samples", c.Channels, len(c.Int)+len(c.Float))
		}
	})
}

// TestFastPathMatchesGeneral: the direct data-chunk copy (little-endian WAV) gives the same
// payload and metadata as the decode path (the same samples in a big-endian RIFX file).
func TestFastPathMatchesGeneral(t *testing.T) {
	for _, c := range []struct {
		format SampleFormat
		src    wav.Format
	}{
		{Int16, wav.Format{Source: wav.PCM, ValidBits: 16}},
		{Int32, wav.Format{Source: wav.PCM, ValidBits: 32}},
		{Float32, wav.Format{Source: wav.Float, ValidBits: 32}},
	} {
		ints := testSignal(2*1000, c.src.ValidBits)
		floats := make([]float32, len(ints))
		for i, v := range ints {
			floats[i] = float32(v) / float32(int64(1)<<(c.src.ValidBits-1))
		}
		c.src.SampleRate, c.src.Channels = 8000, 2
		le, _ := wav.Encode(c.src, ints, floats)
		c.src.BigEndian = true
		be, _ := wav.Encode(c.src, ints, floats)
		for _, o := range []Options{{Format: c.format}, {Format: c.format, MaxDuration: 0.05}} {
			f := mustField(NewWaveform("a", o))
			for _, seg := range [][2]float64{{0, 0}, {0.01, 0.02}, {0.1, 0}} {
				v := sample.Value{Kind: sample.KindBytes, Offset: seg[0], Duration: seg[1]}
				v.Bytes = le
				p1, m1, err1 := encode(f, v)
				v.Bytes = be
				p2, m2, err2 := encode(f, v)
				if err1 != nil || err2 != nil || !bytes.Equal(p1, p2) || m1 != m2 {
					t.Fatalf("%s %+v %v: fast %v %+v, general %v %+v", c.format, o, seg, err1, m1, err2, m2)
				}
			}
		}
	}
}

// TestWAVToFLACMatchesGeneral: the direct encoding of a WAV's data chunk (wavToFLAC) gives
// the same payload, metadata and errors as the decode path (taken when Options.EncodeFLAC is
// set), for 16- and 24-bit mono and stereo, segments, max_duration and a too-short segment.
func TestWAVToFLACMatchesGeneral(t *testing.T) {
	for _, bits := range []int{16, 24} {
		for _, ch := range []int{1, 2} {
			b, _ := wav.Encode(wav.Format{SampleRate: 8000, Channels: ch, Source: wav.PCM, ValidBits: bits}, testSignal(ch*9000, bits), nil)
			for _, o := range []Options{{}, {BitDepth: bits}, {MaxDuration: 0.5}, {MaxDuration: 0.5, SkipLong: true}} {
				direct := mustField(NewCompressed("a", o))
				o.EncodeFLAC = EncodeFLAC
				general := mustField(NewCompressed("a", o))
				if !direct.pcmFLAC || general.pcmFLAC {
					t.Fatal("pcmFLAC not set as expected")
				}
				for _, seg := range [][2]float64{{0, 0}, {0.01, 0.2}, {0.1, 0}, {0.5, 1e-9}} {
					v := sample.Value{Kind: sample.KindBytes, Bytes: b, Name: "x.wav", Offset: seg[0], Duration: seg[1]}
					p1, m1, err1 := encode(direct, v)
					p2, m2, err2 := encode(general, v)
					if (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() || !bytes.Equal(p1, p2) || m1 != m2 {
						t.Fatalf("%d bits %d ch %+v %v: direct %v %+v, general %v %+v", bits, ch, o, seg, err1, m1, err2, m2)
					}
				}
			}
		}
	}
}

func TestFLACTrailingBytes(t *testing.T) {
	good, src := flacFixture(t, 16, 1)
	tagged := append(append([]byte{}, good...), append([]byte("TAG"), make([]byte, 125)...)...)
	c, _, err := DecodeFLAC(tagged)
	if err != nil {
		t.Fatalf("ID3v1 trailer: %v", err)
	}
	if len(c.Int) != len(src) {
		t.Fatalf("%d samples", len(c.Int))
	}
	// With the total unset, trailing garbage is a corrupt frame.
	unknown := append([]byte{}, tagged...)
	body := unknown[8:]
	body[13] &= 0xf0
	clear(body[14:18])
	if _, _, err := DecodeFLAC(unknown); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("garbage after frames with unknown total: %v", err)
	}
	// No frames at all.
	if _, _, err := DecodeFLAC(good[:8+34]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("no frames: %v", err)
	}
}

// FuzzEncode drives whole files, segments and options through the fields: never a panic,
// and the metadata always matches the payload size.
func FuzzEncode(f *testing.F) {
	w, _ := wav.Encode(wav.Format{SampleRate: 8000, Channels: 2, Source: wav.PCM, ValidBits: 24}, testSignal(400, 24), nil)
	f.Add(w, 0.01, 0.02, uint8(0))
	fl, _ := flacFixture(f, 16, 2)
	f.Add(fl, 0.0, 0.0, uint8(5))
	fw, _ := wav.Encode(wav.Format{SampleRate: 44100, Channels: 1, Source: wav.Float, ValidBits: 32}, nil, make([]float32, 300))
	f.Add(fw, 0.001, 1e9, uint8(2))
	fields := []*Field{
		mustField(NewWaveform("a", Options{})),
		mustField(NewWaveform("a", Options{Format: Int32, Mono: true})),
		mustField(NewWaveform("a", Options{Format: Float32, SampleRate: 16000})),
		mustField(NewWaveform("a", Options{MaxDuration: 0.004, SkipLong: true})),
		mustField(NewCompressed("a", Options{BitDepth: 8})),
		mustField(NewCompressed("a", Options{Mono: true, SampleRate: 11025})),
	}
	f.Fuzz(func(t *testing.T, b []byte, off, dur float64, which uint8) {
		fd := fields[int(which)%len(fields)]
		meta := make([]byte, mldf.AudioMetaSize)
		p, err := fd.Encode(sample.Value{Kind: sample.KindBytes, Bytes: b, Name: "f.wav", Offset: off, Duration: dur}, meta)
		if err != nil {
			return
		}
		m := mldf.GetAudioMeta(meta)
		if m.NumSamples == 0 || m.NumChannels == 0 {
			t.Fatalf("empty result %+v", m)
		}
		if m.Codec == mldf.AudioCodecPCM && len(p) != int(m.NumSamples)*int(m.NumChannels)*int(m.BitDepth/8) {
			t.Fatalf("payload %d bytes, meta %+v", len(p), m)
		}
	})
}
