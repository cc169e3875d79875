package resample

import (
	"math"
	"testing"
)

func tone(rate, n int, freq, amp float64) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return s
}

// goertzel returns the amplitude of the component at freq in x (rate Hz), using a Hann window
// so that off-bin energy does not leak.
func goertzel(x []float32, rate int, freq float64) float64 {
	n := len(x)
	w := 2 * math.Pi * freq / float64(rate)
	c := 2 * math.Cos(w)
	var s1, s2, wsum float64
	for i, v := range x {
		win := 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n-1))
		wsum += win
		s := float64(v)*win + c*s1 - s2
		s2, s1 = s1, s
	}
	re := s1 - s2*math.Cos(w)
	im := s2 * math.Sin(w)
	return 2 * math.Hypot(re, im) / wsum
}

func rms(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(len(x)))
}

func db(x float64) float64 { return 20 * math.Log10(x) }

// middle drops a quarter of the signal at each end (the filter's edge transients).
func middle(x []float32) []float32 { return x[len(x)/4 : len(x)-len(x)/4] }

var ratios = [][2]int{{48000, 16000}, {44100, 16000}, {8000, 16000}, {16000, 8000}, {22050, 16000}, {32000, 44100}, {16000, 16000}}

// TestPassband: a pure tone keeps its frequency and its level within 0.1 dB.
func TestPassband(t *testing.T) {
	for _, rr := range ratios {
		in, out := rr[0], rr[1]
		r, err := New(in, out)
		if err != nil {
			t.Fatal(err)
		}
		nyq := 0.5 * math.Min(float64(in), float64(out))
		for _, f := range []float64{100, 440, 1000, 0.5 * nyq, 0.85 * nyq} {
			y := r.Resample(nil, tone(in, in, f, 0.5)) // one second
			if len(y) != out {
				t.Fatalf("%d->%d: %d output samples, want %d", in, out, len(y), out)
			}
			m := middle(y)
			got := goertzel(m, out, f)
			if d := db(got / 0.5); math.Abs(d) > 0.1 {
				t.Errorf("%d->%d, %.0f Hz: level changed by %.3f dB", in, out, f, d)
			}
			// Frequency kept: the tone's energy is all at f (rms of a sine = amp/sqrt2).
			if d := db(rms(m) * math.Sqrt2 / got); math.Abs(d) > 0.1 {
				t.Errorf("%d->%d, %.0f Hz: energy off the tone's frequency: %.3f dB", in, out, f, d)
			}
		}
	}
}

// TestStopband: content above the new Nyquist frequency is attenuated by at least 60 dB.
func TestStopband(t *testing.T) {
	for _, rr := range ratios {
		in, out := rr[0], rr[1]
		if out >= in {
			continue
		}
		r, _ := New(in, out)
		nyq := 0.5 * float64(out)
		for _, f := range []float64{1.01 * nyq, 1.1 * nyq, 1.5 * nyq, 0.49 * float64(in)} {
			y := middle(r.Resample(nil, tone(in, in, f, 0.9)))
			if d := db(rms(y) * math.Sqrt2 / 0.9); d > -60 {
				t.Errorf("%d->%d, %.0f Hz: attenuated only %.1f dB", in, out, f, -d)
			}
		}
	}
}

// TestImages: upsampling leaves no image of the input above the input's Nyquist frequency.
func TestImages(t *testing.T) {
	for _, rr := range ratios {
		in, out := rr[0], rr[1]
		if out <= in {
			continue
		}
		r, _ := New(in, out)
		for _, f := range []float64{1000, 0.85 * 0.5 * float64(in)} {
			y := middle(r.Resample(nil, tone(in, in, f, 0.9)))
			img := float64(in) - f // first image
			if d := db(goertzel(y, out, img) / 0.9); d > -60 {
				t.Errorf("%d->%d, %.0f Hz: image at %.0f Hz only %.1f dB down", in, out, f, img, -d)
			}
		}
	}
}

