package flacenc

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// sharedAudio is the project's shared corpus of real recordings; tests that
// use it skip when it is absent.
const sharedAudio = "../../../shared/testdata/mini/audio"

// maxRatio is the size bound: our output at most 10% larger than
// `flac -5`'s.
const maxRatio = 1.10

type corpusFile struct {
	name    string
	samples []int32
	info    Info
}

// realCorpus loads the real speech WAVs and the real-recording FLAC files of
// the shared corpus (decoded to PCM).
func realCorpus(t testing.TB) []corpusFile {
	t.Helper()
	if _, err := os.Stat(sharedAudio); err != nil {
		t.Skipf("shared corpus absent: %v", err)
	}
	var files []corpusFile
	wavs, _ := filepath.Glob(filepath.Join(sharedAudio, "wav", "*", "*.wav"))
	flacs, _ := filepath.Glob(filepath.Join(sharedAudio, "flac", "mewkiz", "*.flac"))
	subset, _ := filepath.Glob(filepath.Join(sharedAudio, "flac", "ietf_subset", "*.flac"))
	flacs = append(flacs, subset...)
	sort.Strings(wavs)
	for _, p := range wavs {
		s, info, err := readWAV(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		files = append(files, corpusFile{rel(p), s, info})
	}
	for _, p := range flacs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s, info, _, err := decodeMewkiz(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		files = append(files, corpusFile{rel(p), s, info})
	}
	return files
}

func rel(p string) string {
	r, err := filepath.Rel(sharedAudio, p)
	if err != nil {
		return p
	}
	return r
}

// TestRatioRealCLI compares our size with `flac -5` on real speech and music
// recordings. "bare" is flac -5 without the padding, seek table and comment
// blocks it adds by default (what both encoders spend on audio); "full" is
// the file `flac -5` writes.
func TestRatioRealCLI(t *testing.T) {
	if raceEnabled {
		t.Skip("the real corpus: heavy and single-goroutine, run without -race (race_test.go)")
	}
	files := realCorpus(t)
	flacCLI(t)
	var sb strings.Builder
	sb.WriteString("\nfile | info | ours | flac -5 bare | ratio | flac -5 full | ratio | fixed-only | ratio\n")
	for _, f := range files {
		ours := roundTrip(t, f.samples, f.info, Options{})
		cliTest(t, ours)
		fast, err := Append(nil, f.samples, f.info, Options{Level: LevelFast})
		if err != nil {
			t.Fatal(err)
		}
		bare, full := cliEncodeSize(t, f.samples, f.info, "-5")
		r := float64(len(ours)) / float64(bare)
		sb.WriteString(strings.Join([]string{f.name, infoString(f.info), itoa(len(ours)), itoa(bare), ftoa(r),
			itoa(full), ftoa(float64(len(ours)) / float64(full)), itoa(len(fast)), ftoa(float64(len(fast)) / float64(bare))}, " | "))
		sb.WriteString("\n")
		if r > maxRatio {
			t.Errorf("%s: %d bytes vs flac -5 %d: ratio %.3f > %.2f", f.name, len(ours), bare, r, maxRatio)
		}
	}
	t.Log(sb.String())
}
