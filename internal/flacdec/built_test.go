package flacdec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// builtStream is a stream written by the test writer with known samples.
type builtStream struct {
	name          string
	rate, nch, bp int
	samples       []int32
	stream        []byte
}

// build writes samples as frames of the given sizes, asking spec for each frame's coding.
func build(name string, rate, nch, bps int, samples []int32, sizes []int, spec func(frame, start, n int) frameSpec) builtStream {
	minB, maxB := 1<<16-1, 0
	for i, n := range sizes {
		if i < len(sizes)-1 {
			minB = min(minB, n)
		}
		maxB = max(maxB, n)
	}
	minB = min(minB, maxB)
	b := streamHeader(samples, rate, nch, bps, max(minB, 16), max(maxB, 16))
	start := 0
	for i, n := range sizes {
		f := spec(i, start, n)
		b = writeFrame(b, samples[start*nch:(start+n)*nch], nch, f)
		start += n
	}
	if start*nch != len(samples) {
		panic("sizes do not add up")
	}
	return builtStream{name, rate, nch, bps, samples, b}
}

func defaults(f frameSpec) frameSpec {
	if f.ssCode == 0 && f.bps != 0 {
		f.ssCode = -1
	}
	return f
}

// lpcFor returns order coefficients of the given precision that predict x with residuals
// that fit in 32 bits (random, halved until they do), and the shift.
func lpcFor(rng *rand.Rand, x []int64, order int, prec uint, shift int) []int32 {
	c := make([]int32, order)
	lim := int64(1)<<(prec-1) - 1
	for j := range c {
		c[j] = int32(rng.Int64N(2*lim+1) - lim)
	}
	c[0] = int32(lim) // a real predictor leans on the last sample
	for {
		res := residualOf(x, subSpec{kind: 3, order: order, coefs: c, shift: shift})
		ok := true
		for _, v := range res {
			if v > math.MaxInt32-1 || v < math.MinInt32+1 {
				ok = false
			}
		}
		if ok {
			return c
		}
		for j := range c {
			c[j] /= 2
		}
	}
}

func chanOf(s []int32, nch, c, start, n int) []int64 {
	x := make([]int64, n)
	for i := range n {
		x[i] = int64(s[(start+i)*nch+c])
	}
	return x
}

