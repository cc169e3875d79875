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

	// Two raises from 2, to 4 then 6, restored in either order: each restore undoes only its
	// own raise while nobody has raised further since.
	for _, tc := range []struct {
		name                string
		order               [2]int // which raise is restored first, then second
		afterOne, afterBoth int
	}{
		{"nested", [2]int{1, 0}, 4, 2},
		{"out of order", [2]int{0, 1}, 6, 4},
	} {
		runtime.GOMAXPROCS(2)
		restore := [2]func(){Spare(2), Spare(4)}
		restore[tc.order[0]]()
		if got := runtime.GOMAXPROCS(0); got != tc.afterOne {
			t.Errorf("%s: %d after one restore, want %d", tc.name, got, tc.afterOne)
		}
		restore[tc.order[1]]()
		if got := runtime.GOMAXPROCS(0); got != tc.afterBoth {
			t.Errorf("%s: %d after both restores, want %d", tc.name, got, tc.afterBoth)
		}
	}

	t.Setenv("GOMAXPROCS", "1")
	runtime.GOMAXPROCS(1)
	Spare(4)()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("with GOMAXPROCS=1 in the environment: %d", got)
	}
}
