package loader

import (
	"context"
	"testing"

	"go.uber.org/goleak"
)

// TestNoGoroutineOutlivesRun: Run's workers end with it, on success and on the first error.
func TestNoGoroutineOutlivesRun(t *testing.T) {
	path := imageFile(t, 16, 64, 48, 9)
	l, err := Open(context.Background(), path, Options{Threads: 4})
	if err != nil {
		t.Fatal(err)
	}
	p := planT(t, l, rrcPlan)
	if _, err := runT(t, p, []int64{0, 1, 2, 3, 4, 5}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := runT(t, p, []int64{0, 1, 9, 3, 4, 5, 6, 7, 8}, 0); err == nil {
		t.Fatal("no error for the corrupt sample 9")
	}
	l.Close()
	goleak.VerifyNone(t)
}
