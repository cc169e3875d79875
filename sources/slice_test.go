package sources

import (
	"math/rand/v2"
	"testing"
)

func TestSliceCoversEveryInputOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		inputs := make([]Input, rng.IntN(50))
		var total int64
		for k := range inputs {
			inputs[k].Size = rng.Int64N(1000)
			if rng.IntN(10) == 0 {
				inputs[k].Size = rng.Int64N(100000) // a few big files
			}
			total += max(inputs[k].Size, 1)
		}
		n := 1 + rng.IntN(8)
		next := 0
		for i := 0; i < n; i++ {
			lo, hi := Slice(inputs, i, n)
			if lo != next && lo != hi {
				t.Fatalf("trial %d: slice %d/%d = [%d,%d), want start %d", trial, i, n, lo, hi, next)
			}
			if lo < hi {
				next = hi
			}
			var bytes, biggest int64
			for _, in := range inputs[lo:hi] {
				bytes += max(in.Size, 1)
			}
			for _, in := range inputs {
				biggest = max(biggest, max(in.Size, 1))
			}
			if share := total / int64(n); bytes > share+biggest+1 {
				t.Fatalf("trial %d: slice %d/%d has %d bytes, share %d, biggest input %d", trial, i, n, bytes, share, biggest)
			}
		}
		if next != len(inputs) {
			t.Fatalf("trial %d: slices end at %d of %d", trial, next, len(inputs))
		}
	}
}

func TestSliceBalancesByBytes(t *testing.T) {
	// One huge file and many small ones: the huge file gets a slice of its own.
	inputs := []Input{{Size: 1000}, {Size: 10}, {Size: 10}, {Size: 10}, {Size: 10}}
	if lo, hi := Slice(inputs, 0, 2); lo != 0 || hi != 1 {
		t.Fatalf("slice 0 = [%d,%d)", lo, hi)
	}
	if lo, hi := Slice(inputs, 1, 2); lo != 1 || hi != 5 {
		t.Fatalf("slice 1 = [%d,%d)", lo, hi)
	}
}
