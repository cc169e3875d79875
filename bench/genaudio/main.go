// Command genaudio writes a deterministic speech-like audio dataset for benchmarks: a class-folder
// tree root/<class>/<clip>.wav of 16-bit mono WAV clips and, optionally, the same clips as FLAC.
// The clips come from a small source-filter synthesizer (a glottal pulse train with pitch
// contours through moving formant resonators, fricative and plosive noise, syllable envelopes,
// pauses and a room-noise floor) so that FLAC compresses them about as well as real recordings.
//
// Usage:
//
//	go run ./bench/genaudio -out /tmp/wav -flac-out /tmp/flac -total 66m -clip 10s -rate 48000
//
// Clip names are unique across classes (class/NNNNNN.wav), so the files of all classes can be
// encoded into one folder. FLAC files are made with the flac CLI (flac -5) when it is on PATH,
// else with encoders/audiofield.EncodeFLAC; -encoder forces one of them.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/mldf/convert/encoders/audiofield"
	"golang.org/x/sync/errgroup"
)

func main() {
	var c config
	flag.StringVar(&c.out, "out", "", "output folder for the WAV tree (created; must be empty or absent)")
	flag.StringVar(&c.flacOut, "flac-out", "", "also write the clips as FLAC into this folder (same tree)")
	flag.StringVar(&c.encoder, "encoder", "auto", "FLAC encoder: auto (flac CLI if on PATH), cli or go")
	flag.DurationVar(&c.total, "total", 66*time.Minute, "total duration of audio")
	flag.DurationVar(&c.clip, "clip", 10*time.Second, "mean clip duration (each clip is 0.75..1.25 of it)")
	flag.IntVar(&c.rate, "rate", 48000, "sample rate in Hz")
	flag.IntVar(&c.classes, "classes", 10, "number of class folders")
	flag.Uint64Var(&c.seed, "seed", 1, "random seed")
	flag.Parse()
	if err := run(context.Background(), c); err != nil {
		fmt.Fprintln(os.Stderr, "genaudio:", err)
		os.Exit(1)
	}
}

type config struct {
	out, flacOut, encoder string
	total, clip           time.Duration
	rate, classes         int
	seed                  uint64
}

// classNames are the class folders (Speech Commands-style words); more classes get numbers.
var classNames = []string{"yes", "no", "up", "down", "left", "right", "on", "off", "stop", "go"}

func className(k int) string {
	if k < len(classNames) {
		return classNames[k]
	}
	return fmt.Sprintf("class_%02d", k)
}

func run(ctx context.Context, c config) error {
	switch {
	case c.out == "":
		return errors.New("-out is required")
	case c.rate < 8000 || c.rate > 384000:
		return fmt.Errorf("-rate %d: want 8000..384000", c.rate)
	case c.classes < 1 || c.total <= 0 || c.clip < 100*time.Millisecond:
		return fmt.Errorf("invalid sizes: classes %d total %v clip %v", c.classes, c.total, c.clip)
	}
	useCLI := false
	if c.flacOut != "" {
		_, err := exec.LookPath("flac")
		switch c.encoder {
		case "auto":
			useCLI = err == nil
		case "cli":
			if err != nil {
				return fmt.Errorf("-encoder cli: %w", err)
			}
			useCLI = true
		case "go":
		default:
			return fmt.Errorf("-encoder %q: want auto, cli or go", c.encoder)
		}
	}
	n := int(math.Round(c.total.Seconds() / c.clip.Seconds()))
	if n < 1 {
		n = 1
	}
	for _, root := range []string{c.out, c.flacOut} {
		if root == "" {
			continue
		}
		if entries, err := os.ReadDir(root); err == nil && len(entries) > 0 {
			return fmt.Errorf("%s is not empty", root)
		}
		for k := 0; k < c.classes; k++ {
			if err := os.MkdirAll(filepath.Join(root, className(k)), 0o755); err != nil {
				return err
			}
		}
	}
	start := time.Now()
	var frames = make([]int, n)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			r := rand.New(rand.NewPCG(c.seed, uint64(i)))
			dur := c.clip.Seconds() * (0.75 + 0.5*r.Float64())
			pcm := Speech(r, c.rate, int(dur*float64(c.rate)))
			frames[i] = len(pcm)
			rel := filepath.Join(className(i%c.classes), fmt.Sprintf("%06d", i))
			wavPath := filepath.Join(c.out, rel+".wav")
			if err := os.WriteFile(wavPath, WAV(pcm, c.rate), 0o644); err != nil {
				return err
			}
			if c.flacOut == "" {
				return nil
			}
			flacPath := filepath.Join(c.flacOut, rel+".flac")
			if useCLI {
				if out, err := exec.CommandContext(ctx, "flac", "-5", "-s", "-f", "-o", flacPath, wavPath).CombinedOutput(); err != nil {
					return fmt.Errorf("flac %s: %w: %s", wavPath, err, out)
				}
				return nil
			}
			s := make([]int32, len(pcm))
			for k, v := range pcm {
				s[k] = int32(v)
			}
			b, err := audiofield.EncodeFLAC(s, 1, 16, c.rate)
			if err != nil {
				return fmt.Errorf("encode %s: %w", flacPath, err)
			}
			return os.WriteFile(flacPath, b, 0o644)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	total := 0
	for _, f := range frames {
		total += f
	}
	enc := "none"
	if c.flacOut != "" {
		enc = map[bool]string{true: "flac -5", false: "audiofield.EncodeFLAC"}[useCLI]
	}
	fmt.Fprintf(os.Stderr, "genaudio: %d clips, %.3f h of %d Hz 16-bit mono audio in %s (FLAC: %s) in %.1fs\n",
		n, float64(total)/float64(c.rate)/3600, c.rate, c.out, enc, time.Since(start).Seconds())
	return nil
}

