package multipart

import (
	"testing"
)

// Parts are contiguous, every one at least the base size and at most the cap, locate
// inverts bounds, and the default schedule holds a 5 TiB object (S3's limit) in 10 000
// parts.
func TestSchedule(t *testing.T) {
	for _, opt := range []Options{{}, {PartSize: 5000, MinPartSize: 1000, GrowEvery: 3, MaxPartSize: 1 << 20, MaxParts: 100}} {
		opt.defaults()
		s := newSchedule(opt)
		next := int64(0)
		for k := 1; k <= opt.MaxParts; k++ {
			start, size := s.bounds(k)
			if start != next || size < opt.PartSize || size > opt.MaxPartSize {
				t.Fatalf("part %d: [%d, +%d), want start %d, size in [%d, %d]", k, start, size, next, opt.PartSize, opt.MaxPartSize)
			}
			if s.locate(start) != k || s.locate(start+size-1) != k {
				t.Fatalf("part %d: locate(%d) = %d, locate(%d) = %d", k, start, s.locate(start), start+size-1, s.locate(start+size-1))
			}
			next = start + size
		}
		if s.maxSize() != next {
			t.Fatalf("maxSize %d, parts end at %d", s.maxSize(), next)
		}
	}
	var opt Options
	opt.defaults()
	s := newSchedule(opt)
	const tib = 1 << 40
	if s.maxSize() < 5*tib {
		t.Fatalf("the default schedule holds %d bytes, less than 5 TiB", s.maxSize())
	}
	for _, k := range []int{1000, 2000, 6000, 7000, 10000} {
		start, size := s.bounds(k)
		t.Logf("parts 1..%d: %.1f GiB, part %d is %d MiB", k, float64(start+size)/(1<<30), k, size>>20)
	}
	k := s.locate(5 * tib)
	_, size := s.bounds(k)
	t.Logf("5 TiB at part %d (%d MiB parts); at most %.1f TiB", k, size>>20, float64(s.maxSize())/tib)
}
