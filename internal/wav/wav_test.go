package wav

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-audio/wav"
)

const oddDir = "../../../shared/testdata/mini/audio/wav_odd"

func shared(t testing.TB, dir string) string {
	t.Helper()
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared test data not present: %v", err)
	}
	return dir
}

// TestRealOddFiles decodes every scipy WAV: each decodes with the expected format or fails
// with the expected error.
func TestRealOddFiles(t *testing.T) {
	dir := shared(t, oddDir)
	cases := []struct {
		file     string
		err      error
		rate, ch int
		depth    int
		float    bool
		frames   int
	}{
		{"scipy_test-44100Hz-2ch-32bit-float-be.wav", nil, 44100, 2, 32, true, 441},
		{"scipy_test-44100Hz-2ch-32bit-float-le.wav", nil, 44100, 2, 32, true, 441},
		{"scipy_test-44100Hz-be-1ch-4bytes.wav", nil, 44100, 1, 32, false, 4410},
		{"scipy_test-44100Hz-le-1ch-4bytes.wav", nil, 44100, 1, 32, false, 4410},
		{"scipy_test-44100Hz-le-1ch-4bytes-early-eof-no-data.wav", ErrNoData, 0, 0, 0, false, 0},
		{"scipy_test-44100Hz-le-1ch-4bytes-early-eof.wav", ErrTruncated, 0, 0, 0, false, 0},
		{"scipy_test-44100Hz-le-1ch-4bytes-incomplete-chunk.wav", ErrTruncated, 0, 0, 0, false, 0},
		{"scipy_test-48000Hz-2ch-64bit-float-le-wavex.wav", nil, 48000, 2, 32, true, 480},
		{"scipy_test-8000Hz-be-3ch-5S-24bit.wav", nil, 8000, 3, 24, false, 5},
		{"scipy_test-8000Hz-le-3ch-5S-24bit.wav", nil, 8000, 3, 24, false, 5},
		{"scipy_test-8000Hz-le-3ch-5S-24bit-inconsistent.wav", ErrFormat, 0, 0, 0, false, 0},
		{"scipy_test-8000Hz-le-1ch-10S-20bit-extra.wav", nil, 1234, 1, 24, false, 10},
		{"scipy_test-8000Hz-le-1ch-1byte-ulaw.wav", nil, 8000, 1, 16, false, 9},
		{"scipy_test-8000Hz-le-2ch-1byteu.wav", nil, 8000, 2, 8, false, 800},
		{"scipy_test-8000Hz-le-3ch-5S-36bit.wav", ErrUnsupported, 0, 0, 0, false, 0},
		{"scipy_test-8000Hz-le-3ch-5S-45bit.wav", ErrUnsupported, 0, 0, 0, false, 0},
		{"scipy_test-8000Hz-le-3ch-5S-53bit.wav", ErrUnsupported, 0, 0, 0, false, 0},
		{"scipy_test-8000Hz-le-3ch-5S-64bit.wav", ErrUnsupported, 0, 0, 0, false, 0},
		{"scipy_test-8000Hz-le-4ch-9S-12bit.wav", nil, 8000, 4, 16, false, 9},
		{"scipy_test-8000Hz-le-5ch-9S-5bit.wav", nil, 8000, 5, 8, false, 9},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.file] = true
		t.Run(c.file, func(t *testing.T) {
			a, err := ReadFile(filepath.Join(dir, c.file))
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				if !strings.Contains(err.Error(), c.file) {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.SampleRate != c.rate || a.Channels != c.ch || a.BitDepth != c.depth || a.IsFloat != c.float || a.Frames != c.frames {
				t.Fatalf("got %d Hz %d ch %d bit float=%v %d frames", a.SampleRate, a.Channels, a.BitDepth, a.IsFloat, a.Frames)
			}
			if n := len(a.Int) + len(a.Float); n != a.Frames*a.Channels {
				t.Fatalf("%d samples for %d frames", n, a.Frames)
			}
		})
	}
	all, _ := filepath.Glob(filepath.Join(dir, "*.wav"))
	for _, f := range all {
		if !seen[filepath.Base(f)] {
			t.Errorf("file %s not covered by the table", f)
		}
	}
}

