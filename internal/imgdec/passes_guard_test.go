//go:build cgo && linux

package imgdec

import (
	"bytes"
	"syscall"
	"testing"
)

// TestPassesStayInBounds: the C passes read no byte past their input. The input (the image,
// then 0 to 5 more bytes) ends where an unreadable page starts (a read past it is a crash),
// for the two-tap cases, in both layouts and both directions.
func TestPassesStayInBounds(t *testing.T) {
	const w, h = twoTapW, twoTapH
	src := photo(w, h)
	page := syscall.Getpagesize()
	n := w * h * 3
	size := (n+5+page-1)/page*page + page
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer func() { _ = syscall.Munmap(mem) }()
	if err := syscall.Mprotect(mem[size-page:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	var rs resampler
	for extra := 0; extra <= 5; extra++ {
		pix := mem[size-page-extra-n : size-page] // the image, then extra bytes
		for i := 0; i < w*h; i++ {
			copy(pix[3*i:3*i+3], src.Pix[4*i:4*i+3])
		}
		p := plane{pix: pix, stride: w * 3, c: 3}
		for _, tc := range twoTapCases(w, h) {
			for _, flip := range []bool{false, true} {
				for _, planar := range []bool{true, false} {
					got, want := passesPair(t, &rs, p, tc.lim, tc.outW, tc.outH, flip, planar)
					if !bytes.Equal(got, want) {
						t.Fatalf("%v to %dx%d, %d bytes before the guard page, flip=%v planar=%v: C and Go passes differ",
							tc.lim, tc.outH, tc.outW, extra, flip, planar)
					}
				}
			}
		}
	}
}
