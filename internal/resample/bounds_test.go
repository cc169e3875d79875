package resample

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestRateBounds: rates and ratios at, just over and far over each bound.
// A WAV declaring 16,777,213 Hz resampled to 16 kHz built a 1.7 GB table; it is now refused.
func TestRateBounds(t *testing.T) {
	for _, tc := range []struct {
		in, out int
		ok      bool
	}{
		{MaxRate, 16000, true},
		{MaxRate + 1, 16000, false},
		{16777213, 16000, false}, // the header
		{math.MaxInt32, 16000, false},
		{16000, MaxRate, false}, // 48 times up: fine for this package, but MaxRate+1 is not
		{16000, MaxRate + 1, false},
		{MinRate, 256, true},
		{MinRate, 257, false},
		{0, 16000, false},
		{-44100, 16000, false},
		{16000, 0, false},
		{MaxRate, MaxRate / MaxRatio, true},    // ratio at the bound
		{MaxRate, MaxRate/MaxRatio - 1, false}, // just over
		{MaxRate, 8, false},                    // far over
		{MaxRate / MaxRatio, MaxRate, true},    // upsampling at the bound
		{MaxRate/MaxRatio - 1, MaxRate, false}, // just over
		{44100, 16000, true},
	} {
		r, err := New(tc.in, tc.out)
		if tc.in == 16000 && tc.out == MaxRate {
			tc.ok = true // 48x up: within both bounds
		}
		if tc.ok != (err == nil) {
			t.Errorf("New(%d, %d) = %v, want ok %v", tc.in, tc.out, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrRate) {
			t.Errorf("New(%d, %d): %v is not ErrRate", tc.in, tc.out, err)
		}
		if err == nil && r.TableBytes() > MaxTableBytes {
			t.Errorf("New(%d, %d): table of %d bytes", tc.in, tc.out, r.TableBytes())
		}
	}
}

// hostilePairs have many phases, many taps or both.
var hostilePairs = [][2]int{
	{MaxRate, 16001}, {MaxRate, 3001}, {767999, 4093}, {MaxRate - 1, 3001}, {44100, 16001},
	{48000, 44101}, {3001, MaxRate}, {767, 767 * 256}, {96001, 8000}, {MaxRate, MaxRate - 1},
}

// TestTableBounded: whatever the rates, the table stays within MaxTableBytes.
func TestTableBounded(t *testing.T) {
	for _, p := range hostilePairs {
		r, err := New(p[0], p[1])
		if err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		if r.TableBytes() > MaxTableBytes || r.TableBytes() == 0 {
			t.Errorf("%d->%d: table of %d bytes", p[0], p[1], r.TableBytes())
		}
		t.Logf("%d->%d: %d taps, interp %v (%d phases), table %.2f MiB", p[0], p[1], r.taps, r.interp, r.phases, float64(r.TableBytes())/(1<<20))
	}
}

// TestInterpolationError: for every ratio that interpolates its table, at random phases and
// between tabulated phases, the interpolated taps differ from the exact kernel by less than
// -95 dB of the kernel's L1 norm (the largest output error, relative to full scale, that any
// input can see): 15 dB below the 80 dB stopband. Near ratio 1 (4096 phases, the table this
// package always used there) the error is about -98 dB; the few phases kept at large
// downsampling ratios do better (-120 dB and below), since their kernel is smoother.
func TestInterpolationError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range append(hostilePairs, [2]int{44100, 16001}, [2]int{16001, 44100}) {
		r, _ := New(p[0], p[1])
		if !r.interp {
			continue
		}
		exact := make([]float32, r.taps)
		var worst float64
		check := func(ph int) {
			r.phase(exact, float64(ph)/float64(r.l))
			x := float64(ph) / float64(r.l) * float64(r.phases)
			i := min(int(x), r.phases-1)
			w := float32(x - float64(i))
			h0, h1 := r.table[i*r.taps:(i+1)*r.taps], r.table[(i+1)*r.taps:(i+2)*r.taps]
			var e, norm float64
			for k := range exact {
				e += math.Abs(float64(h0[k] + w*(h1[k]-h0[k]) - exact[k]))
				norm += math.Abs(float64(exact[k]))
			}
			worst = max(worst, e/norm)
		}
		for range 40 {
			check(rng.IntN(r.l))
		}
		for i := 0; i < r.phases; i += max(1, r.phases/40) {
			check(min(r.l-1, (i*r.l+r.l/2)/r.phases)) // between tabulated phases i and i+1
		}
		t.Logf("%d->%d: %d phases: worst error %.1f dB", p[0], p[1], r.phases, db(worst))
		if d := db(worst); d > -95 {
			t.Errorf("%d->%d: interpolation error %.1f dB", p[0], p[1], d)
		}
	}
}

// TestExtremeRatioQuality: at the largest downsampling ratio the filter still meets its
// passband and stopband.
func TestExtremeRatioQuality(t *testing.T) {
	in, out := MaxRate, 3001
	r, err := New(in, out)
	if err != nil {
		t.Fatal(err)
	}
	if !r.interp {
		t.Fatal("expected an interpolated table")
	}
	nyq := 0.5 * float64(out)
	y := middle(r.Resample(nil, tone(in, in, 0.5*nyq, 0.5)))
	if d := db(goertzel(y, out, 0.5*nyq) / 0.5); math.Abs(d) > 0.1 {
		t.Errorf("passband level changed by %.3f dB", d)
	}
	y = middle(r.Resample(nil, tone(in, in, 1.1*nyq, 0.9)))
	if d := db(rms(y) * math.Sqrt2 / 0.9); d > -60 {
		t.Errorf("1.1 × Nyquist attenuated only %.1f dB", -d)
	}
}