func TestInterleavedMatchesMono(t *testing.T) {
	r, _ := New(44100, 16000)
	a, b := tone(44100, 4410, 440, 0.5), tone(44100, 4410, 3000, 0.25)
	st := make([]float32, 2*len(a))
	for i := range a {
		st[2*i], st[2*i+1] = a[i], b[i]
	}
	ya, yb, ys := r.Resample(nil, a), r.Resample(nil, b), r.Interleaved(nil, st, 2)
	for i := range ya {
		if math.Abs(float64(ys[2*i]-ya[i])) > 1e-6 || math.Abs(float64(ys[2*i+1]-yb[i])) > 1e-6 {
			t.Fatalf("frame %d differs", i)
		}
	}
}

// TestLargeRatio covers the per-sample kernel path (more phases than the table holds).
func TestLargeRatio(t *testing.T) {
	r, err := New(44100, 16001)
	if err != nil {
		t.Fatal(err)
	}
	if !r.interp {
		t.Fatal("expected the interpolated path")
	}
	for _, f := range []float64{1000, 7000} {
		y := r.Resample(nil, tone(44100, 44100, f, 0.5))
		if d := db(goertzel(middle(y), 16001, f) / 0.5); math.Abs(d) > 0.1 {
			t.Errorf("%.0f Hz: level changed by %.3f dB", f, d)
		}
		want := tone(16001, 16001, f, 0.5)
		var e float64
		for j := 4000; j < 12000; j++ {
			d := float64(y[j] - want[j])
			e += d * d
		}
		if d := db(math.Sqrt(e/8000) / (0.5 / math.Sqrt2)); d > -60 {
			t.Errorf("%.0f Hz: error %.1f dB", f, d)
		}
	}
	y := middle(r.Resample(nil, tone(44100, 44100, 9000, 0.9)))
	if d := db(rms(y) * math.Sqrt2 / 0.9); d > -60 {
		t.Errorf("9 kHz attenuated only %.1f dB", -d)
	}
}

func TestEdges(t *testing.T) {
	r, _ := New(48000, 16000)
	for _, n := range []int{0, 1, 2, 3, 5, 100} {
		y := r.Resample(nil, make([]float32, n))
		if len(y) != r.OutLen(n) {
			t.Fatalf("n=%d: %d out", n, len(y))
		}
	}
	if _, err := New(0, 16000); err == nil {
		t.Fatal("rate 0 accepted")
	}
	// DC passes exactly (taps normalised).
	dc := make([]float32, 4800)
	for i := range dc {
		dc[i] = 0.25
	}
	for _, v := range middle(r.Resample(nil, dc)) {
		if math.Abs(float64(v)-0.25) > 1e-6 {
			t.Fatalf("DC came out as %v", v)
		}
	}
}

func benchResample(b *testing.B, in, out int) {
	r, _ := New(in, out)
	x := tone(in, in*10, 440, 0.5)
	var y []float32
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		y = r.Resample(y, x)
	}
	b.ReportMetric(float64(len(x))*float64(b.N)/b.Elapsed().Seconds()/1e6, "Min-samples/s")
	b.ReportMetric(10*float64(b.N)/b.Elapsed().Seconds()*60/3600, "audio-h/min")
}

func BenchmarkResample48kTo16k(b *testing.B)  { benchResample(b, 48000, 16000) }
func BenchmarkResample44k1To16k(b *testing.B) { benchResample(b, 44100, 16000) }
func BenchmarkResample8kTo16k(b *testing.B)   { benchResample(b, 8000, 16000) }

// TestAlignment: output frame j is the input signal at time j*in/out (no delay): a resampled
// tone matches the tone computed directly at the output rate, sample by sample.
func TestAlignment(t *testing.T) {
	for _, rr := range ratios {
		in, out := rr[0], rr[1]
		r, _ := New(in, out)
		f := 0.3 * math.Min(float64(in), float64(out))
		y := r.Resample(nil, tone(in, in, f, 0.5))
		want := tone(out, out, f, 0.5)
		var errPow float64
		m0, m1 := len(y)/4, len(y)-len(y)/4
		for j := m0; j < m1; j++ {
			d := float64(y[j] - want[j])
			errPow += d * d
		}
		if e := db(math.Sqrt(errPow/float64(m1-m0)) / (0.5 / math.Sqrt2)); e > -60 {
			t.Errorf("%d->%d: error %.1f dB relative to the tone", in, out, e)
		}
	}
}
