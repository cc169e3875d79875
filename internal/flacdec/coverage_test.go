package flacdec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/mldf/convert/internal/flacenc"
)

// decodeStats decodes b and returns the codings it met.
func decodeStats(b []byte) ([]int32, Info, *stats, error) {
	d := decoder{stats: new(stats)}
	s, info, err := d.decode(b, Options{})
	return s, info, d.stats, err
}

func (s *stats) add(o *stats) {
	for i := range s.kinds {
		s.kinds[i] += o.kinds[i]
	}
	for i := range s.fixed {
		s.fixed[i] += o.fixed[i]
	}
	for i := range s.lpc {
		s.lpc[i] += o.lpc[i]
	}
	for i := range s.assign {
		s.assign[i] += o.assign[i]
	}
	s.wasted += o.wasted
	s.escapes += o.escapes
	s.rice2 += o.rice2
	s.wide += o.wide
	s.variable += o.variable
	s.maxPartOr = max(s.maxPartOr, o.maxPartOr)
}

// testClip returns n frames of nch channels at bps bits: a stretch of speech-like
// audio, one of silence, one of full-scale noise and one with the low two bits zero;
// channel c > 0 follows channel 0 closely in half of the stretches, so that every
// stereo decorrelation mode pays off somewhere.
func testClip(n, nch, bps int, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, uint64(bps)))
	base := synth(8000+int(seed%5)*1000, nch, bps, float64(n)/8000+0.01, seed)
	lo, hi := int64(-1)<<(bps-1), int64(1)<<(bps-1)-1
	clamp := func(v int64) int32 { return int32(min(max(v, lo), hi)) }
	out := make([]int32, n*nch)
	q := n / 4
	for i := range n {
		for c := range nch {
			v := int64(base[i*nch+c])
			switch seg := i / max(q, 1); {
			case seg == 1:
				v = 0
				if c == 1 {
					v = lo / 2
				}
			case seg == 2:
				v = lo + rng.Int64N(hi-lo+1)
			case seg >= 3 && bps > 4:
				v = v &^ 3
			}
			if c > 0 && (i/1024)%2 == 0 && i/max(q, 1) != 1 {
				v = int64(out[i*nch]) + rng.Int64N(3) - 1 // closely follows channel 0
				if bps > 4 && i/max(q, 1) >= 3 {
					v = int64(out[i*nch]) &^ 3
				}
			}
			out[i*nch+c] = clamp(v)
		}
	}
	return out
}

type encCase struct {
	bps, nch, block int
	level           flacenc.Level
	n               int
}

func encoderCases() []encCase {
	var cs []encCase
	blocks := []int{16, 17, 192, 576, 1000, 4096, 4608}
	levels := []flacenc.Level{flacenc.LevelDefault, flacenc.LevelFast, flacenc.LevelBest}
	i := 0
	for bps := 4; bps <= 32; bps++ {
		for _, nch := range []int{1, 2, 3, 8} {
			i++
			n := 3000 + 37*i
			if nch == 8 {
				n = 1200
			}
			cs = append(cs, encCase{bps, nch, blocks[i%len(blocks)], levels[i%len(levels)], n})
		}
	}
	for nch := 1; nch <= 8; nch++ {
		cs = append(cs, encCase{16, nch, 4096, flacenc.LevelDefault, 9000})
		cs = append(cs, encCase{24, nch, 1152, flacenc.LevelBest, 3000})
	}
	cs = append(cs, encCase{16, 2, 65535, flacenc.LevelDefault, 70000})
	return cs
}

// TestEncoderStreams decodes streams of internal/flacenc at every bit depth 4..32 and
// channel count 1..8, with several block sizes and levels, and compares every sample
// with what was encoded; it also checks that the streams used every subframe coding the
// encoder writes.
func TestEncoderStreams(t *testing.T) {
	var total stats
	for _, c := range encoderCases() {
		name := fmt.Sprintf("%dbit-%dch-block%d-level%d", c.bps, c.nch, c.block, c.level)
		s := testClip(c.n, c.nch, c.bps, uint64(c.bps*10+c.nch))
		info := flacenc.Info{SampleRate: 8000 + c.bps, Channels: c.nch, BitsPerSample: c.bps}
		enc, err := flacenc.Append(nil, s, info, flacenc.Options{Level: c.level, BlockSize: c.block})
		if err != nil {
			t.Fatalf("%s: encode: %v", name, err)
		}
		got, gi, st, err := decodeStats(enc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if gi.Channels != c.nch || gi.BitsPerSample != c.bps || gi.SampleRate != info.SampleRate {
			t.Fatalf("%s: info %+v", name, gi)
		}
		sameSamples(t, name, got, s, c.nch)
		total.add(st)
	}
	t.Logf("codings met: %+v", total)
	checkCoverage(t, &total, []string{"constant", "verbatim", "fixed", "lpc", "wasted", "leftside", "sideright", "midside", "independent-stereo", "rice2"})
	for o := range 5 {
		if total.fixed[o] == 0 {
			t.Errorf("no fixed subframe of order %d", o)
		}
	}
}

// checkCoverage fails the test for each named coding the stats did not meet.
func checkCoverage(t *testing.T, s *stats, want []string) {
	t.Helper()
	have := map[string]bool{
		"constant":           s.kinds[0] > 0,
		"verbatim":           s.kinds[1] > 0,
		"fixed":              s.kinds[2] > 0,
		"lpc":                s.kinds[3] > 0,
		"wasted":             s.wasted > 0,
		"leftside":           s.assign[chanLeftSide] > 0,
		"sideright":          s.assign[chanSideRight] > 0,
		"midside":            s.assign[chanMidSide] > 0,
		"independent-stereo": s.assign[1] > 0,
		"rice2":              s.rice2 > 0,
		"escape":             s.escapes > 0,
		"variable":           s.variable > 0,
		"wide":               s.wide > 0,
		"lpc32":              s.lpc[32] > 0,
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("no stream used %s", w)
		}
	}
}

// TestEncoderStreamsCLI compares our decoding of a sample of the encoder's streams with
// flac -d's (libFLAC), covering every bit depth and channel count.
func TestEncoderStreamsCLI(t *testing.T) {
	flacCLI(t)
	for i, c := range encoderCases() {
		if i%3 != 0 && c.nch != 2 {
			continue
		}
		name := fmt.Sprintf("%dbit-%dch-block%d-level%d", c.bps, c.nch, c.block, c.level)
		s := testClip(c.n, c.nch, c.bps, uint64(c.bps*10+c.nch))
		info := flacenc.Info{SampleRate: 8000 + c.bps, Channels: c.nch, BitsPerSample: c.bps}
		enc, err := flacenc.Append(nil, s, info, flacenc.Options{Level: c.level, BlockSize: c.block})
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := Decode(enc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, ok, msg := cliDecode(t, enc, c.bps)
		if !ok {
			t.Fatalf("%s: flac -d: %s", name, msg)
		}
		sameSamples(t, name+" vs flac -d", got, want, c.nch)
	}
}