// WAV returns a canonical 44-byte-header PCM WAV file of 16-bit mono samples.
func WAV(pcm []int16, rate int) []byte {
	b := make([]byte, 44+2*len(pcm))
	le := binary.LittleEndian
	copy(b[0:], "RIFF")
	le.PutUint32(b[4:], uint32(36+2*len(pcm)))
	copy(b[8:], "WAVEfmt ")
	le.PutUint32(b[16:], 16)
	le.PutUint16(b[20:], 1) // PCM
	le.PutUint16(b[22:], 1) // mono
	le.PutUint32(b[24:], uint32(rate))
	le.PutUint32(b[28:], uint32(2*rate))
	le.PutUint16(b[32:], 2)
	le.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	le.PutUint32(b[40:], uint32(2*len(pcm)))
	for i, v := range pcm {
		le.PutUint16(b[44+2*i:], uint16(v))
	}
	return b
}

// vowels are rough F1..F4 formant frequencies (Hz) of an adult male voice.
var vowels = [][4]float64{
	{270, 2290, 3010, 3700}, // i
	{390, 1990, 2550, 3600}, // e
	{530, 1840, 2480, 3500}, // ɛ
	{660, 1720, 2410, 3500}, // æ
	{730, 1090, 2440, 3400}, // a
	{570, 840, 2410, 3300},  // ɔ
	{440, 1020, 2240, 3300}, // ʊ
	{300, 870, 2240, 3300},  // u
	{520, 1190, 2390, 3400}, // ʌ
	{500, 1500, 2500, 3500}, // ə
}

// segment holds the synthesis targets from sample start up to the next segment.
type segment struct {
	start  int
	voiced float64    // glottal source amplitude
	noise  float64    // frication amplitude (relative to the voiced RMS)
	f0     float64    // pitch target, Hz
	form   [4]float64 // formant targets, Hz
	nc, nb float64    // frication centre and bandwidth, Hz
}

