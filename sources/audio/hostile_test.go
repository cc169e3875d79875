package audio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mldf/convert/internal/inputfile"
)

func mkfifo(t *testing.T, path string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// TestFIFOs (audio sources): a named pipe where a file is expected
// (a clip in a folder, a root, a manifest, a manifest entry, a transcript) never blocks; a
// clip becomes a per-sample error (a reject entry), a root or manifest an error of the open.
func TestFIFOs(t *testing.T) {
	dir := t.TempDir()
	// A class folder with one good clip and one FIFO named like a clip.
	writeWAV(t, filepath.Join(dir, "cmds", "yes", "a.wav"), 16000, 160, 1, 440, 1)
	mkfifo(t, filepath.Join(dir, "cmds", "yes", "b.wav"))
	f, err := OpenFolder(filepath.Join(dir, "cmds"))
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, f)
	if len(got) != 2 || got[0].Err != nil || !errors.Is(got[1].Err, inputfile.ErrNotRegular) ||
		!strings.Contains(got[1].Err.Error(), "named pipe") {
		t.Fatalf("folder: %+v", got)
	}
	// A FIFO as the root of a folder source.
	root := filepath.Join(dir, "rootpipe")
	mkfifo(t, root)
	if _, err := OpenFolder(root); !errors.Is(err, inputfile.ErrNotDir) {
		t.Fatalf("OpenFolder(fifo) = %v", err)
	}
	// A FIFO as the manifest itself, and as an entry of a manifest.
	man := filepath.Join(dir, "manifest.jsonl")
	mkfifo(t, man)
	if _, err := OpenManifest(man); !errors.Is(err, inputfile.ErrNotRegular) {
		t.Fatalf("OpenManifest(fifo) = %v", err)
	}
	man2 := filepath.Join(dir, "m2.jsonl")
	os.WriteFile(man2, []byte(`{"audio_filepath": "cmds/yes/b.wav"}`+"\n"+`{"audio_filepath": "cmds/yes/a.wav"}`+"\n"), 0o644)
	m, err := OpenManifest(man2)
	if err != nil {
		t.Fatal(err)
	}
	got = collect(t, m)
	if len(got) != 2 || !errors.Is(got[0].Err, inputfile.ErrNotRegular) || got[1].Err != nil {
		t.Fatalf("manifest: %+v", got)
	}
	// A FIFO as a LibriSpeech transcript, and as a clip.
	ch := filepath.Join(dir, "ls", "19", "198")
	writeWAV(t, filepath.Join(ch, "19-198-0001.flac"), 16000, 160, 1, 440, 1)
	mkfifo(t, filepath.Join(ch, "19-198.trans.txt"))
	ls, err := OpenLibriSpeech(filepath.Join(dir, "ls"))
	if err != nil {
		t.Fatal(err)
	}
	got = collect(t, ls)
	if len(got) != 1 || !errors.Is(got[0].Err, inputfile.ErrNotRegular) {
		t.Fatalf("librispeech: %+v", got)
	}
}

// TestHugeManifestPath: a 5 MB audio_filepath (or key) gives a short error (a 50 MB one made a 104 MB message).
func TestHugeManifestPath(t *testing.T) {
	dir := t.TempDir()
	man := filepath.Join(dir, "m.jsonl")
	huge := strings.Repeat("a", 5<<20)
	os.WriteFile(man, []byte(`{"audio_filepath": "`+huge+`", "`+huge+`": 1}`+"\n"), 0o644)
	m, err := OpenManifest(man)
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, m)
	if len(got) != 1 || !errors.Is(got[0].Err, inputfile.ErrPathTooLong) {
		t.Fatalf("%v", got[0].Err)
	}
	if msg := got[0].Err.Error(); len(msg) > 2<<10 || !strings.Contains(msg, "(5242880 bytes)") {
		t.Fatalf("error of %d bytes: %.400s", len(msg), msg)
	}
}
