package loader

import (
	"errors"
	"slices"
	"testing"
)

func orderOf(t *testing.T, n, page int, spec OrderSpec) []int64 {
	t.Helper()
	o, err := NewOrder(n, page, spec)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, o.Len())
	if err := o.Fill(0, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOrderPermutation(t *testing.T) {
	for _, mode := range []string{OrderSequential, OrderRandom, OrderQuasiRandom} {
		for _, n := range []int{0, 1, 2, 3, 5, 16, 17, 100, 1000, 4099} {
			for _, page := range []int{1, 7, 64} {
				got := orderOf(t, n, page, OrderSpec{Mode: mode, Seed: 42, Epoch: 3, WindowPages: 4})
				if len(got) != n {
					t.Fatalf("%s n=%d: length %d", mode, n, len(got))
				}
				s := slices.Clone(got)
				slices.Sort(s)
				for k, v := range s {
					if v != int64(k) {
						t.Fatalf("%s n=%d page=%d: not a permutation: sorted[%d]=%d", mode, n, page, k, v)
					}
				}
			}
		}
	}
}

func TestOrderDeterminism(t *testing.T) {
	for _, mode := range []string{OrderRandom, OrderQuasiRandom} {
		a := orderOf(t, 1000, 10, OrderSpec{Mode: mode, Seed: 1, Epoch: 0})
		b := orderOf(t, 1000, 10, OrderSpec{Mode: mode, Seed: 1, Epoch: 0})
		if !slices.Equal(a, b) {
			t.Fatalf("%s: same (seed, epoch) gave different orders", mode)
		}
		for _, other := range []OrderSpec{{Mode: mode, Seed: 1, Epoch: 1}, {Mode: mode, Seed: 2, Epoch: 0}} {
			if slices.Equal(a, orderOf(t, 1000, 10, other)) {
				t.Fatalf("%s: %+v gave the same order as seed 1 epoch 0", mode, other)
			}
		}
		// a shuffle moves most samples
		fixed := 0
		for k, v := range a {
			if int64(k) == v {
				fixed++
			}
		}
		if fixed > 50 {
			t.Fatalf("%s: %d of 1000 samples in place", mode, fixed)
		}
	}
	// Fill from any start gives the same positions.
	o, _ := NewOrder(1000, 10, OrderSpec{Mode: OrderRandom, Seed: 9})
	all := make([]int64, 1000)
	o.Fill(0, all)
	part := make([]int64, 37)
	if err := o.Fill(500, part); err != nil || !slices.Equal(part, all[500:537]) {
		t.Fatalf("Fill(500) = %v, %v", part[:3], err)
	}
}

func TestOrderRanks(t *testing.T) {
	cases := []struct {
		n, world int
		dropLast bool
		wantLen  int
	}{
		{10, 3, false, 4},
		{10, 3, true, 3},
		{9, 3, false, 3},
		{9, 3, true, 3},
		{2, 4, false, 1},
		{2, 4, true, 0},
		{1000, 8, false, 125},
		{1001, 8, false, 126},
		{1001, 8, true, 125},
	}
	for _, c := range cases {
		for _, mode := range []string{OrderSequential, OrderRandom, OrderQuasiRandom} {
			count := map[int64]int{}
			for r := range c.world {
				got := orderOf(t, c.n, 5, OrderSpec{Mode: mode, Seed: 7, Epoch: 2, Rank: r, World: c.world, DropLast: c.dropLast})
				if len(got) != c.wantLen {
					t.Fatalf("%s %+v rank %d: length %d, want %d", mode, c, r, len(got), c.wantLen)
				}
				for _, v := range got {
					count[v]++
				}
			}
			total := c.wantLen * c.world
			if c.dropLast {
				// disjoint: no sample twice
				for v, k := range count {
					if k != 1 {
						t.Fatalf("%s %+v: sample %d read %d times", mode, c, v, k)
					}
				}
				if len(count) != total {
					t.Fatalf("%s %+v: %d samples, want %d", mode, c, len(count), total)
				}
			} else {
				// every sample at least once; the padding repeats at most the shortfall
				if len(count) != c.n {
					t.Fatalf("%s %+v: %d distinct samples, want all %d", mode, c, len(count), c.n)
				}
				extra := 0
				for _, k := range count {
					extra += k - 1
				}
				if extra != total-c.n {
					t.Fatalf("%s %+v: %d repeats, want %d", mode, c, extra, total-c.n)
				}
			}
		}
	}
}

func TestOrderQuasiRandomLocality(t *testing.T) {
	const n, page, window = 10000, 20, 4
	got := orderOf(t, n, page, OrderSpec{Mode: OrderQuasiRandom, Seed: 3, WindowPages: window})
	// every run of window*page consecutive positions touches at most window pages (plus the
	// tail samples in the last window)
	per := window * page
	for lo := 0; lo+per <= n; lo += per {
		pages := map[int64]bool{}
		for _, v := range got[lo : lo+per] {
			pages[v/page] = true
		}
		if len(pages) > window {
			t.Fatalf("window at %d touches %d pages, want <= %d", lo, len(pages), window)
		}
	}
	// while the random order touches about one page per sample
	rnd := orderOf(t, n, page, OrderSpec{Mode: OrderRandom, Seed: 3})
	pages := map[int64]bool{}
	for _, v := range rnd[:per] {
		pages[v/page] = true
	}
	if len(pages) < per/2 {
		t.Fatalf("random order: %d pages in %d samples", len(pages), per)
	}
}

func TestOrderErrors(t *testing.T) {
	cases := []OrderSpec{
		{Mode: "shuffle"},
		{Mode: OrderRandom, Rank: 2, World: 2},
		{Mode: OrderRandom, Rank: -1, World: 2},
		{Mode: OrderRandom, World: -3},
		{Mode: OrderQuasiRandom, WindowPages: -1},
	}
	for _, c := range cases {
		if _, err := NewOrder(10, 2, c); !errors.Is(err, ErrOrder) {
			t.Errorf("%+v: err %v, want ErrOrder", c, err)
		}
	}
	o, _ := NewOrder(10, 2, OrderSpec{})
	for _, r := range [][2]int{{-1, 1}, {0, 11}, {10, 1}} {
		if err := o.Fill(r[0], make([]int64, r[1])); !errors.Is(err, ErrOrder) {
			t.Errorf("Fill(%d, %d): %v", r[0], r[1], err)
		}
	}
}