// TestEndianPairs checks that the RIFX and RIFF versions of the same scipy signal agree.
func TestEndianPairs(t *testing.T) {
	dir := shared(t, oddDir)
	pairs := [][2]string{
		{"scipy_test-44100Hz-2ch-32bit-float-be.wav", "scipy_test-44100Hz-2ch-32bit-float-le.wav"},
		{"scipy_test-44100Hz-be-1ch-4bytes.wav", "scipy_test-44100Hz-le-1ch-4bytes.wav"},
		{"scipy_test-8000Hz-be-3ch-5S-24bit.wav", "scipy_test-8000Hz-le-3ch-5S-24bit.wav"},
	}
	for _, p := range pairs {
		a, err := ReadFile(filepath.Join(dir, p[0]))
		if err != nil {
			t.Fatal(err)
		}
		b, err := ReadFile(filepath.Join(dir, p[1]))
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Int) != len(b.Int) || len(a.Float) != len(b.Float) {
			t.Fatalf("%s: lengths differ", p[0])
		}
		nonzero := false
		for i := range a.Int {
			if a.Int[i] != b.Int[i] {
				t.Fatalf("%s: sample %d: %d vs %d", p[0], i, a.Int[i], b.Int[i])
			}
			nonzero = nonzero || a.Int[i] != 0
		}
		for i := range a.Float {
			if math.Abs(float64(a.Float[i]-b.Float[i])) > 1e-6 { // scipy wrote them separately
				t.Fatalf("%s: sample %d: %v vs %v", p[0], i, a.Float[i], b.Float[i])
			}
			nonzero = nonzero || a.Float[i] != 0
			if math.Abs(float64(a.Float[i])) > 1.01 {
				t.Fatalf("%s: float sample %d = %v out of range (decoded as integer bits?)", p[0], i, a.Float[i])
			}
		}
		if !nonzero {
			t.Errorf("%s: all samples zero", p[0])
		}
	}
}

// TestAgreesWithGoAudio checks integer PCM against go-audio/wav where that library is right.
func TestAgreesWithGoAudio(t *testing.T) {
	dir := shared(t, filepath.Join(oddDir, "../wav"))
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.wav"))
	// (go-audio reads 16 samples from the 45-byte 3-channel 24-bit scipy file; it has 15.)
	files = append(files, filepath.Join(oddDir, "scipy_test-44100Hz-le-1ch-4bytes.wav"))
	for _, f := range files {
		a, err := ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		buf, err := wav.NewDecoder(fh).FullPCMBuffer()
		fh.Close()
		if err != nil {
			t.Fatalf("%s: go-audio: %v", f, err)
		}
		if len(buf.Data) != len(a.Int) {
			t.Fatalf("%s: %d samples, go-audio %d", f, len(a.Int), len(buf.Data))
		}
		for i, v := range buf.Data {
			if int32(v) != a.Int[i] {
				t.Fatalf("%s: sample %d = %d, go-audio %d", f, i, a.Int[i], v)
			}
		}
	}
}

func ramp(n, bits int) []int32 {
	s := make([]int32, n)
	lo, hi := -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1
	for i := range s {
		v := int64(math.Round(math.Sin(float64(i)*0.37) * float64(hi)))
		if i%7 == 0 {
			v = lo
		}
		if i%11 == 0 {
			v = hi
		}
		s[i] = int32(v)
	}
	return s
}

// TestRoundTrip encodes every supported layout and decodes it back exactly.
func TestRoundTrip(t *testing.T) {
	for _, big := range []bool{false, true} {
		for _, ext := range []bool{false, true} {
			for _, ch := range []int{1, 2, 3, 6} {
				for _, bits := range []int{8, 16, 24, 32} {
					f := Format{SampleRate: 22050, Channels: ch, Source: PCM, ValidBits: bits, BigEndian: big, Extensible: ext}
					in := ramp(ch*37, bits)
					b, err := Encode(f, in, nil)
					if err != nil {
						t.Fatal(err)
					}
					a, err := Decode(b)
					if err != nil {
						t.Fatalf("%+v: %v", f, err)
					}
					if a.BitDepth != bits || a.Frames != 37 || a.Channels != ch || a.IsFloat {
						t.Fatalf("%+v: got %+v", f, a.Format)
					}
					for i := range in {
						if in[i] != a.Int[i] {
							t.Fatalf("%+v: sample %d: %d != %d", f, i, a.Int[i], in[i])
						}
					}
				}
				for _, bits := range []int{32, 64} {
					f := Format{SampleRate: 16000, Channels: ch, Source: Float, ValidBits: bits, BigEndian: big, Extensible: ext}
					in := make([]float32, ch*29)
					for i := range in {
						in[i] = float32(math.Sin(float64(i)))
					}
					b, err := Encode(f, nil, in)
					if err != nil {
						t.Fatal(err)
					}
					a, err := Decode(b)
					if err != nil {
						t.Fatalf("%+v: %v", f, err)
					}
					if !a.IsFloat || a.Frames != 29 {
						t.Fatalf("%+v: got %+v", f, a.Format)
					}
					for i := range in {
						if in[i] != a.Float[i] {
							t.Fatalf("%+v: sample %d: %v != %v", f, i, a.Float[i], in[i])
						}
					}
				}
			}
		}
	}
}

