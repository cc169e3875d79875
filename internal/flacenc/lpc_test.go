package flacenc

import (
	"math"
	"math/rand/v2"
	"testing"
)

func naiveAutocorr(r, x []float64) {
	for lag := range r {
		r[lag] = 0
		for i := lag; i < len(x); i++ {
			r[lag] += x[i] * x[i-lag]
		}
	}
}

func TestAutocorr(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{0, 1, 5, 8, 9, 10, 17, 100, 4096} {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64() * 1000
		}
		for _, lags := range []int{1, 9, 13} {
			got, want := make([]float64, lags), make([]float64, lags)
			autocorr(got, x)
			naiveAutocorr(want, x)
			for i := range got {
				if math.Abs(got[i]-want[i]) > 1e-9*math.Max(1, math.Abs(want[0])) {
					t.Errorf("n=%d lags=%d: r[%d] = %g, want %g", n, lags, i, got[i], want[i])
				}
			}
		}
	}
}

// TestLevinson fits an order-2 autoregressive process and expects its
// coefficients back.
func TestLevinson(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	x := make([]float64, 200000)
	for i := 2; i < len(x); i++ {
		x[i] = 1.6*x[i-1] - 0.8*x[i-2] + rng.NormFloat64()
	}
	r := make([]float64, 5)
	autocorr(r, x)
	var lpc [maxLPCOrder][maxLPCOrder]float64
	var errs [maxLPCOrder]float64
	if n := levinson(&lpc, &errs, r); n != 4 {
		t.Fatalf("levinson computed %d orders, want 4", n)
	}
	if math.Abs(lpc[1][0]-1.6) > 0.01 || math.Abs(lpc[1][1]+0.8) > 0.01 {
		t.Errorf("order 2 = %v, want [1.6 -0.8]", lpc[1][:2])
	}
	if math.Abs(lpc[3][2]) > 0.01 || math.Abs(lpc[3][3]) > 0.01 {
		t.Errorf("order 4 = %v, want higher coefficients near 0", lpc[3][:4])
	}
	for k := 1; k < 4; k++ {
		if errs[k] > errs[k-1]*(1+1e-12) {
			t.Errorf("error grows with order: %v", errs[:4])
		}
	}
	// A silent block has no predictor.
	if n := levinson(&lpc, &errs, make([]float64, 5)); n != 0 {
		t.Errorf("levinson of silence computed %d orders", n)
	}
}

func TestQuantize(t *testing.T) {
	q := make([]int32, 3)
	for _, prec := range []uint{5, 12, 15} {
		for _, lp := range [][]float64{{1.6, -0.8, 0.1}, {0.001, 0.0001, -0.002}, {3.9, -3.9, 1}} {
			shift, ok := quantize(lp, prec, q)
			if !ok {
				t.Fatalf("quantize(%v, %d) failed", lp, prec)
			}
			if shift < 0 || shift > 15 {
				t.Fatalf("shift %d", shift)
			}
			lim := int32(1) << (prec - 1)
			for i, c := range q {
				if c < -lim || c >= lim {
					t.Errorf("prec %d: q[%d] = %d out of range", prec, i, c)
				}
				if got := float64(c) / math.Ldexp(1, shift); math.Abs(got-lp[i]) > 2/math.Ldexp(1, shift)+1e-3 {
					t.Errorf("prec %d: q[%d] = %g, want ~%g", prec, i, got, lp[i])
				}
			}
		}
	}
	// Coefficients too large for any shift >= 0.
	if _, ok := quantize([]float64{40000}, 12, q[:1]); ok {
		t.Error("quantize accepted a coefficient that needs a negative shift")
	}
	if _, ok := quantize([]float64{0, 0}, 12, q[:2]); ok {
		t.Error("quantize accepted an all-zero predictor")
	}
}

func BenchmarkAutocorr(b *testing.B) {
	x := make([]float64, 4096)
	for i := range x {
		x[i] = float64(i % 100)
	}
	r := make([]float64, 9)
	for b.Loop() {
		autocorr(r, x)
	}
}
