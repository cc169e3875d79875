package flacenc

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mewkiz/flac"
)

// decodeMewkiz decodes a FLAC stream with github.com/mewkiz/flac and returns
// its interleaved samples, its info and the STREAMINFO MD5.
func decodeMewkiz(b []byte) ([]int32, Info, [16]byte, error) {
	s, err := flac.New(bytes.NewReader(b))
	if err != nil {
		return nil, Info{}, [16]byte{}, err
	}
	si := s.Info
	info := Info{SampleRate: int(si.SampleRate), Channels: int(si.NChannels), BitsPerSample: int(si.BitsPerSample)}
	out := make([]int32, 0, int(si.NSamples)*info.Channels)
	for {
		f, err := s.ParseNext()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, info, si.MD5sum, err
		}
		n := int(f.BlockSize)
		for i := range n {
			for c := range info.Channels {
				out = append(out, f.Subframes[c].Samples[i])
			}
		}
	}
	if len(out) != int(si.NSamples)*info.Channels {
		return nil, info, si.MD5sum, fmt.Errorf("decoded %d samples, STREAMINFO says %d", len(out)/info.Channels, si.NSamples)
	}
	return out, info, si.MD5sum, nil
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

// roundTrip encodes samples, decodes them with mewkiz/flac and fails the test
// unless every sample, the info and the MD5 come back.
func roundTrip(t testing.TB, samples []int32, info Info, opts Options) []byte {
	t.Helper()
	b, err := Append(nil, samples, info, opts)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	checkDecodes(t, b, samples, info)
	return b
}

func checkDecodes(t testing.TB, b []byte, samples []int32, info Info) {
	t.Helper()
	got, gotInfo, sum, err := decodeMewkiz(b)
	if err != nil {
		t.Fatalf("decode (%d bytes): %v", len(b), err)
	}
	if gotInfo != info {
		t.Fatalf("info = %+v, want %+v", gotInfo, info)
	}
	if len(got) != len(samples) {
		t.Fatalf("decoded %d samples, want %d", len(got), len(samples))
	}
	for i := range got {
		if got[i] != samples[i] {
			t.Fatalf("sample %d (channel %d) = %d, want %d", i/info.Channels, i%info.Channels, got[i], samples[i])
		}
	}
	if want := pcmMD5(samples, info.BitsPerSample); sum != want {
		t.Fatalf("STREAMINFO MD5 = %x, want %x", sum, want)
	}
}

// flacCLI returns the path of the reference `flac` tool or skips the test.
func flacCLI(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("flac")
	if err != nil {
		t.Skip("flac CLI not on PATH")
	}
	return p
}

// cliTest runs `flac -t` (decode and check the MD5) on b.
func cliTest(t testing.TB, b []byte) {
	t.Helper()
	cli := flacCLI(t)
	p := filepath.Join(t.TempDir(), "x.flac")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cli, "-t", "-s", "-w", p).CombinedOutput(); err != nil {
		t.Fatalf("flac -t: %v\n%s", err, out)
	}
}

// cliDecode decodes b with `flac -d` to raw little-endian signed PCM.
func cliDecode(t testing.TB, b []byte, info Info) []int32 {
	t.Helper()
	cli := flacCLI(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "x.flac"), filepath.Join(dir, "x.raw")
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cli, "-d", "-s", "-f", "--force-raw-format", "--endian=little", "--sign=signed", "-o", out, in)
	if o, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("flac -d: %v\n%s", err, o)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	w := (info.BitsPerSample + 7) / 8
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