// insertChunk puts a chunk (with pad byte when odd) at byte offset at.
func insertChunk(b []byte, at int, id string, body []byte) []byte {
	c := append([]byte(id), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(c[4:], uint32(len(body)))
	c = append(c, body...)
	if len(body)%2 == 1 {
		c = append(c, 0)
	}
	out := append(append(append([]byte{}, b[:at]...), c...), b[at:]...)
	binary.LittleEndian.PutUint32(out[4:], uint32(len(out)-8))
	return out
}

func TestOddChunks(t *testing.T) {
	in := ramp(50, 16)
	base, _ := Encode(Format{SampleRate: 8000, Channels: 1, Source: PCM, ValidBits: 16}, in, nil)
	b := insertChunk(base, 12, "LIST", []byte("INFOISFT\x05\x00\x00\x00abcd\x00")) // odd size before fmt
	b = insertChunk(b, 12+8+18+8+16, "fact", []byte{50, 0, 0, 0})                  // between fmt and data
	b = insertChunk(b, len(b), "cue ", []byte{0, 0, 0})                            // odd, after data
	a, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if a.Int[i] != in[i] {
			t.Fatalf("sample %d", i)
		}
	}
	// An odd last chunk whose pad byte is missing is accepted.
	if _, err := Decode(b[:len(b)-1]); err != nil {
		t.Fatalf("missing final pad byte: %v", err)
	}
}

// TestLaw checks G.711 decoding against values from CPython's audioop.ulaw2lin/alaw2lin.
func TestLaw(t *testing.T) {
	for _, c := range []struct {
		in   byte
		u, a int16
	}{{0x00, -32124, -5504}, {0x7F, 0, -848}, {0x80, 32124, 5504}, {0xFF, 0, 848}, {0x55, -716, -8}, {0xD5, 716, 8}, {0x2A, -5372, -32256}, {0xAA, 5372, 32256}} {
		if got := ulaw(c.in); got != c.u {
			t.Errorf("ulaw(%#x) = %d, want %d", c.in, got, c.u)
		}
		if got := alaw(c.in); got != c.a {
			t.Errorf("alaw(%#x) = %d, want %d", c.in, got, c.a)
		}
	}
}

func TestBadInput(t *testing.T) {
	good, _ := Encode(Format{SampleRate: 8000, Channels: 2, Source: PCM, ValidBits: 16}, ramp(40, 16), nil)
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte{}, good...)) }
	cases := []struct {
		name string
		b    []byte
		err  error
	}{
		{"empty", nil, ErrNotWAV},
		{"not riff", []byte("OggS0000WAVEfmt "), ErrNotWAV},
		{"not wave", mod(func(b []byte) []byte { copy(b[8:], "AVI "); return b }), ErrNotWAV},
		{"short riff", good[:7], ErrTruncated},
		{"truncated data", good[:len(good)-3], ErrTruncated},
		{"truncated chunk header", good[:40], ErrTruncated},
		{"no data", good[:36], ErrNoData},
		{"data before fmt", mod(func(b []byte) []byte { copy(b[12:], "data"); return b }), ErrNoFormat},
		{"zero channels", mod(func(b []byte) []byte { b[22] = 0; return b }), ErrFormat},
		{"zero rate", mod(func(b []byte) []byte { b[24], b[25] = 0, 0; return b }), ErrFormat},
		{"block align", mod(func(b []byte) []byte { b[32] = 3; return b }), ErrFormat},
		{"adpcm", mod(func(b []byte) []byte { b[20] = 2; return b }), ErrUnsupported},
		{"float16", mod(func(b []byte) []byte { b[20] = 3; return b }), ErrUnsupported},
		{"short fmt", mod(func(b []byte) []byte { b[16] = 14; return b }), ErrFormat},
		{"huge fmt", mod(func(b []byte) []byte { b[19] = 0x7f; return b }), ErrTruncated},
	}
	for _, c := range cases {
		if _, err := Decode(c.b); !errors.Is(err, c.err) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, dir := range []string{oddDir, filepath.Join(oddDir, "../wav/speech_en")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.wav"))
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil && len(b) < 40000 {
				f.Add(b)
			}
		}
	}
	for _, bits := range []int{8, 16, 24, 32} {
		b, _ := Encode(Format{SampleRate: 8000, Channels: 2, Source: PCM, ValidBits: bits, Extensible: bits == 24}, ramp(20, bits), nil)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, data, herr := Header(b)
		a, err := Decode(b)
		if (herr == nil) != (err == nil) {
			t.Fatalf("Header says %v, Decode says %v", herr, err)
		}
		if err != nil {
			return
		}
		if h.SampleRate < MinSampleRate || h.SampleRate > MaxSampleRate || h.Channels < 1 || len(data)%(h.Width*h.Channels) != 0 {
			t.Fatalf("header accepted out of bounds: %+v, %d data bytes", h, len(data))
		}
		if n := len(a.Int) + len(a.Float); n != a.Frames*a.Channels || n*a.Width > len(b) {
			t.Fatalf("inconsistent result: %d samples, %d frames x %d channels, %d-byte file", n, a.Frames, a.Channels, len(b))
		}
	})
}

