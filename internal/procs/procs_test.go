package procs

import (
	"runtime"
	"testing"
)

// TestSpare: GOMAXPROCS becomes at least n+2 and goes back on restore; a larger value is
// never lowered, nor is a later raise undone; the environment's GOMAXPROCS is left alone.
func TestSpare(t *testing.T) {
	t.Setenv("GOMAXPROCS", "") // the variable unset for Spare (os.Getenv returns "")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, tc := range []struct{ start, n, during int }{
		{1, 1, 3}, {2, 2, 4}, {1, 3, 5}, {8, 2, 8}, {4, 2, 4}, {2, 0, 2},
	} {
		runtime.GOMAXPROCS(tc.start)
		restore := Spare(tc.n)
		if got := runtime.GOMAXPROCS(0); got != tc.during {
			t.Errorf("GOMAXPROCS %d, n %d: %d, want %d", tc.start, tc.n, got, tc.during)
		}
		restore()
		if got := runtime.GOMAXPROCS(0); got != tc.start {
			t.Errorf("GOMAXPROCS %d, n %d: %d after restore, want %d", tc.start, tc.n, got, tc.start)
		}
	}

	// Nested: the inner raise is undone by its restore, the outer by its own.
	runtime.GOMAXPROCS(2)
	outer := Spare(2) // 4
	inner := Spare(4) // 6
	inner()
	if got := runtime.GOMAXPROCS(0); got != 4 {
		t.Errorf("after the inner restore: %d, want 4", got)
	}
	outer()
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("after the outer restore: %d, want 2", got)
	}

	// Out of order: the first raise's restore leaves the later, larger raise alone.
	first := Spare(2)  // 4
	second := Spare(4) // 6
	first()
	if got := runtime.GOMAXPROCS(0); got != 6 {
		t.Errorf("restore of the first raise under a second: %d, want 6", got)
	}
	second()
	if got := runtime.GOMAXPROCS(0); got != 4 {
		t.Errorf("restore of the second raise: %d, want 4 (what it replaced)", got)
	}

	t.Setenv("GOMAXPROCS", "1")
	runtime.GOMAXPROCS(1)
	Spare(4)()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("with GOMAXPROCS=1 in the environment: %d", got)
	}
}
