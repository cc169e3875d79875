package audio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/sources"
)

// TestResumeAtEverySample: every audio source (class folders, LibriSpeech, manifests with
// segments and error lines) resumed after any count of samples gives exactly the samples
// after them (keys, origins with line numbers, values, errors), with the skipped files'
// counts of the whole source; bad counts and tokens are ErrPosition.
func TestResumeAtEverySample(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.wav", "b.wav"} {
		writeWAV(t, filepath.Join(dir, n), 8000, 400, 1, 440, 1)
	}
	manifest := filepath.Join(dir, "m.jsonl")
	lines := []string{
		`not json`,
		`{"audio_filepath": "a.wav", "offset": 0, "duration": 0.01}`,
		`{"audio_filepath": "a.wav", "offset": 0.01, "duration": 0.01}`,
		`{"audio_filepath": "missing.wav"}`,
		`{"audio_filepath": "b.wav", "text": "last"}`,
	}
	if err := os.WriteFile(manifest, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func() (sources.Resumer, error){
		"folder":      func() (sources.Resumer, error) { return OpenFolder(filepath.Join(fixtures, "commands")) },
		"librispeech": func() (sources.Resumer, error) { return OpenLibriSpeech(filepath.Join(fixtures, "librispeech")) },
		"manifest":    func() (sources.Resumer, error) { return OpenManifest(manifest) },
	} {
		t.Run(name, func(t *testing.T) {
			src, err := open()
			if err != nil {
				t.Fatal(err)
			}
			describe := func(s sources.Source) []string {
				var out []string
				for _, x := range collect(t, s) {
					out = append(out, fmt.Sprintf("%q %q %v %+v %d", x.Key, x.Origin, x.Err, x.Values, x.InputBytes))
				}
				return out
			}
			all := describe(src)
			for k := 0; k <= len(all); k++ {
				r, err := src.Resume(int64(k), nil)
				if err != nil {
					t.Fatalf("Resume(%d): %v", k, err)
				}
				if got := describe(r); fmt.Sprint(got) != fmt.Sprint(all[k:]) {
					t.Fatalf("resumed at %d:\n%q\nwant\n%q", k, got, all[k:])
				}
				if fmt.Sprint(sources.SkippedFiles(r)) != fmt.Sprint(sources.SkippedFiles(src)) {
					t.Errorf("resumed at %d: skipped %v, want %v", k, sources.SkippedFiles(r), sources.SkippedFiles(src))
				}
			}
			for _, c := range []struct {
				n   int64
				tok []byte
			}{{-1, nil}, {int64(len(all) + 1), nil}, {0, []byte("{}")}} {
				if _, err := src.Resume(c.n, c.tok); !errors.Is(err, sources.ErrPosition) {
					t.Errorf("Resume(%d, %q) = %v, want ErrPosition", c.n, c.tok, err)
				}
			}
		})
	}
}