// cliEncodeSize returns the size of `flac -5` output for samples, with and
// without its default padding, seek table and comment block.
func cliEncodeSize(t testing.TB, samples []int32, info Info, args ...string) (framesOnly, full int) {
	t.Helper()
	cli := flacCLI(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "x.raw")
	w := (info.BitsPerSample + 7) / 8
	raw := make([]byte, 0, len(samples)*w)
	for _, x := range samples {
		for j := range w {
			raw = append(raw, byte(x>>(8*j)))
		}
	}
	if err := os.WriteFile(in, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	enc := func(out string, extra ...string) int {
		a := []string{"-s", "-f", "--force-raw-format", "--endian=little", "--sign=signed",
			fmt.Sprintf("--channels=%d", info.Channels), fmt.Sprintf("--bps=%d", info.BitsPerSample),
			fmt.Sprintf("--sample-rate=%d", info.SampleRate), "-o", out}
		a = append(a, args...)
		a = append(a, extra...)
		a = append(a, in)
		if o, err := exec.Command(cli, a...).CombinedOutput(); err != nil {
			t.Fatalf("flac %v: %v\n%s", a, err, o)
		}
		st, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		return int(st.Size())
	}
	full = enc(filepath.Join(dir, "full.flac"))
	enc(filepath.Join(dir, "bare.flac"), "--no-padding", "--no-seektable")
	// Remove the VORBIS_COMMENT block (vendor string) to count what we also write:
	// "fLaC" + STREAMINFO + frames.
	b, err := os.ReadFile(filepath.Join(dir, "bare.flac"))
	if err != nil {
		t.Fatal(err)
	}
	framesOnly = len(b) - metadataExtra(b)
	return framesOnly, full
}

// metadataExtra returns the bytes of metadata blocks other than STREAMINFO.
func metadataExtra(b []byte) int {
	extra := 0
	p := 4
	for p+4 <= len(b) {
		typ := b[p] & 0x7F
		last := b[p]&0x80 != 0
		n := int(b[p+1])<<16 | int(b[p+2])<<8 | int(b[p+3])
		if typ != 0 {
			extra += 4 + n
		}
		p += 4 + n
		if last {
			break
		}
	}
	return extra
}

// readWAV reads a plain PCM WAV file (the test fixtures: 8/16/24-bit).
func readWAV(path string) ([]int32, Info, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, Info{}, err
	}
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, Info{}, fmt.Errorf("%s: not a RIFF WAVE file", path)
	}
	var info Info
	p := 12
	for p+8 <= len(b) {
		id := string(b[p : p+4])
		n := int(binary.LittleEndian.Uint32(b[p+4:]))
		body := b[p+8 : min(len(b), p+8+n)]
		switch id {
		case "fmt ":
			if len(body) < 16 || binary.LittleEndian.Uint16(body) != 1 {
				return nil, info, fmt.Errorf("%s: not integer PCM", path)
			}
			info.Channels = int(binary.LittleEndian.Uint16(body[2:]))
			info.SampleRate = int(binary.LittleEndian.Uint32(body[4:]))
			info.BitsPerSample = int(binary.LittleEndian.Uint16(body[14:]))
		case "data":
			w := (info.BitsPerSample + 7) / 8
			if w == 0 {
				return nil, info, fmt.Errorf("%s: data before fmt", path)
			}
			s := make([]int32, len(body)/w/info.Channels*info.Channels)
			for i := range s {
				switch w {
				case 1:
					s[i] = int32(body[i]) - 128
				case 2:
					s[i] = int32(int16(binary.LittleEndian.Uint16(body[2*i:])))
				case 3:
					s[i] = int32(uint32(body[3*i])<<8|uint32(body[3*i+1])<<16|uint32(body[3*i+2])<<24) >> 8
				}
			}
			return s, info, nil
		}
		p += 8 + n + n&1
	}
	return nil, info, fmt.Errorf("%s: no data chunk", path)
}

// Generated signals. All are deterministic for a seed.

// speechLike synthesizes seconds of speech-like audio: a glottal pulse train
// with drifting pitch through three moving formant resonators, syllable
// envelopes, fricative noise bursts and pauses with a faint noise floor.
func speechLike(rate int, seconds float64, seed uint64, bps int) []int32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	n := int(float64(rate) * seconds)
	out := make([]int32, n)
	type reson struct{ a1, a2, y1, y2 float64 }
	setReson := func(r *reson, f, bw float64) {
		rr := math.Exp(-math.Pi * bw / float64(rate))
		r.a1 = 2 * rr * math.Cos(2*math.Pi*f/float64(rate))
		r.a2 = -rr * rr
	}
	var f1, f2, f3 reson
	phase := 0.0
	scale := math.Ldexp(1, bps-1) * 0.25
	segLen := 0
	voiced, env, target := true, 0.0, 0.0
	pitch := 120 + 60*rng.Float64()
	fm := [3]float64{500, 1500, 2500}
	for i := range out {
		if segLen == 0 {
			segLen = rate/20 + rng.IntN(rate/5)
			switch r := rng.Float64(); {
			case r < 0.6:
				voiced, target = true, 0.4+0.6*rng.Float64()
				fm = [3]float64{300 + 600*rng.Float64(), 900 + 1500*rng.Float64(), 2200 + 800*rng.Float64()}
			case r < 0.8:
				voiced, target = false, 0.1+0.2*rng.Float64()
			default:
				voiced, target = true, 0
			}
		}
		segLen--
		env += (target - env) * 200 / float64(rate)
		pitch += (rng.Float64() - 0.5) * 0.5
		pitch = min(max(pitch, 80), 250)
		setReson(&f1, min(fm[0], float64(rate)*0.45), 80)
		setReson(&f2, min(fm[1], float64(rate)*0.45), 120)
		setReson(&f3, min(fm[2], float64(rate)*0.45), 200)
		var src float64
		if voiced {
			phase += pitch / float64(rate)
			if phase >= 1 {
				phase--
				src = 1
			}
			src -= pitch / float64(rate) // remove DC
		} else {
			src = (rng.Float64() - 0.5) * 0.3
		}
		y := src
		for _, r := range []*reson{&f1, &f2, &f3} {
			v := y + r.a1*r.y1 + r.a2*r.y2
			r.y2, r.y1 = r.y1, v
			y = v * (1 - r.a1*0.5 - r.a2) * 0.5
		}
		v := y*env*scale*0.5 + rng.NormFloat64()*2
		out[i] = clampBits(v, bps)
	}
	return out
}

