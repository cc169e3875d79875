package audio

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/encoders/audiofield"
	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/sources"
)

// TestFixturesThroughFields runs every fixture dataset through the audio fields, as the
// pipeline would: each sample converts, FLAC inputs pass through unchanged, and manifest
// segments have the lengths the manifest gives.
func TestFixturesThroughFields(t *testing.T) {
	wave, err := audiofield.NewWaveform("audio", audiofield.Options{SampleRate: 16000, Mono: true})
	if err != nil {
		t.Fatal(err)
	}
	flac, err := audiofield.NewCompressed("audio", audiofield.Options{})
	if err != nil {
		t.Fatal(err)
	}
	folder, err := OpenFolder(filepath.Join(fixtures, "commands"))
	if err != nil {
		t.Fatal(err)
	}
	libri, err := OpenLibriSpeech(filepath.Join(fixtures, "librispeech"))
	if err != nil {
		t.Fatal(err)
	}
	man, err := OpenManifest(filepath.Join(fixtures, "manifest", "manifest.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	wantFrames := map[string][]uint32{
		"commands":    {1600, 1600, 1600, 1600, 1600, 1600},
		"librispeech": {3200, 2400, 2000},
		"manifest":    {2400, 8000, 8000, 1600}, // 8 kHz 0.15 s -> 16 kHz; two halves of 1 s; 22.05 kHz 0.1 s -> 16 kHz
	}
	for name, src := range map[string]sources.Source{"commands": folder, "librispeech": libri, "manifest": man} {
		var got []uint32
		for _, s := range collect(t, src) {
			if s.Err != nil {
				t.Fatalf("%s: %v", name, s.Err)
			}
			v := s.Value(ColAudio)
			meta := make([]byte, mldf.AudioMetaSize)
			if _, err := wave.Encode(v, meta); err != nil {
				t.Fatalf("%s: %v", s.Origin, err)
			}
			m := mldf.GetAudioMeta(meta)
			if m.SampleRate != 16000 || m.NumChannels != 1 {
				t.Fatalf("%s: %+v", s.Origin, m)
			}
			got = append(got, m.NumSamples)
			p, err := flac.Encode(v, meta)
			if err != nil {
				t.Fatalf("%s: %v", s.Origin, err)
			}
			if filepath.Ext(v.Path) == ".flac" && v.Offset == 0 && v.Duration == 0 {
				orig, _ := os.ReadFile(v.Path)
				if !bytes.Equal(orig, p) {
					t.Errorf("%s: FLAC not passed through", s.Origin)
				}
			}
		}
		if len(got) != len(wantFrames[name]) {
			t.Fatalf("%s: %v", name, got)
		}
		for i := range got {
			if got[i] != wantFrames[name][i] {
				t.Errorf("%s sample %d: %d frames, want %d", name, i, got[i], wantFrames[name][i])
			}
		}
	}
}
