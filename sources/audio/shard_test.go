package audio

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mldf/convert/sources"
)

// origins lists the samples of src by origin (unique per sample in every audio source).
func origins(t *testing.T, src sources.Source) []string {
	t.Helper()
	var out []string
	for i, s := range collect(t, src) {
		if s.Index != int64(i) {
			t.Fatalf("sample %d has index %d", i, s.Index)
		}
		out = append(out, s.Origin)
	}
	return out
}

// TestShardsPartitionClips checks that every audio source shards (sources.Sharder), and that
// the shards of a run, in order, hold every clip exactly once, whatever the shard count:
// class folders, LibriSpeech, and manifests with segments of one recording and error lines
// (before the first file, between files, at the end).
func TestShardsPartitionClips(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.wav", "b.wav", "c.flac"} {
		writeWAV(t, filepath.Join(dir, n), 8000, 400, 1, 440, 1)
	}
	manifest := filepath.Join(dir, "m.jsonl")
	lines := []string{
		`not json`,
		`{"audio_filepath": "a.wav", "offset": 0, "duration": 0.01}`,
		`{"audio_filepath": "a.wav", "offset": 0.01, "duration": 0.01}`,
		`{"audio_filepath": "missing.wav"}`,
		`{"audio_filepath": "b.wav"}`,
		`{"audio_filepath": "c.flac"}`,
		`{"audio_filepath": "c.flac", "offset": 0.01, "duration": 0.01}`,
		`{"text": "no file"}`,
	}
	if err := os.WriteFile(manifest, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := map[string]func() (sources.Source, error){
		"folder":      func() (sources.Source, error) { return OpenFolder(filepath.Join(fixtures, "commands")) },
		"librispeech": func() (sources.Source, error) { return OpenLibriSpeech(filepath.Join(fixtures, "librispeech")) },
		"manifest": func() (sources.Source, error) {
			return OpenManifest(filepath.Join(fixtures, "manifest", "manifest.jsonl"))
		},
		"segments": func() (sources.Source, error) { return OpenManifest(manifest) },
	}
	for name, o := range open {
		t.Run(name, func(t *testing.T) {
			src, err := o()
			if err != nil {
				t.Fatal(err)
			}
			sh, ok := src.(sources.Sharder)
			if !ok {
				t.Fatalf("%T is not a sources.Sharder", src)
			}
			all := origins(t, src)
			if len(all) < 3 {
				t.Fatalf("only %d samples", len(all))
			}
			for n := 1; n <= int(sh.Inputs().Len())+2; n++ {
				var got []string
				for i := range n {
					lo, hi, err := sources.SliceList(sh.Inputs(), i, n)
					if err != nil {
						t.Fatal(err)
					}
					part, err := sh.Range(int(lo), int(hi))
					if err != nil {
						t.Fatalf("%d of %d: %v", i, n, err)
					}
					if l, ok := part.(sources.Lister); !ok || l.Inputs().Len() != hi-lo {
						t.Errorf("%d of %d: inputs of the range", i, n)
					}
					got = append(got, origins(t, part)...)
				}
				if !reflect.DeepEqual(got, all) {
					t.Errorf("%d shards:\n got %q\nwant %q", n, got, all)
				}
			}
		})
	}
}

// TestRangeBounds checks that a range outside the inputs is an error.
func TestRangeBounds(t *testing.T) {
	f, err := OpenFolder(filepath.Join(fixtures, "commands"))
	if err != nil {
		t.Fatal(err)
	}
	n := int(f.Inputs().Len())
	for _, r := range [][2]int{{-1, 1}, {2, 1}, {0, n + 1}} {
		if _, err := f.Range(r[0], r[1]); err == nil {
			t.Errorf("Range%v of %d inputs: no error", r, n)
		}
	}
	if _, err := f.Range(n, n); err != nil {
		t.Error(fmt.Errorf("empty range at the end: %w", err))
	}
}

// TestSkippedFiles checks that the files of an audio folder that are not clips (nor
// LibriSpeech transcripts) are counted by extension, and only by the first shard.
func TestSkippedFiles(t *testing.T) {
	f, err := OpenFolder(filepath.Join(fixtures, "commands"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{".txt": 1} // README.txt, directly in the root
	if got := sources.SkippedFiles(f); !reflect.DeepEqual(got, want) {
		t.Errorf("folder: skipped %v, want %v", got, want)
	}
	n := int(f.Inputs().Len())
	if first, _ := f.Range(0, 1); !reflect.DeepEqual(sources.SkippedFiles(first), want) {
		t.Errorf("first shard: skipped %v", sources.SkippedFiles(first))
	}
	if rest, _ := f.Range(1, n); len(sources.SkippedFiles(rest)) != 0 {
		t.Errorf("other shard: skipped %v", sources.SkippedFiles(rest))
	}

	root := t.TempDir()
	writeWAV(t, filepath.Join(root, "1", "2", "1-2-0000.wav"), 8000, 100, 1, 440, 1)
	writeFile(t, filepath.Join(root, "1", "2", "1-2.trans.txt"), []byte("1-2-0000 HI\n"))
	writeFile(t, filepath.Join(root, "1", "2", "cover.JPG"), []byte("x"))
	writeFile(t, filepath.Join(root, "LICENSE"), []byte("x"))
	ls, err := OpenLibriSpeech(root)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sources.SkippedFiles(ls), map[string]int64{".jpg": 1, "": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("librispeech: skipped %v, want %v", got, want)
	}
}