// Speech synthesizes n samples of speech-like audio at rate Hz from r: phrases of syllables
// separated by pauses, normalized to a peak of -1..-6 dBFS over a -70..-60 dBFS noise floor.
func Speech(r *rand.Rand, rate, n int) []int16 {
	fs := float64(rate)
	female := r.IntN(2) == 0
	base, scale := 85+r.Float64()*70, 1.0
	if female {
		base, scale = 165+r.Float64()*90, 1.15+r.Float64()*0.05
	}
	segs := timeline(r, fs, n, base, scale)

	voiced := make([]float64, n)
	fric := make([]float64, n)
	var (
		si                  int
		f0, vAmp, nAmp      = base, 0.0, 0.0
		form                = segs[0].form
		nc, nb              = 4000.0, 2000.0
		res                 [4]resonator
		fr, fr2             resonator
		phase, prev, jitter float64
		blk                 = rate / 1000 // parameter update every ~1 ms
	)
	if f := segs[0].f0; f > 0 {
		f0 = f
	}
	ampA := 1 - math.Exp(-1/(0.008*fs))            // 8 ms amplitude smoothing, per sample
	frmA := 1 - math.Exp(-float64(blk)/(0.025*fs)) // 25 ms formant glide, per block
	f0A := 1 - math.Exp(-float64(blk)/(0.06*fs))   // 60 ms pitch glide, per block
	for i := 0; i < n; i++ {
		for si+1 < len(segs) && i >= segs[si+1].start {
			si++
		}
		s := &segs[si]
		if i%blk == 0 {
			if s.f0 > 0 {
				f0 += (s.f0 - f0) * f0A
			}
			jitter = 0.995*jitter + 0.003*r.NormFloat64()
			for k := range form {
				form[k] += (s.form[k] - form[k]) * frmA
				res[k].set(form[k], 60+form[k]*0.06, fs)
			}
			if s.noise > 0 {
				nc, nb = s.nc, s.nb
			}
			fr.setPower(nc, nb, fs)
			fr2.set(nc, nb, fs)
		}
		vAmp += (s.voiced - vAmp) * ampA
		nAmp += (s.noise - nAmp) * ampA
		phase += f0 * (1 + jitter) / fs
		if phase >= 1 {
			phase -= 1
		}
		g := rosenberg(phase)
		x := (g-prev)*vAmp + 0.004*vAmp*r.NormFloat64() // radiation (difference) + aspiration
		prev = g
		for k := range res {
			x = res[k].step(x)
		}
		voiced[i] = x
		fric[i] = fr2.step(fr.step(r.NormFloat64())) * nAmp
	}

	// Mix: the voiced part peak-normalized, frication relative to the voiced RMS.
	var peak, sum float64
	for _, v := range voiced {
		peak = math.Max(peak, math.Abs(v))
	}
	if peak == 0 {
		peak = 1
	}
	cnt := 0
	for _, v := range voiced {
		if math.Abs(v) > 0.01*peak {
			sum += v * v
			cnt++
		}
	}
	rms := 0.2
	if cnt > 0 {
		rms = math.Sqrt(sum/float64(cnt)) / peak
	}
	out := voiced
	peak2 := 0.0
	for i := range out {
		out[i] = out[i]/peak + fric[i]*rms*0.6
		peak2 = math.Max(peak2, math.Abs(out[i]))
	}
	if peak2 == 0 {
		peak2 = 1
	}
	gain := 32767 * math.Pow(10, -(1+5*r.Float64())/20) / peak2
	floor := 32768 * math.Pow(10, -(60+10*r.Float64())/20) // noise floor RMS in LSB
	tilt := 0.3 + 0.5*r.Float64()                          // one-pole low-pass: pinkish room noise
	norm := math.Sqrt((1 + tilt) / (1 - tilt))             // keeps the filtered noise at unit RMS
	pcm := make([]int16, n)
	var lp float64
	for i, v := range out {
		lp = tilt*lp + (1-tilt)*r.NormFloat64()
		s := math.Round(v*gain + lp*norm*floor)
		pcm[i] = int16(math.Max(-32768, math.Min(32767, s)))
	}
	return pcm
}