// musicLike synthesizes a multi-instrument piece: a plucked bass, a chord
// pad with harmonics, a melody with vibrato, percussion noise hits and a
// feedback-delay reverb, panned across channels.
func musicLike(rate int, seconds float64, channels int, seed uint64, bps int) []int32 {
	rng := rand.New(rand.NewPCG(seed, 2))
	n := int(float64(rate) * seconds)
	fr := float64(rate)
	mix := make([][]float64, channels)
	for c := range mix {
		mix[c] = make([]float64, n)
	}
	type voice struct {
		start, dur  int
		freq, amp   float64
		harm, decay float64
		pan         float64
		vibrato     float64
	}
	var voices []voice
	beat := int(fr * 0.25)
	scaleNotes := []float64{0, 2, 4, 5, 7, 9, 11, 12}
	for t := 0; t < n; t += beat {
		bar := t / (beat * 8)
		root := 110 * math.Pow(2, float64([]int{0, 5, 7, 3}[bar%4])/12)
		// bass every beat
		voices = append(voices, voice{t, beat * 2, root / 2, 0.3, 0.6, 6, 0.5, 0})
		// melody
		if rng.Float64() < 0.7 {
			st := scaleNotes[rng.IntN(len(scaleNotes))]
			voices = append(voices, voice{t, beat * (1 + rng.IntN(3)), root * 4 * math.Pow(2, st/12), 0.15, 0.4, 2, rng.Float64(), 5})
		}
		// pad chord every bar
		if t%(beat*8) == 0 {
			for _, iv := range []float64{0, 4, 7, 11} {
				voices = append(voices, voice{t, beat * 8, root * 2 * math.Pow(2, iv/12), 0.06, 0.8, 0.3, 0.2 + 0.6*rng.Float64(), 0})
			}
		}
	}
	for _, v := range voices {
		end := min(n, v.start+v.dur+int(fr*0.3))
		for i := v.start; i < end; i++ {
			tt := float64(i-v.start) / fr
			env := math.Exp(-v.decay*tt) * math.Min(1, tt*200)
			if i > v.start+v.dur {
				env *= math.Exp(-20 * float64(i-v.start-v.dur) / fr)
			}
			ph := 2 * math.Pi * v.freq * (tt + 0.002*math.Sin(2*math.Pi*v.vibrato*tt))
			s := 0.0
			h := 1.0
			for k := 1; k <= 8 && v.freq*float64(k) < fr/2; k++ {
				s += h * math.Sin(float64(k)*ph)
				h *= v.harm
			}
			s *= v.amp * env
			for c := range mix {
				p := 0.0
				if channels > 1 {
					p = math.Abs(float64(c)/float64(channels-1) - v.pan)
				}
				mix[c][i] += s * (1 - 0.6*p)
			}
		}
	}
	// percussion: noise bursts on off-beats
	for t := beat / 2; t < n; t += beat {
		amp := 0.08 + 0.1*rng.Float64()
		for i := t; i < min(n, t+int(fr*0.08)); i++ {
			e := math.Exp(-60 * float64(i-t) / fr)
			x := rng.NormFloat64() * amp * e
			for c := range mix {
				mix[c][i] += x
			}
		}
	}
	// reverb: two feedback delays per channel, slightly different.
	for c := range mix {
		d1 := int(fr*0.031) + 7*c
		d2 := int(fr*0.047) + 11*c
		m := mix[c]
		for i := range m {
			if i >= d1 {
				m[i] += 0.35 * m[i-d1]
			}
			if i >= d2 {
				m[i] += 0.25 * m[i-d2]
			}
		}
	}
	scale := math.Ldexp(1, bps-1) * 0.45
	out := make([]int32, n*channels)
	for i := range n {
		for c := range channels {
			out[i*channels+c] = clampBits(mix[c][i]*scale+rng.NormFloat64()*0.5, bps)
		}
	}
	return out
}

func clampBits(v float64, bps int) int32 {
	hi := math.Ldexp(1, bps-1) - 1
	return int32(math.Round(min(max(v, -hi-1), hi)))
}

func whiteNoise(n int, bps int, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, 3))
	out := make([]int32, n)
	lo := int64(-1) << (bps - 1)
	for i := range out {
		out[i] = int32(lo + rng.Int64N(int64(1)<<bps))
	}
	return out
}

func itoa(v int) string { return fmt.Sprint(v) }

func ftoa(v float64) string { return fmt.Sprintf("%.3f", v) }

func infoString(i Info) string {
	return fmt.Sprintf("%d Hz %dch %d-bit", i.SampleRate, i.Channels, i.BitsPerSample)
}