func builtStreams() []builtStream {
	var out []builtStream
	rng := rand.New(rand.NewPCG(9, 9))

	// 1. Variable blocking, odd block sizes (codes 1, 2..5, 6, 7, 8..15), a sample rate of
	// its own (code 13), every fixed order, escapes of every kind, 5-bit parameters.
	{
		sizes := []int{100, 4096, 17, 1000, 192, 576, 256, 4608, 300, 33, 5}
		n := 0
		for _, v := range sizes {
			n += v
		}
		s := synth(22051, 1, 16, float64(n)/22051+0.01, 3)[:n]
		for i := 4200; i < 4300; i++ {
			s[i] = 77 // a constant stretch: residual zero, escape width 0
		}
		out = append(out, build("variable-mono16", 22051, 1, 16, s, sizes, func(fi, start, bn int) frameSpec {
			order := fi % 5
			po := uint(0)
			for po < 4 && bn%(2<<po) == 0 && bn>>(po+1) >= order {
				po++
			}
			parts := 1 << po
			sub := subSpec{kind: 2, order: min(order, bn), method: fi % 2, partOrder: po,
				escape: make([]bool, parts), escapeWidth: make([]uint, parts)}
			for p := range parts {
				sub.escape[p] = (p+fi)%3 == 0
			}
			if fi == 1 { // the frame holding the constant stretch
				sub.order = 1
			}
			return defaults(frameSpec{variable: true, number: uint64(start), bps: 16, rate: 22051, srCode: -1, bsCode: -1,
				subs: []subSpec{sub}})
		}))
	}

	// 2. LPC of every order 1..32, precisions 1..15, shifts 0..15, 24-bit, block sizes
	// written with the 16-bit code; partition orders up to 8.
	{
		sizes := make([]int, 32)
		n := 0
		for i := range sizes {
			sizes[i] = 512 + 256*(i%3)
			n += sizes[i]
		}
		s := synth(96000, 1, 24, float64(n)/96000+0.01, 4)[:n]
		out = append(out, build("lpc-orders-24bit", 96000, 1, 24, s, sizes, func(fi, start, bn int) frameSpec {
			order := fi + 1
			prec := uint(1 + fi%15)
			shift := fi % 16
			x := chanOf(s, 1, 0, start, bn)
			po := uint(fi % 9)
			for bn>>po < order || bn%(1<<po) != 0 {
				po--
			}
			sub := subSpec{kind: 3, order: order, precision: prec, shift: shift,
				coefs: lpcFor(rng, x, order, prec, shift), method: 1, partOrder: po}
			bsCode := 7
			if fi%2 == 0 {
				bsCode = -1
			}
			return defaults(frameSpec{number: uint64(fi), bps: 24, rate: 96000, srCode: -1, bsCode: bsCode, subs: []subSpec{sub}})
		}))
	}

	// 3. 32-bit stereo with 33-bit side channels: every assignment, every subframe type on
	// the side channel, wasted bits.
	{
		const bn = 1024
		sizes := []int{bn, bn, bn, bn, bn, bn, bn, bn}
		n := bn * len(sizes)
		s := make([]int32, 2*n)
		for i := range n {
			ph := 2 * math.Pi * float64(i) / 2000
			l := math.Sin(ph) * (math.MaxInt32 - 100)
			s[2*i] = int32(l)
			s[2*i+1] = int32(-l * 0.999)
			if i/bn == 4 { // constant side, wasted bits
				s[2*i], s[2*i+1] = math.MaxInt32-7, -math.MaxInt32+7
			}
			if i/bn == 5 {
				s[2*i] &^= 0xFF
				s[2*i+1] &^= 0xFF
			}
		}
		kinds := []subSpec{
			{kind: 2, order: 2, partOrder: 3, method: 1},
			{kind: 1},
			{kind: 2, order: 3, partOrder: 0},
			{kind: 2, order: 4, partOrder: 2, escape: []bool{false, true}},
			{kind: 0, wasted: 4},
			{kind: 2, order: 2, wasted: 8, partOrder: 1, method: 1},
			{kind: 3, order: 2, precision: 15, shift: 14, coefs: []int32{2 << 14 / 2 * 2 >> 1, -(1 << 14) + 1}, partOrder: 2, method: 1},
			{kind: 1, wasted: 1},
		}
		assigns := []int{8, 9, 10, 8, 9, 10, 10, 1}
		out = append(out, build("stereo32-side33", 48000, 2, 32, s, sizes, func(fi, start, bn int) frameSpec {
			side := kinds[fi]
			other := subSpec{kind: 2, order: 2, partOrder: 2, method: 1}
			if fi == 4 {
				other = subSpec{kind: 0}
			}
			if fi == 5 {
				other = subSpec{kind: 2, order: 2, wasted: 7, method: 1} // mid = (l+r)>>1 keeps 7 zero bits
			}
			if fi == 6 { // fix the LPC to a stable second-order predictor
				side.coefs = []int32{(1 << 14) * 2 * 9999 / 10000, -(1 << 14)}
				side.shift = 14
				side.precision = 16 - 1
				side.coefs[0] = int32(float64(1<<14) * 2 * math.Cos(2*math.Pi/2000))
				if side.coefs[0] >= 1<<14 {
					side.shift = 13
					side.coefs = []int32{int32(float64(1<<13) * 2 * math.Cos(2*math.Pi/2000)), -(1 << 13)}
				}
			}
			subs := []subSpec{other, side}
			switch assigns[fi] {
			case 9:
				subs = []subSpec{side, other}
			case 1:
				side.wasted = 0
				subs = []subSpec{{kind: 1}, {kind: 1, wasted: 0}}
			}
			return defaults(frameSpec{number: uint64(fi), assign: assigns[fi], bps: 32, rate: 48000, srCode: -1, bsCode: -1, subs: subs})
		}))
	}

	// 4. Eight 12-bit channels (sample size code 2, or 0 = from STREAMINFO), a rate in kHz
	// (code 12), then in tens of Hz (code 14) in another stream.
	{
		sizes := []int{1000, 1000, 999}
		n := 2999
		s := synth(11000, 8, 12, float64(n)/11000+0.01, 5)[:n*8]
		out = append(out, build("8ch-12bit-khz", 11000, 8, 12, s, sizes, func(fi, start, bn int) frameSpec {
			subs := make([]subSpec, 8)
			for c := range subs {
				switch c % 4 {
				case 0:
					subs[c] = subSpec{kind: 1}
				case 1:
					subs[c] = subSpec{kind: 2, order: c % 5, partOrder: 0}
				case 2:
					x := chanOf(s, 8, c, start, bn)
					subs[c] = subSpec{kind: 3, order: 3, precision: 10, shift: 9, coefs: lpcFor(rng, x, 3, 10, 9)}
				default:
					subs[c] = subSpec{kind: 2, order: 1, escape: []bool{true}}
				}
			}
			f := frameSpec{number: uint64(fi), bps: 12, rate: 11000, srCode: 12, bsCode: -1, subs: subs, ssCode: -1}
			if fi == 1 {
				f.ssCode, f.srCode = 0, 0
			}
			return f
		}))
		s2 := synth(44100, 2, 16, 0.1, 6)
		n2 := len(s2) / 2
		out = append(out, build("stereo16-tens-of-hz", 44100, 2, 16, s2, []int{n2}, func(fi, start, bn int) frameSpec {
			return frameSpec{bps: 16, rate: 44100, srCode: 14, bsCode: -1, ssCode: -1, assign: 1,
				subs: []subSpec{{kind: 2, order: 2}, {kind: 2, order: 2, method: 1}}}
		}))
	}

	// 5. Rice parameters up to 30 (5-bit method), an escape of width 31, partition order 15.
	{
		n := 4096
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(rng.Uint32())
		}
		for i := 2048; i < n; i++ {
			s[i] >>= 1 // 31-bit values: escape width 31
		}
		out = append(out, build("rice-wide-32bit", 8000, 1, 32, s, []int{n}, func(fi, start, bn int) frameSpec {
			return frameSpec{bps: 32, rate: 8000, srCode: -1, bsCode: -1, ssCode: -1,
				subs: []subSpec{{kind: 2, order: 0, method: 1, partOrder: 1, param: []int{30}, escape: []bool{false, true}, escapeWidth: []uint{0, 31}}}}
		}))
		n3 := 32768
		s3 := synth(32000, 1, 8, 1.1, 7)[:n3]
		out = append(out, build("partition-order-15", 32000, 1, 8, s3, []int{n3}, func(fi, start, bn int) frameSpec {
			return frameSpec{bps: 8, rate: 32000, srCode: -1, bsCode: -1, ssCode: -1,
				subs: []subSpec{{kind: 2, order: 1, partOrder: 15}}}
		}))
		n4 := 65535
		s4 := synth(8000, 1, 20, 8.2, 8)[:n4]
		out = append(out, build("block-65535-20bit", 8000, 1, 20, s4, []int{n4}, func(fi, start, bn int) frameSpec {
			return frameSpec{bps: 20, rate: 8000, srCode: -1, bsCode: -1, ssCode: -1,
				subs: []subSpec{{kind: 2, order: 2, method: 1}}}
		}))
	}
	return out
}

