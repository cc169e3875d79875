package flacenc

import (
	"math"
	"math/rand"
	"testing"
)

// TestLPCResidualNarrow checks the 32-bit-lane residual (AVX2 on amd64) against the
// 64-bit sum in Go for every order up to 32, block lengths around the 8-sample steps,
// every shift, and samples and coefficients at the extremes the bound allows.
func TestLPCResidualNarrow(t *testing.T) {
	if raceEnabled {
		t.Skip("every order, width and shift: heavy and single-goroutine, run without -race (race_test.go)")
	}
	if !lpcResidualNarrow(make([]int32, 64), make([]int32, 64), make([]int32, 8), 3) {
		t.Skip("no vector residual on this platform or CPU: lpcResidual uses lpcResidualOrder alone")
	}
	rng := rand.New(rand.NewSource(7))
	for _, bps := range []uint{4, 8, 12, 16, 17, 20, 24} {
		for order := 1; order <= 32; order++ {
			for _, n := range []int{order + 8, order + 9, order + 15, order + 16, 255, 4096} {
				lim := int64(1) << (bps - 1)
				maxSum := (int64(1)<<31 - 1) >> (bps - 1) // sum|q| * 2^(bps-1) < 2^31
				q := make([]int32, order)
				var sum int64
				for j := range q {
					c := rng.Int63n(min(maxSum/int64(order), 1<<14)+1) * (1 - 2*rng.Int63n(2))
					q[j], sum = int32(c), sum+max(c, -c)
				}
				if sum<<(bps-1) >= 1<<31 {
					t.Fatal("test coefficients exceed the bound")
				}
				x := make([]int32, n)
				for i := range x {
					switch rng.Intn(4) {
					case 0:
						x[i] = int32(-lim)
					case 1:
						x[i] = int32(lim - 1)
					default:
						x[i] = int32(rng.Int63n(2*lim) - lim)
					}
				}
				for shift := 0; shift <= 15; shift += 3 {
					want := make([]int32, n)
					residualTail(want, x, q, shift, order)
					got := make([]int32, n)
					if !lpcResidualNarrow(got, x, q, shift) {
						t.Fatalf("bps %d order %d n %d: not handled", bps, order, n)
					}
					for i := order; i < n; i++ {
						if got[i] != want[i] {
							t.Fatalf("bps %d order %d n %d shift %d: r[%d] = %d, want %d", bps, order, n, shift, i, got[i], want[i])
						}
					}
					// And through lpcResidual, against the unrolled Go loops.
					plain := make([]int32, n)
					if order <= 12 && !lpcResidualOrder(plain, x, q, shift) {
						t.Fatalf("order %d: no unrolled loop", order)
					}
					if order > 12 {
						copy(plain, want)
					}
					if !lpcResidual(got, x, q, shift, bps) {
						t.Fatalf("bps %d order %d: lpcResidual failed", bps, order)
					}
					for i := order; i < n; i++ {
						if got[i] != plain[i] {
							t.Fatalf("bps %d order %d n %d shift %d: lpcResidual r[%d] = %d, unrolled %d", bps, order, n, shift, i, got[i], plain[i])
						}
					}
				}
			}
		}
	}
	// Cases it must leave to the Go loops.
	x := make([]int32, 40)
	for _, c := range []struct {
		name    string
		r, x, q []int32
		shift   int
	}{
		{"order 33", make([]int32, 40), x, make([]int32, 33), 0},
		{"order 0", make([]int32, 40), x, nil, 0},
		{"short block", make([]int32, 40), x[:11], make([]int32, 4), 0},
		{"short r", make([]int32, 39), x, make([]int32, 4), 0},
		{"negative shift", make([]int32, 40), x, make([]int32, 4), -1},
		{"shift 32", make([]int32, 40), x, make([]int32, 4), 32},
	} {
		if lpcResidualNarrow(c.r, c.x, c.q, c.shift) {
			t.Errorf("%s: lpcResidualNarrow took it", c.name)
		}
	}
}

// BenchmarkLPCResidual times the residual of a 4096-sample 16-bit block for orders 1, 4
// and 8: the unrolled Go loops (lpcResidualOrder) and the 32-bit-lane version.
func BenchmarkLPCResidual(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x := make([]int32, 4096)
	for i := range x {
		x[i] = int32(rng.Intn(60000) - 30000)
	}
	r := make([]int32, len(x))
	for _, order := range []int{1, 4, 8} {
		q := make([]int32, order)
		for j := range q {
			q[j] = int32(rng.Intn(2000) - 1000)
		}
		b.Run("order"+itoa(order)+"/go", func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				lpcResidualOrder(r, x, q, 11)
			}
		})
		b.Run("order"+itoa(order)+"/narrow", func(b *testing.B) {
			if !lpcResidualNarrow(r, x, q, 11) {
				b.Skip("no vector residual here")
			}
			b.SetBytes(int64(4 * len(x)))
			for b.Loop() {
				lpcResidualNarrow(r, x, q, 11)
			}
		})
	}
}

