// Package resample changes the sample rate of audio with a band-limited windowed-sinc
// (Kaiser) polyphase filter, for any pair of integer rates from MinRate to MaxRate at most
// MaxRatio apart. It passes the band below 0.9 of the lower Nyquist frequency flat and
// attenuates everything above the lower Nyquist by >= 80 dB.
//
// Memory: a Resampler's filter table is at most MaxTableBytes (4 MiB), whatever the rates.
// The taps per phase grow with the downsampling ratio (about 100 × in/out), and the phases
// with the output rate's share of the rates' least common multiple; when the exact table would
// exceed the bound, the table holds fewer, evenly spaced phases and the taps of the others are
// interpolated linearly between them. The phases kept scale with the kernel's bandwidth, so
// the interpolation error stays below -95 dB of full scale at every ratio (TestInterpolationError).
package resample

import (
	"errors"
	"fmt"
	"math"
)

// ErrRate is returned for a sample rate outside MinRate..MaxRate, or two rates more than
// MaxRatio apart.
var ErrRate = errors.New("resample: invalid sample rate")

// Bounds of the rates and of the memory a Resampler takes.
const (
	// MinRate and MaxRate bound the sample rates accepted, in Hz (768 kHz is the highest
	// rate of audio interfaces and of the WAV and FLAC files met in practice).
	MinRate = 1
	MaxRate = 768000
	// MaxRatio bounds in/out and out/in: the taps per phase grow with the downsampling ratio
	// (about 100 × in/out), and so does the work per output sample.
	MaxRatio = 256
	// MaxTableBytes bounds a Resampler's filter table.
	MaxTableBytes = 4 << 20
)

// Design parameters of the prototype low-pass filter.
const (
	// StopbandDB is the design attenuation of the stopband, in dB.
	StopbandDB = 80.0
	// PassbandFraction is where the passband ends, as a fraction of the lower Nyquist
	// frequency; the stopband starts at the lower Nyquist frequency.
	PassbandFraction = 0.9
	// maxPhases is the most phases a table holds. For a ratio near 1 (the widest kernel) a
	// table interpolated between maxPhases+1 phases has an output error below -95 dB of full
	// scale; at a downsampling ratio R the kernel is R times narrower in frequency, and
	// maxPhases/R phases (at least minPhases) keep the error at least that low.
	maxPhases      = 4096
	minPhases      = 64
	maxTableFloats = MaxTableBytes / 4
)

// Resampler converts between two fixed rates. It is immutable after New and safe for
// concurrent use.
type Resampler struct {
	in, out int
	l, m    int     // out/in = l/m in lowest terms
	cutoff  float64 // cut-off frequency in cycles per input sample
	half    float64 // kernel half-width in input samples
	beta    float64 // Kaiser window beta
	taps    int     // taps per phase
	// table holds the taps of every phase (l rows), or, when that table would be too large,
	// of phases+1 evenly spaced phases between which Interleaved interpolates linearly
	// (interp).
	table  []float32
	interp bool
	phases int
	i0beta float64
}

// New returns a resampler from inRate to outRate (Hz): both in MinRate..MaxRate, at most
// MaxRatio apart.
func New(inRate, outRate int) (*Resampler, error) {
	if inRate < MinRate || outRate < MinRate || inRate > MaxRate || outRate > MaxRate {
		return nil, fmt.Errorf("%w: %d Hz to %d Hz (rates must be %d..%d Hz)", ErrRate, inRate, outRate, MinRate, MaxRate)
	}
	if inRate > MaxRatio*outRate || outRate > MaxRatio*inRate {
		return nil, fmt.Errorf("%w: %d Hz to %d Hz (rates must be at most %d times apart)", ErrRate, inRate, outRate, MaxRatio)
	}
	g := gcd(inRate, outRate)
	r := &Resampler{in: inRate, out: outRate, l: outRate / g, m: inRate / g}
	if r.l == r.m {
		return r, nil
	}
	nyq := 0.5 * math.Min(1, float64(outRate)/float64(inRate)) // cycles per input sample
	pass := PassbandFraction * nyq
	r.cutoff = (pass + nyq) / 2
	// Kaiser design: order N = (A - 8) / (2.285 * dw), dw in radians per input sample.
	dw := 2 * math.Pi * (nyq - pass)
	n := (StopbandDB - 8) / (2.285 * dw)
	r.half = math.Ceil(n/2) + 1
	r.beta = 0.1102 * (StopbandDB - 8.7)
	r.i0beta = bessel0(r.beta)
	r.taps = 2 * int(r.half)
	rows, den := r.l, r.l
	if r.l > maxPhases || r.l*r.taps > maxTableFloats {
		p := int(math.Ceil(maxPhases * math.Min(1, float64(outRate)/float64(inRate))))
		p = min(max(p, minPhases), maxPhases, maxTableFloats/r.taps-1)
		rows, den, r.interp, r.phases = p+1, p, true, p
	}
	r.table = make([]float32, rows*r.taps)
	for p := 0; p < rows; p++ {
		r.phase(r.table[p*r.taps:(p+1)*r.taps], float64(p)/float64(den))
	}
	return r, nil
}

