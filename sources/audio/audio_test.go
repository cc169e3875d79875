package audio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
)

var _ sources.Source = (*Folder)(nil)
var _ sources.Source = (*Manifest)(nil)
var _ sources.Source = (*LibriSpeech)(nil)

func collect(t *testing.T, s sources.Source) []sample.Sample {
	t.Helper()
	var out []sample.Sample
	if err := s.Run(context.Background(), func(x sample.Sample) error { out = append(out, x); return nil }); err != nil {
		t.Fatal(err)
	}
	if int64(len(out)) != s.Len() {
		t.Fatalf("Len() = %d, emitted %d", s.Len(), len(out))
	}
	for i, x := range out {
		if x.Index != int64(i) {
			t.Fatalf("sample %d has index %d", i, x.Index)
		}
	}
	return out
}

func TestFolder(t *testing.T) {
	f, err := OpenFolder(filepath.Join(fixtures, "commands"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.Classes(), ","); got != "down,go,yes" {
		t.Fatalf("classes %s", got)
	}
	out := collect(t, f)
	want := []struct {
		key   string
		label int64
	}{
		{"down/0a7c2a8d_nohash_0.wav", 0}, {"down/0b09edd3_nohash_0.wav", 0},
		{"go/0a7c2a8d_nohash_0.wav", 1}, {"go/0c5027de_nohash_1.wav", 1},
		{"yes/0a7c2a8d_nohash_0.wav", 2}, {"yes/0f3f64d5_nohash_0.flac", 2},
	}
	if len(out) != len(want) {
		t.Fatalf("%d samples", len(out))
	}
	var total int64
	for i, w := range want {
		s := out[i]
		if s.Err != nil || s.Key != filepath.FromSlash(w.key) || s.Value(ColLabel).Int != w.label || s.Value(ColAudio).Kind != sample.KindFile {
			t.Errorf("sample %d: %+v", i, s)
		}
		if s.InputBytes <= 0 {
			t.Errorf("sample %d: no size", i)
		}
		total += s.InputBytes
	}
	var in int64
	f.Inputs().Each(func(_ int64, x sources.Input) error { in += x.Size; return nil })
	if in != total || f.Inputs().Len() != 6 {
		t.Errorf("inputs: %d bytes of %d files", in, f.Inputs().Len())
	}
	if _, err := OpenFolder(t.TempDir()); !errors.Is(err, ErrNoAudio) {
		t.Errorf("empty folder: %v", err)
	}
}

func TestManifest(t *testing.T) {
	m, err := OpenManifest(filepath.Join(fixtures, "manifest", "manifest.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	out := collect(t, m)
	if len(out) != 4 {
		t.Fatalf("%d samples", len(out))
	}
	a := out[0]
	if a.Value(ColAudio).Offset != 0 || a.Value(ColAudio).Duration != 0 || filepath.Base(a.Value(ColAudio).Path) != "a.wav" {
		t.Errorf("line 1 audio %+v", a.Value(ColAudio))
	}
	if string(a.Value(ColText).Bytes) != "hello world" || a.Value(ColText).Kind != sample.KindString {
		t.Errorf("text %+v", a.Value(ColText))
	}
	if a.Value("speaker").Kind != sample.KindInt || a.Value("speaker").Int != 3 || a.Value("snr").Kind != sample.KindFloat || a.Value("snr").Float != 12.5 ||
		string(a.Value("lang").Bytes) != "en" || a.Value(KeyDuration).Kind != sample.KindFloat || a.Value(KeyDuration).Float != 0.15 {
		t.Errorf("extra columns %+v", a)
	}
	seg := out[2].Value(ColAudio)
	if seg.Offset != 0.5 || seg.Duration != 0.5 {
		t.Errorf("segment %+v", seg)
	}
	if out[1].InputBytes == 0 || out[2].InputBytes != 0 {
		t.Errorf("shared file counted %d, %d", out[1].InputBytes, out[2].InputBytes)
	}
	var paths []string
	m.Inputs().Each(func(_ int64, x sources.Input) error { paths = append(paths, filepath.Base(x.Path)); return nil })
	if m.Inputs().Len() != 3 || strings.Join(paths, ",") != "a.wav,long.wav,b.flac" {
		t.Errorf("inputs %d: %v", m.Inputs().Len(), paths)
	}
	if out[3].Origin != filepath.Join(fixtures, "manifest", "manifest.jsonl")+":4" {
		t.Errorf("origin %q", out[3].Origin)
	}
}

func TestManifestBadLines(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.wav"), []byte("RIFF"), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"audio_filepath": "x.wav", "text": "ok"}`,
		`{"audio_filepath": "x.wav", "text": "unterminated`,
		``,
		`{"text": "no path"}`,
		`{"audio_filepath": "missing.wav"}`,
		`{"audio_filepath": "x.wav", "offset": -1, "duration": 1}`,
		`{"audio_filepath": "x.wav", "duration": "long"}`,
		"{\"audio_filepath\": \"x.wav\", \"text\": \"\xff\xfe\"}",
		`[1, 2]`,
		`{"audio_filepath": 5}`,
		`{"audio_filepath": "x.wav", "audio": 1}`,
		`{"audio_filepath": "x.wav", "meta": {"a": [1, 2]}, "ok": true, "big": 1e400}`,
		`{"audio_filepath": "x.wav", "meta": {"a": [1, 2]}, "ok": true}`,
	}
	p := filepath.Join(dir, "m.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := OpenManifest(p)
	if err != nil {
		t.Fatal(err)
	}
	out := collect(t, m)
	wantErr := []int{2, 4, 5, 6, 7, 8, 9, 10, 11, 12} // line numbers that must fail
	bad := map[string]bool{}
	for _, s := range out {
		if s.Err != nil {
			if !strings.Contains(s.Err.Error(), s.Origin) {
				t.Errorf("error %q does not name %s", s.Err, s.Origin)
			}
			bad[s.Origin[strings.LastIndex(s.Origin, ":")+1:]] = true
		}
	}
	for _, n := range wantErr {
		if !bad[strconv.Itoa(n)] {
			t.Errorf("line %d accepted", n)
		}
	}
	if len(bad) != len(wantErr) {
		t.Errorf("bad lines %v, want %v", bad, wantErr)
	}
	last := out[len(out)-1]
	if last.Value("meta").Kind != sample.KindJSON || string(last.Value("meta").Bytes) != `{"a":[1,2]}` || string(last.Value("ok").Bytes) != "true" {
		t.Errorf("JSON columns %+v", last)
	}
}

func TestLibriSpeech(t *testing.T) {
	l, err := OpenLibriSpeech(filepath.Join(fixtures, "librispeech"))
	if err != nil {
		t.Fatal(err)
	}
	out := collect(t, l)
	if len(out) != 3 {
		t.Fatalf("%d samples", len(out))
	}
	want := []struct {
		spk, ch int64
		text    string
	}{{19, 198, "NORTHANGER ABBEY"}, {19, 198, "THIS LITTLE WORK WAS FINISHED IN THE YEAR EIGHTEEN O THREE"}, {84, 121123, "GO DO YOU HEAR"}}
	for i, w := range want {
		v := out[i]
		if out[i].Err != nil || v.Value(ColSpeaker).Int != w.spk || v.Value(ColChapter).Int != w.ch || string(v.Value(ColText).Bytes) != w.text {
			t.Errorf("sample %d: %+v", i, out[i])
		}
	}
}

func TestLibriSpeechMissingTranscript(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "7", "8")
	os.MkdirAll(d, 0o755)
	os.WriteFile(filepath.Join(d, "7-8-0000.flac"), []byte("fLaC"), 0o644)
	os.WriteFile(filepath.Join(d, "7-8-0001.flac"), []byte("fLaC"), 0o644)
	os.WriteFile(filepath.Join(d, "7-8.trans.txt"), []byte("7-8-0000 HELLO\n"), 0o644)
	l, err := OpenLibriSpeech(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := collect(t, l)
	if out[0].Err != nil || out[1].Err == nil || !errors.Is(out[1].Err, ErrTranscript) || !strings.Contains(out[1].Err.Error(), "7-8-0001") {
		t.Fatalf("%v / %v", out[0].Err, out[1].Err)
	}
	os.WriteFile(filepath.Join(d, "7-8.trans.txt"), []byte("7-8-0000 HELLO\n7-8-0000 AGAIN\n"), 0o644)
	l, _ = OpenLibriSpeech(dir)
	out = collect(t, l)
	if !errors.Is(out[0].Err, ErrTranscript) || !strings.Contains(out[0].Err.Error(), "trans.txt:2") {
		t.Fatalf("duplicate id: %v", out[0].Err)
	}
}

func TestRunCancel(t *testing.T) {
	f, err := OpenFolder(filepath.Join(fixtures, "commands"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err = f.Run(ctx, func(sample.Sample) error { n++; cancel(); return nil })
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Fatalf("err %v after %d", err, n)
	}
	stop := errors.New("stop")
	if err := f.Run(context.Background(), func(sample.Sample) error { return stop }); err != stop {
		t.Fatalf("emit error not returned: %v", err)
	}
}

func FuzzManifestLine(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(fixtures, "manifest", "manifest.jsonl")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f.Add([]byte(line))
		}
	}
	f.Add([]byte(`{"audio_filepath": "a.wav", "offset": 1e308, "duration": -0, "x": [1, {"y": null}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		vals, err := parseManifestLine(line, "/data")
		if err != nil {
			return
		}
		a, ok := vals[ColAudio]
		if !ok || a.Kind != sample.KindFile || a.Path == "" || a.Offset < 0 || a.Duration < 0 {
			t.Fatalf("bad audio value %+v", a)
		}
	})
}

func FuzzTranscript(f *testing.F) {
	f.Add([]byte("19-198-0000 NORTHANGER ABBEY\n19-198-0001 THIS\r\n"))
	f.Add([]byte("x\n\n y z\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "t.trans.txt")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := readTranscript(p, os.ReadFile)
		if err != nil {
			return
		}
		for id := range m {
			if id == "" || strings.ContainsAny(id, " \n") {
				t.Fatalf("bad id %q", id)
			}
		}
	})
}
