package flacdec

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mewkiz/flac"

	"github.com/mldf/convert/internal/flacenc"
)

// synth returns seconds of deterministic audio at rate: a pulse train with a drifting
// pitch through two resonators, a slow envelope and a noise floor (speech-like for
// mono), each channel a little different.
func synth(rate, channels, bps int, seconds float64, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	n := int(float64(rate) * seconds)
	out := make([]int32, n*channels)
	scale := math.Ldexp(1, bps-1) * 0.3
	hi := math.Ldexp(1, bps-1) - 1
	for c := range channels {
		var y1, y2, z1, z2, phase float64
		pitch := 110.0 + 30*float64(c)
		f1, f2 := 700.0, 1800.0
		for i := range n {
			if i%(rate/10+1) == 0 {
				f1 = 300 + 600*rng.Float64()
				f2 = 900 + 1500*rng.Float64()
			}
			pitch = min(max(pitch+(rng.Float64()-0.5), 80), 250)
			phase += pitch / float64(rate)
			src := -pitch / float64(rate)
			if phase >= 1 {
				phase--
				src++
			}
			r1, r2 := math.Exp(-math.Pi*100/float64(rate)), math.Exp(-math.Pi*150/float64(rate))
			a1 := 2 * r1 * math.Cos(2*math.Pi*min(f1, float64(rate)*0.45)/float64(rate))
			b1 := 2 * r2 * math.Cos(2*math.Pi*min(f2, float64(rate)*0.45)/float64(rate))
			v := src + a1*y1 - r1*r1*y2
			y2, y1 = y1, v
			w := v*0.1 + b1*z1 - r2*r2*z2
			z2, z1 = z1, w
			env := 0.55 + 0.45*math.Sin(2*math.Pi*0.5*float64(i)/float64(rate))
			s := (v*0.05+w*0.02)*env*scale + rng.NormFloat64()*math.Ldexp(1, max(bps-16, 0))*2
			out[i*channels+c] = int32(math.Round(min(max(s, -hi-1), hi)))
		}
	}
	return out
}

var benchCases = []struct {
	name                string
	rate, channels, bps int
	seconds             float64
}{
	{"speech48k-mono16", 48000, 1, 16, 30},
	{"music44k-stereo16", 44100, 2, 16, 20},
	{"hires96k-stereo24", 96000, 2, 24, 5},
}

func benchStream(b *testing.B, rate, channels, bps int, seconds float64) ([]byte, int) {
	s := synth(rate, channels, bps, seconds, 1)
	enc, err := flacenc.Append(nil, s, flacenc.Info{SampleRate: rate, Channels: channels, BitsPerSample: bps}, flacenc.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return enc, len(s)
}

// cpuTime is the user+system CPU time of this process so far: the machine is shared, so
// the figures are per CPU-second, not per wall-second.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func report(b *testing.B, cpu time.Duration, samples, channels int, seconds float64) {
	sec := cpu.Seconds() / float64(b.N)
	if sec <= 0 {
		return
	}
	b.ReportMetric(float64(samples)/sec/1e6, "Msamples/cpu-s")
	b.ReportMetric(seconds/3600/(sec/60), "audio-h/cpu-min")
}

// BenchmarkDecode decodes (with the MD5 check) streams of our encoder with this package
// (Decode, and Verify which keeps no samples) and with github.com/mewkiz/flac (MD5
// computed the same way), per CPU-second.
func BenchmarkDecode(b *testing.B) {
	for _, bc := range benchCases {
		enc, ns := benchStream(b, bc.rate, bc.channels, bc.bps, bc.seconds)
		b.Run(bc.name+"/flacdec", func(b *testing.B) {
			b.SetBytes(int64(len(enc)))
			cpu0 := cpuTime()
			for b.Loop() {
				if _, _, err := Decode(enc); err != nil {
					b.Fatal(err)
				}
			}
			report(b, cpuTime()-cpu0, ns, bc.channels, bc.seconds)
		})
		b.Run(bc.name+"/flacdec-verify", func(b *testing.B) {
			b.SetBytes(int64(len(enc)))
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := Verify(enc, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			report(b, cpuTime()-cpu0, ns, bc.channels, bc.seconds)
		})
		b.Run(bc.name+"/mewkiz", func(b *testing.B) {
			b.SetBytes(int64(len(enc)))
			cpu0 := cpuTime()
			for b.Loop() {
				if err := decodeMewkiz(enc); err != nil {
					b.Fatal(err)
				}
			}
			report(b, cpuTime()-cpu0, ns, bc.channels, bc.seconds)
		})
	}
}

// decodeMewkiz decodes with mewkiz/flac, interleaves and checks the MD5, the work
// Decode does.
func decodeMewkiz(enc []byte) error {
	st, err := flac.New(bytes.NewReader(enc))
	if err != nil {
		return err
	}
	nch, bps := int(st.Info.NChannels), int(st.Info.BitsPerSample)
	out := make([]int32, 0, int(st.Info.NSamples)*nch)
	for {
		f, err := st.ParseNext()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		base := len(out)
		out = append(out, make([]int32, int(f.BlockSize)*nch)...)
		for c, sf := range f.Subframes {
			for i, v := range sf.Samples {
				out[base+i*nch+c] = v
			}
		}
	}
	if pcmMD5(out, bps) != st.Info.MD5sum {
		return errors.New("md5")
	}
	return nil
}

// BenchmarkFlacCLI times `flac -t` (decode and MD5 check, libFLAC) on the same streams,
// as the child's CPU time (process start included, a millisecond or two).
func BenchmarkFlacCLI(b *testing.B) {
	cli := flacCLI(b)
	for _, bc := range benchCases {
		enc, ns := benchStream(b, bc.rate, bc.channels, bc.bps, bc.seconds)
		p := filepath.Join(b.TempDir(), "x.flac")
		if err := os.WriteFile(p, enc, 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name+"/flac-t", func(b *testing.B) {
			b.SetBytes(int64(len(enc)))
			var total time.Duration
			for b.Loop() {
				cmd := exec.Command(cli, "-t", "-s", p)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
				total += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			report(b, total, ns, bc.channels, bc.seconds)
		})
	}
}