// TestFixedSumsNarrow checks the 32-bit-lane fixed-predictor sums (AVX2 on amd64) against
// the 64-bit loop for sample sizes up to the 27 bits it takes, at the extremes of the
// range (where the residuals and the lane sums are largest) and around its 8-sample steps
// and its runs.
func TestFixedSumsNarrow(t *testing.T) {
	if _, ok := fixedSumsNarrow(make([]int32, 64), 16); !ok {
		t.Skip("no vector fixed sums on this platform or CPU: fixedEstimate uses fixedSums alone")
	}
	rng := rand.New(rand.NewSource(3))
	for bps := uint(1); bps <= 27; bps++ {
		lim := int64(1) << (bps - 1)
		for _, n := range []int{12, 13, 19, 20, 255, 4096, 65535} {
			for _, kind := range []string{"random", "alternating extremes", "constant minimum"} {
				x := make([]int32, n)
				for i := range x {
					switch kind {
					case "random":
						x[i] = int32(rng.Int63n(2*lim) - lim)
					case "alternating extremes":
						if (i/3)%2 == 0 { // period 6 so every order sees large steps
							x[i] = int32(-lim)
						} else {
							x[i] = int32(lim - 1)
						}
					default:
						x[i] = int32(-lim)
					}
				}
				got, ok := fixedSumsNarrow(x, bps)
				if !ok {
					t.Fatalf("bps %d n %d: not handled", bps, n)
				}
				if want := fixedSums(x); got != want {
					t.Fatalf("bps %d n %d %s: sums %v, want %v", bps, n, kind, got, want)
				}
			}
		}
	}
	for _, c := range []struct {
		n   int
		bps uint
	}{{11, 16}, {64, 28}, {64, 32}, {64, 0}} {
		if _, ok := fixedSumsNarrow(make([]int32, c.n), c.bps); ok {
			t.Errorf("n %d bps %d: fixedSumsNarrow took it", c.n, c.bps)
		}
	}
}

// BenchmarkFixedSums times the fixed-predictor sums of a 4096-sample 16-bit block.
func BenchmarkFixedSums(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x := make([]int32, 4096)
	for i := range x {
		x[i] = int32(rng.Intn(60000) - 30000)
	}
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			fixedSums(x)
		}
	})
	b.Run("narrow", func(b *testing.B) {
		if _, ok := fixedSumsNarrow(x, 16); !ok {
			b.Skip("no vector sums here")
		}
		for b.Loop() {
			fixedSumsNarrow(x, 16)
		}
	})
}

// TestAutocorrFrom8Vec checks the lane-per-lag autocorrelation (AVX2 on amd64) against the
// Go loops to the bit: the LPC coefficients, and so the output, depend on every rounding.
func TestAutocorrFrom8Vec(t *testing.T) {
	if _, ok := autocorrFrom8Vec(make([]float64, 16)); !ok {
		t.Skip("no vector autocorrelation on this platform or CPU: autocorr9 sums in Go")
	}
	rng := rand.New(rand.NewSource(5))
	for _, n := range []int{9, 10, 11, 12, 13, 100, 4095, 4096} {
		for _, scale := range []float64{1e-3, 1, 32768, 1 << 30} {
			x := make([]float64, n)
			for i := range x {
				x[i] = (rng.Float64()*2 - 1) * scale
			}
			got, ok := autocorrFrom8Vec(x)
			if !ok {
				t.Fatalf("n %d: not handled", n)
			}
			want := autocorrFrom8(x)
			for l := range got {
				if math.Float64bits(got[l]) != math.Float64bits(want[l]) {
					t.Fatalf("n %d scale %g: lag %d = %v, want %v", n, scale, l, got[l], want[l])
				}
			}
		}
	}
	if _, ok := autocorrFrom8Vec(make([]float64, 8)); ok {
		t.Error("autocorrFrom8Vec took an 8-sample block")
	}
}

// BenchmarkAutocorrFrom8 times the lag 0..8 sums of a 4096-sample block.
func BenchmarkAutocorrFrom8(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	x := make([]float64, 4096)
	for i := range x {
		x[i] = rng.NormFloat64() * 1000
	}
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			autocorrFrom8(x)
		}
	})
	b.Run("vec", func(b *testing.B) {
		if _, ok := autocorrFrom8Vec(x); !ok {
			b.Skip("no vector autocorrelation here")
		}
		for b.Loop() {
			autocorrFrom8Vec(x)
		}
	})
}
