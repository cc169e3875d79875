package flacenc

import (
	"crypto/sha256"
	"fmt"
	"testing"
)

// goldenDigest is the SHA-256 over the SHA-256s of the encoder's output for the committed
// inputs, 8-bit stereo and 20-bit mono at every level, as the encoder without vector
// kernels wrote them: the vector (AVX2) and Go paths must give these bytes exactly.
const goldenDigest = "47cb8ef6adb5cab6ba7133a0b299daf4e23cea7ec5a13ac3841b5b2cfe132ecb"

// TestOutputDigest checks the encoder's output bytes against goldenDigest (run it also
// with -tags purego for the Go-only path).
func TestOutputDigest(t *testing.T) {
	if raceEnabled {
		t.Skip("every committed input at every level: heavy and single-goroutine, run without -race (race_test.go)")
	}
	type input struct {
		name string
		s    []int32
		info Info
	}
	var ins []input
	for _, c := range committed {
		s, info := c.load(t)
		ins = append(ins, input{c.name, s, info})
	}
	ins = append(ins, input{"music 8-bit", musicLike(22050, 3, 2, 9, 8), Info{22050, 2, 8}})
	ins = append(ins, input{"speech 20-bit", speechLike(48000, 3, 4, 20), Info{48000, 1, 20}})
	h := sha256.New()
	for _, c := range ins {
		for _, lv := range []Level{LevelDefault, LevelFast, LevelBest} {
			out, err := Append(nil, c.s, c.info, Options{Level: lv})
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			fmt.Fprintf(h, "%s %d %x\n", c.name, lv, sha256.Sum256(out))
		}
	}
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != goldenDigest {
		t.Errorf("output digest %s, want %s: the encoder's bytes changed", got, goldenDigest)
	}
}