// TestBuiltStreams decodes streams that use the codings an encoder tuned for size never
// picks and compares every sample with what was written and with flac -d.
func TestBuiltStreams(t *testing.T) {
	var total stats
	for _, bs := range builtStreams() {
		got, info, st, err := decodeStats(bs.stream)
		if err != nil {
			t.Fatalf("%s: %v", bs.name, err)
		}
		if info.Channels != bs.nch || info.BitsPerSample != bs.bp || info.SampleRate != bs.rate {
			t.Fatalf("%s: info %+v", bs.name, info)
		}
		sameSamples(t, bs.name, got, bs.samples, bs.nch)
		total.add(st)
		if _, err := exec_LookPath(); err == nil {
			want, ok, msg := cliDecode(t, bs.stream, bs.bp)
			if !ok {
				t.Fatalf("%s: flac -d rejects it: %s", bs.name, msg)
			}
			sameSamples(t, bs.name+" (flac -d)", want, bs.samples, bs.nch)
		}
	}
	t.Logf("codings met: %+v", total)
	checkCoverage(t, &total, []string{"constant", "verbatim", "fixed", "lpc", "wasted", "leftside", "sideright",
		"midside", "independent-stereo", "rice2", "escape", "variable", "wide", "lpc32"})
	if total.maxPartOr != 15 {
		t.Errorf("highest partition order %d, want 15", total.maxPartOr)
	}
}