// timeline lays out the clip: leading silence, then phrases (declining pitch, 1..3.5 s) of
// syllables (optional consonant onset, a vowel, sometimes a coda) separated by pauses.
func timeline(r *rand.Rand, fs float64, n int, base, scale float64) []segment {
	sec := func(s float64) int { return int(s * fs) }
	segs := []segment{{start: 0, form: vowels[9]}}
	t := sec(0.1 + 0.4*r.Float64())
	add := func(dur float64, s segment) {
		s.start = t
		segs = append(segs, s)
		t += sec(dur)
	}
	silence := func(dur float64) { add(dur, segment{form: segs[len(segs)-1].form}) }
	vowel := func() [4]float64 {
		v := vowels[r.IntN(len(vowels))]
		for k := range v {
			v[k] *= scale * (0.92 + 0.16*r.Float64())
		}
		return v
	}
	consonant := func(f0 float64, next [4]float64) {
		switch r.IntN(6) {
		case 0: // s
			add(0.06+0.08*r.Float64(), segment{noise: 0.3 + 0.3*r.Float64(), f0: f0, form: next, nc: 5500 + 2000*r.Float64(), nb: 2500})
		case 1: // sh
			add(0.06+0.08*r.Float64(), segment{noise: 0.3 + 0.3*r.Float64(), f0: f0, form: next, nc: 2800 + 800*r.Float64(), nb: 1500})
		case 2: // f, h: weak and broad
			add(0.05+0.07*r.Float64(), segment{noise: 0.1 + 0.15*r.Float64(), f0: f0, form: next, nc: 2000 + 3000*r.Float64(), nb: 5000})
		case 3: // plosive: closure, then a burst
			silence(0.03 + 0.05*r.Float64())
			add(0.01+0.015*r.Float64(), segment{noise: 0.5 + 0.5*r.Float64(), f0: f0, form: next, nc: 1500 + 2500*r.Float64(), nb: 3000})
		case 4: // nasal
			add(0.05+0.04*r.Float64(), segment{voiced: 0.35, f0: f0, form: [4]float64{250, 1200 * scale, 2500 * scale, 3300 * scale}})
		default: // voiced fricative (z, v)
			add(0.05+0.06*r.Float64(), segment{voiced: 0.25, noise: 0.2, f0: f0, form: next, nc: 4500 + 2000*r.Float64(), nb: 3000})
		}
	}
	for t < n-sec(0.4) {
		phrase := sec(1 + 2.5*r.Float64())
		p0, p1 := base*(1.1+0.15*r.Float64()), base*(0.8+0.1*r.Float64())
		end := t + phrase
		for t < end && t < n-sec(0.3) {
			f0 := p0 + (p1-p0)*float64(t-(end-phrase))/float64(phrase)
			v := vowel()
			stressed := r.IntN(3) == 0
			if r.Float64() < 0.6 {
				consonant(f0, v)
			}
			amp, dur := 0.55+0.25*r.Float64(), 0.08+0.12*r.Float64()
			if stressed {
				amp, dur, f0 = 0.85+0.15*r.Float64(), dur+0.06, f0*(1.05+0.1*r.Float64())
			}
			add(dur, segment{voiced: amp, f0: f0, form: v})
			if r.Float64() < 0.25 {
				consonant(f0, v)
			}
			if r.Float64() < 0.3 { // word gap
				silence(0.02 + 0.05*r.Float64())
			}
		}
		silence(0.15 + 0.55*r.Float64())
	}
	return segs
}

// rosenberg is a Rosenberg glottal pulse over one period (phase in [0, 1)): opening over 40% of
// the period, closing over 16%, closed for the rest.
func rosenberg(p float64) float64 {
	const tp, tn = 0.4, 0.16
	switch {
	case p < tp:
		return 0.5 * (1 - math.Cos(math.Pi*p/tp))
	case p < tp+tn:
		return math.Cos(math.Pi * (p - tp) / (2 * tn))
	}
	return 0
}

// resonator is a two-pole filter y = a0 x + b1 y1 + b2 y2.
type resonator struct{ a0, b1, b2, y1, y2 float64 }

// set tunes r to centre f and bandwidth bw (Hz) with unit gain at the centre.
func (r *resonator) set(f, bw, fs float64) {
	f = math.Min(f, 0.45*fs)
	rad := math.Exp(-math.Pi * bw / fs)
	th := 2 * math.Pi * f / fs
	r.b1, r.b2 = 2*rad*math.Cos(th), -rad*rad
	r.a0 = (1 - rad) * math.Sqrt(1-2*rad*math.Cos(2*th)+rad*rad)
}

// setPower tunes r like set but with unit output power for unit white-noise input.
func (r *resonator) setPower(f, bw, fs float64) {
	r.set(f, bw, fs)
	rad := math.Sqrt(-r.b2)
	c := math.Cos(2 * math.Pi * math.Min(f, 0.45*fs) / fs)
	v := (1 + rad*rad) / ((1 - rad*rad) * ((1+rad*rad)*(1+rad*rad) - 4*rad*rad*c*c))
	r.a0 = 1 / math.Sqrt(v)
}

func (r *resonator) step(x float64) float64 {
	y := r.a0*x + r.b1*r.y1 + r.b2*r.y2
	r.y2, r.y1 = r.y1, y
	return y
}