func benchWAV(b *testing.B, f Format) {
	const frames = 1 << 20
	in := ramp(frames*f.Channels, 16)
	var fl []float32
	if f.Source == Float {
		fl = make([]float32, len(in))
		for i, v := range in {
			fl[i] = float32(v) / 32768
		}
	}
	data, err := Encode(f, in, fl)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(frames*f.Channels)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Msamples/s")
	// hours of audio (at the file's rate) decoded per wall-clock minute
	b.ReportMetric(float64(frames)/float64(f.SampleRate)*float64(b.N)/b.Elapsed().Seconds()*60/3600, "audio-h/min")
}

func BenchmarkDecode16(b *testing.B) {
	benchWAV(b, Format{SampleRate: 16000, Channels: 1, Source: PCM, ValidBits: 16})
}
func BenchmarkDecode24(b *testing.B) {
	benchWAV(b, Format{SampleRate: 48000, Channels: 2, Source: PCM, ValidBits: 24})
}
func BenchmarkDecodeFloat32(b *testing.B) {
	benchWAV(b, Format{SampleRate: 48000, Channels: 2, Source: Float, ValidBits: 32})
}

// BenchmarkGoAudio16 is the same 16-bit file through go-audio/wav, for comparison.
func BenchmarkGoAudio16(b *testing.B) {
	const frames = 1 << 20
	data, _ := Encode(Format{SampleRate: 16000, Channels: 1, Source: PCM, ValidBits: 16}, ramp(frames, 16), nil)
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		d := wav.NewDecoder(bytes.NewReader(data))
		if _, err := d.FullPCMBuffer(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(frames)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Msamples/s")
}

// TestOddValues checks decoded values of the odd scipy files against reference values
// (u-law: CPython audioop.ulaw2lin; the others read from the raw bytes by hand).
func TestOddValues(t *testing.T) {
	dir := shared(t, oddDir)
	cases := []struct {
		file string
		want []int32
	}{
		{"scipy_test-8000Hz-le-1ch-1byte-ulaw.wav", []int32{0, 20860, 29052, 20860, 0, -20860, -29052, -20860, 0}},
		{"scipy_test-8000Hz-le-5ch-9S-5bit.wav", []int32{0, 0, 0, 0, 0, 88, 120, 88, 0, 48}}, // unsigned 8-bit container - 128
		{"scipy_test-8000Hz-le-4ch-9S-12bit.wav", []int32{0, 0, 0, 0, 23168, 32752, 23168, 0}},
	}
	for _, c := range cases {
		a, err := ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range c.want {
			if a.Int[i] != w {
				t.Fatalf("%s: sample %d = %d, want %d", c.file, i, a.Int[i], w)
			}
		}
	}
}

// TestSampleRateBounds: the sample rate a header declares at, just over and
// far over its bounds.
func TestSampleRateBounds(t *testing.T) {
	for _, tc := range []struct {
		rate uint32
		ok   bool
	}{
		{MinSampleRate, true}, {8000, true}, {MaxSampleRate, true},
		{0, false}, {MaxSampleRate + 1, false}, {16777213, false}, {1 << 31, false}, {math.MaxUint32, false},
	} {
		b, err := Encode(Format{SampleRate: 8000, Channels: 1, Source: PCM, ValidBits: 16}, ramp(10, 16), nil)
		if err != nil {
			t.Fatal(err)
		}
		binary.LittleEndian.PutUint32(b[24:], tc.rate)
		h, _, err := Header(b)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrFormat)) {
			t.Errorf("rate %d: %v", tc.rate, err)
		}
		if err == nil && uint32(h.SampleRate) != tc.rate {
			t.Errorf("rate %d read as %d", tc.rate, h.SampleRate)
		}
	}
}
