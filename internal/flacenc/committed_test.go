package flacenc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A size check that runs everywhere: the inputs are either committed real
// recordings (testdata/, public domain and CC0) or signals generated
// deterministically in the test, and flacMinus5 is the size `flac -5
// --no-padding --no-seektable` (flac 1.4.2) gave for them, minus its
// VORBIS_COMMENT block. TestCommittedSizesCLI re-measures these numbers when
// the flac CLI is present, so they cannot silently go stale.
var committed = []struct {
	name       string
	load       func(t testing.TB) ([]int32, Info)
	flacMinus5 int
}{
	{"testdata/59996.flac (music, 24-bit stereo)", fixture("59996.flac"), 35522},
	{"testdata/80574.flac (recording, 16-bit mono)", fixture("80574.flac"), 34248},
	{"testdata/ietf-60-mono.flac (music, 16-bit mono)", fixture("ietf-60-mono.flac"), 41582},
	{"speechLike 8 kHz 16-bit 10 s", gen(func() ([]int32, Info) { return speechLike(8000, 10, 1, 16), Info{8000, 1, 16} }), 85048},
	{"speechLike 16 kHz 16-bit 5 s", gen(func() ([]int32, Info) { return speechLike(16000, 5, 2, 16), Info{16000, 1, 16} }), 76570},
	{"musicLike 44.1 kHz 16-bit stereo 5 s", gen(func() ([]int32, Info) { return musicLike(44100, 5, 2, 3, 16), Info{44100, 2, 16} }), 541224},
	{"musicLike 48 kHz 24-bit stereo 3 s", gen(func() ([]int32, Info) { return musicLike(48000, 3, 2, 4, 24), Info{48000, 2, 24} }), 627708},
}

func fixture(name string) func(t testing.TB) ([]int32, Info) {
	return func(t testing.TB) ([]int32, Info) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		s, info, _, err := decodeMewkiz(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return s, info
	}
}

func gen(f func() ([]int32, Info)) func(t testing.TB) ([]int32, Info) {
	return func(testing.TB) ([]int32, Info) { return f() }
}

// TestCommittedSizes checks the 10% bound against the committed `flac -5`
// sizes, and that LPC analysis beats the fixed-predictor-only baseline.
func TestCommittedSizes(t *testing.T) {
	if raceEnabled {
		t.Skip("every committed input at two levels: heavy and single-goroutine, run without -race (race_test.go)")
	}
	var sb strings.Builder
	sb.WriteString("\ninput | ours | flac -5 | ratio | fixed only\n")
	for _, c := range committed {
		s, info := c.load(t)
		ours := roundTrip(t, s, info, Options{})
		fast := roundTrip(t, s, info, Options{Level: LevelFast})
		r := float64(len(ours)) / float64(c.flacMinus5)
		sb.WriteString(strings.Join([]string{c.name, itoa(len(ours)), itoa(c.flacMinus5), ftoa(r), itoa(len(fast))}, " | ") + "\n")
		if r > maxRatio {
			t.Errorf("%s: %d bytes, flac -5 %d: ratio %.3f > %.2f", c.name, len(ours), c.flacMinus5, r, maxRatio)
		}
		if len(ours) > len(fast) {
			t.Errorf("%s: default level %d bytes > fixed predictors only %d", c.name, len(ours), len(fast))
		}
	}
	t.Log(sb.String())
}

// TestCommittedSizesCLI re-measures the committed `flac -5` sizes.
func TestCommittedSizesCLI(t *testing.T) {
	if raceEnabled {
		t.Skip("every committed input: heavy and single-goroutine, run without -race (race_test.go)")
	}
	flacCLI(t)
	for _, c := range committed {
		s, info := c.load(t)
		bare, _ := cliEncodeSize(t, s, info, "-5")
		t.Logf("%s: flac -5 %d bytes (committed %d)", c.name, bare, c.flacMinus5)
		// Generated signals use math functions whose last bit may differ by
		// architecture; allow 1%.
		if d := float64(bare-c.flacMinus5) / float64(bare); d > 0.01 || d < -0.01 {
			t.Errorf("%s: flac -5 now gives %d bytes, committed %d: update the table", c.name, bare, c.flacMinus5)
		}
	}
}
