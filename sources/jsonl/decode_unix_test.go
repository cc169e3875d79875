//go:build unix

package jsonl

import (
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/unix"
)

// TestStrDecodeAtPageEnd runs strDecode on lines whose buffer ends at the end of a page
// followed by one that cannot be read: it must never read past the capacity of the line's
// slice, whatever the line's end and the string's.
func TestStrDecodeAtPageEnd(t *testing.T) {
	if !hasStrBlocks {
		t.Skip("no vectorised string decoding on this CPU")
	}
	ps := unix.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 2*ps, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	defer unix.Munmap(mem)
	if err := unix.Mprotect(mem[ps:], unix.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	page := mem[:ps:ps]
	// Every length of text before an escape or quote cut by the page's end.
	for _, fill := range []string{"x", "ж", `\n`} {
		for n := range 100 {
			for _, end := range []string{`\`, `\u00`, `\ud83d\ude0`, `"`, `\"`, ""} {
				line := []byte(`"`)
				for len(line) < n+1 {
					line = append(line, fill...)
				}
				line = append(line[:n+1], end...)
				at := ps - len(line)
				copy(page[at:], line)
				checkDecodeIn(t, page[at:])
			}
		}
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 20000 {
		line := append([]byte{'"'}, randDecStr(r, r.IntN(120))...)
		if r.IntN(3) != 0 {
			line = append(line, '"')
		}
		after := []byte(decAfters[r.IntN(len(decAfters))])
		if len(line)+len(after) > ps {
			continue
		}
		at := ps - len(line) - len(after)
		copy(page[at:], line)
		copy(page[at+len(line):], after)
		checkDecodeIn(t, page[at:at+len(line)])
	}
}