// phase fills h with the taps for an output instant frac input samples (0 <= frac < 1) after
// input sample base; tap k multiplies input sample base - half + 1 + k. The taps are
// normalised to sum to 1 so that DC passes exactly.
func (r *Resampler) phase(h []float32, frac float64) {
	var sum float64
	for k := range h {
		v := r.kernel(float64(k) - r.half + 1 - frac) // at input sample time minus output time
		h[k] = float32(v)
		sum += v
	}
	for k := range h {
		h[k] = float32(float64(h[k]) / sum)
	}
}

func (r *Resampler) kernel(t float64) float64 {
	x := t / r.half
	if x <= -1 || x >= 1 {
		return 0
	}
	w := bessel0(r.beta*math.Sqrt(1-x*x)) / r.i0beta
	a := 2 * r.cutoff * t
	s := 1.0
	if a != 0 {
		s = math.Sin(math.Pi*a) / (math.Pi * a)
	}
	return 2 * r.cutoff * s * w
}

// bessel0 is the zeroth-order modified Bessel function of the first kind.
func bessel0(x float64) float64 {
	sum, term := 1.0, 1.0
	q := x * x / 4
	for k := 1; k < 200; k++ {
		term *= q / float64(k*k)
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	return sum
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// TableBytes returns the size of the resampler's filter table in bytes (at most
// MaxTableBytes).
func (r *Resampler) TableBytes() int { return 4 * len(r.table) }

// Rates returns the input and output rates.
func (r *Resampler) Rates() (in, out int) { return r.in, r.out }

// OutLen returns the number of output frames for n input frames: ceil(n * out / in).
func (r *Resampler) OutLen(n int) int {
	return int((int64(n)*int64(r.l) + int64(r.m) - 1) / int64(r.m))
}

// Resample resamples one channel. Output frame j is the band-limited signal at input time
// j*in/out; samples outside src count as zero. It appends to dst[:0] and returns it.
func (r *Resampler) Resample(dst, src []float32) []float32 {
	return r.Interleaved(dst, src, 1)
}

// Interleaved resamples interleaved frames of the given channel count. It appends to dst[:0]
// and returns it.
func (r *Resampler) Interleaved(dst, src []float32, channels int) []float32 {
	if channels <= 0 {
		return dst[:0]
	}
	frames := len(src) / channels
	n := r.OutLen(frames)
	if cap(dst) < n*channels {
		dst = make([]float32, n*channels)
	}
	dst = dst[:n*channels]
	if r.l == r.m {
		copy(dst, src)
		return dst
	}
	if channels > 1 {
		// One channel at a time over contiguous buffers (the mono loop is the fast one).
		in := make([]float32, frames)
		var out []float32
		for c := 0; c < channels; c++ {
			for i := range in {
				in[i] = src[i*channels+c]
			}
			out = r.Interleaved(out, in, 1)
			for j, v := range out {
				dst[j*channels+c] = v
			}
		}
		return dst
	}
	var scratch []float32
	if r.interp {
		scratch = make([]float32, r.taps)
	}
	for j := 0; j < n; j++ {
		pos := int64(j) * int64(r.m)
		base := int(pos / int64(r.l))
		p := int(pos % int64(r.l))
		var h []float32
		if !r.interp {
			h = r.table[p*r.taps : (p+1)*r.taps]
		} else {
			x := float64(p) / float64(r.l) * float64(r.phases)
			i := int(x)
			w := float32(x - float64(i))
			h0 := r.table[i*r.taps : (i+1)*r.taps]
			h1 := r.table[(i+1)*r.taps : (i+2)*r.taps]
			for k := range scratch {
				scratch[k] = h0[k] + w*(h1[k]-h0[k])
			}
			h = scratch
		}
		start := base - int(r.half) + 1
		k0, k1 := 0, len(h)
		if start < 0 {
			k0 = -start
		}
		if start+k1 > frames {
			k1 = frames - start
		}
		if k1 < k0 {
			k1 = k0
		}
		dst[j] = dot(h[k0:k1], src[start+k0:start+k1])
	}
	return dst
}

// dot returns the dot product of h and s (len(s) == len(h)), with four independent
// accumulators so the additions pipeline.
func dot(h, s []float32) float32 {
	s = s[:len(h)]
	var a0, a1, a2, a3 float32
	k := 0
	for ; k+4 <= len(h); k += 4 {
		a0 += h[k] * s[k]
		a1 += h[k+1] * s[k+1]
		a2 += h[k+2] * s[k+2]
		a3 += h[k+3] * s[k+3]
	}
	for ; k < len(h); k++ {
		a0 += h[k] * s[k]
	}
	return (a0 + a1) + (a2 + a3)
}
