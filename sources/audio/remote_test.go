package audio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/internal/s3test"
	"github.com/mldf/convert/objstore"
	"github.com/mldf/convert/sample"
)

// bucketWith starts an S3 server with bucket "bkt" holding the fixture trees under
// testdata/audio at s3://bkt/<tree>.
func bucketWith(t *testing.T) *objstore.Client {
	t.Helper()
	srv := s3test.Start(t)
	srv.MakeBucket(t, "bkt")
	s3test.Env(t, srv.Endpoint, s3test.SecretKey)
	c := objstore.New()
	t.Cleanup(func() { c.Close() })
	err := filepath.WalkDir(fixtures, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(fixtures, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return c.WriteFile(context.Background(), "s3://bkt/"+filepath.ToSlash(rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// view is a sample as compared between a local and a bucket source: the audio value's
// bytes (read from disk for a local file), its segment, and every other column.
type view struct {
	Key              string
	Err              string
	Audio            []byte
	Offset, Duration float64
	Other            []sample.Column
}

func viewsOf(t *testing.T, smps []sample.Sample) []view {
	t.Helper()
	var out []view
	for _, s := range smps {
		v := view{Key: s.Key}
		if s.Err != nil {
			v.Err = "error"
		}
		for _, c := range s.Values {
			if c.Name != ColAudio {
				v.Other = append(v.Other, c)
				continue
			}
			if c.Value.Kind == sample.KindFile && strings.Contains(c.Value.Path, "://") {
				t.Fatalf("sample %s: a URL left as a file value: %s", s.Key, c.Value.Path)
			}
			b, err := c.Value.Load()
			if err != nil {
				t.Fatalf("sample %s: %v", s.Key, err)
			}
			v.Audio, v.Offset, v.Duration = b, c.Value.Offset, c.Value.Duration
		}
		out = append(out, v)
	}
	return out
}

// TestBucketSourcesSameAsLocal: a LibriSpeech tree and a NeMo manifest in a bucket give the
// samples of the same files on disk, with the clips' bytes fetched (also in sharded ranges).
func TestBucketSourcesSameAsLocal(t *testing.T) {
	c := bucketWith(t)
	ctx := context.Background()
	o := Options{Store: c, Prefetch: 2}

	lsLocal, err := OpenLibriSpeech(filepath.Join(fixtures, "librispeech"))
	if err != nil {
		t.Fatal(err)
	}
	lsBucket, err := OpenLibriSpeechContext(ctx, "s3://bkt/librispeech/", o)
	if err != nil {
		t.Fatal(err)
	}
	want, got := viewsOf(t, collect(t, lsLocal)), viewsOf(t, collect(t, lsBucket))
	if len(want) != 3 || !reflect.DeepEqual(got, want) {
		t.Fatalf("librispeech from the bucket:\n%+v\nfrom disk:\n%+v", got, want)
	}
	if n := lsBucket.Inputs().Len(); n != 3 {
		t.Errorf("librispeech inputs: %d, want 3", n)
	}

	mLocal, err := OpenManifest(filepath.Join(fixtures, "manifest", "manifest.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	mBucket, err := OpenManifestContext(ctx, "s3://bkt/manifest/manifest.jsonl", o)
	if err != nil {
		t.Fatal(err)
	}
	want, got = viewsOf(t, collect(t, mLocal)), viewsOf(t, collect(t, mBucket))
	if len(want) != 4 || !reflect.DeepEqual(got, want) {
		t.Fatalf("manifest from the bucket:\n%+v\nfrom disk:\n%+v", got, want)
	}
	// Two segments of long.wav: three inputs, counted once each.
	if n := mBucket.Inputs().Len(); n != 3 {
		t.Errorf("manifest inputs: %d, want 3", n)
	}
	var sizes int64
	for _, s := range collect(t, mBucket) {
		sizes += s.InputBytes
	}
	var wantSizes int64
	for _, s := range collect(t, mLocal) {
		wantSizes += s.InputBytes
	}
	if sizes != wantSizes || sizes == 0 {
		t.Errorf("manifest input bytes from the bucket %d, from disk %d", sizes, wantSizes)
	}
}

// TestManifestNamingURLs: a local manifest may name clips in a bucket by URL, mixed with
// local clips; a missing object and a path climbing out of the bucket are errors of their
// lines, naming the manifest, the line and the URL.
func TestManifestNamingURLs(t *testing.T) {
	c := bucketWith(t)
	ctx := context.Background()
	dir := t.TempDir()
	local, _ := filepath.Abs(filepath.Join(fixtures, "manifest", "wavs", "a.wav"))
	lines := []string{
		`{"audio_filepath": "s3://bkt/manifest/wavs/long.wav", "offset": 0, "duration": 0.5}`,
		`{"audio_filepath": "s3://bkt/manifest/wavs/long.wav", "offset": 0.5, "duration": 0.5}`,
		fmt.Sprintf(`{"audio_filepath": %q}`, local),
		`{"audio_filepath": "s3://bkt/manifest/wavs/missing.wav"}`,
		`{"audio_filepath": "s3://bkt/manifest/wavs/b.flac"}`,
	}
	mp := filepath.Join(dir, "m.jsonl")
	if err := os.WriteFile(mp, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := OpenManifestContext(ctx, mp, Options{Store: c, Prefetch: 1})
	if err != nil {
		t.Fatal(err)
	}
	smps := collect(t, m)
	for i, s := range smps {
		if i == 3 {
			if s.Err == nil || !errors.Is(s.Err, objstore.ErrNotFound) || !strings.Contains(s.Err.Error(), "missing.wav") || !strings.Contains(s.Err.Error(), mp+":4") {
				t.Fatalf("line 4: error %v, want not found naming %s:4 and the URL", s.Err, mp)
			}
			continue
		}
		if s.Err != nil {
			t.Fatalf("line %d: %v", i+1, s.Err)
		}
	}
	wantFile := func(p string) []byte {
		b, err := os.ReadFile(filepath.Join(fixtures, "manifest", "wavs", p))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	vs := viewsOf(t, []sample.Sample{smps[0], smps[1], smps[2], smps[4]})
	for i, want := range [][]byte{wantFile("long.wav"), wantFile("long.wav"), wantFile("a.wav"), wantFile("b.flac")} {
		if !reflect.DeepEqual(vs[i].Audio, want) {
			t.Errorf("sample %d: %d bytes, want %d", i, len(vs[i].Audio), len(want))
		}
	}
	if vs[1].Offset != 0.5 || vs[1].Duration != 0.5 {
		t.Errorf("segment 2: offset %v duration %v", vs[1].Offset, vs[1].Duration)
	}
	// The segments of one recording share one fetch: the same bytes.
	if a, b := smps[0].Values, smps[1].Values; &audioValue(&smps[0]).Bytes[0] != &audioValue(&smps[1]).Bytes[0] {
		t.Errorf("two segments of one clip fetched twice (%d, %d columns)", len(a), len(b))
	}

	// Relative paths in a manifest in a bucket stay in the bucket.
	bad := "{\"audio_filepath\": \"../../../etc/passwd.wav\"}\n{\"audio_filepath\": \"wavs/../wavs/a.wav\"}\n"
	if err := c.WriteFile(ctx, "s3://bkt/manifest/bad.jsonl", []byte(bad)); err != nil {
		t.Fatal(err)
	}
	m2, err := OpenManifestContext(ctx, "s3://bkt/manifest/bad.jsonl", Options{Store: c})
	if err != nil {
		t.Fatal(err)
	}
	smps = collect(t, m2)
	if e := smps[0].Err; e == nil || !errors.Is(e, errEscapes) || !strings.Contains(e.Error(), "s3://bkt/manifest/bad.jsonl:1") {
		t.Errorf("line 1: %v, want %v naming the line", e, errEscapes)
	}
	if e := smps[1].Err; e != nil {
		t.Errorf("line 2: %v", e)
	} else if v := viewsOf(t, smps[1:]); !reflect.DeepEqual(v[0].Audio, wantFile("a.wav")) {
		t.Errorf("line 2: %d bytes", len(v[0].Audio))
	}
}

// TestBucketSourceErrors: a missing transcript object is the error of its chapter's clips;
// a prefix with no clip, a missing manifest and a missing bucket are errors naming the URL.
func TestBucketSourceErrors(t *testing.T) {
	c := bucketWith(t)
	ctx := context.Background()
	o := Options{Store: c}
	if err := c.Remove(ctx, "s3://bkt/librispeech/19/198/19-198.trans.txt"); err != nil {
		t.Fatal(err)
	}
	ls, err := OpenLibriSpeechContext(ctx, "s3://bkt/librispeech", o)
	if err != nil {
		t.Fatal(err)
	}
	smps := collect(t, ls)
	for i, s := range smps {
		missing := strings.HasPrefix(s.Key, "19/")
		if missing != (s.Err != nil) {
			t.Fatalf("sample %d (%s): error %v", i, s.Key, s.Err)
		}
		if missing && !strings.Contains(s.Err.Error(), "s3://bkt/librispeech/19/198/19-198.trans.txt") {
			t.Fatalf("sample %s: %v does not name the transcript", s.Key, s.Err)
		}
	}
	for _, tc := range []struct {
		open func() error
		want string
	}{
		{func() error { _, err := OpenLibriSpeechContext(ctx, "s3://bkt/nothing", o); return err }, "s3://bkt/nothing"},
		{func() error { _, err := OpenLibriSpeechContext(ctx, "s3://nobucket/ls", o); return err }, "s3://nobucket/ls"},
		{func() error { _, err := OpenManifestContext(ctx, "s3://bkt/none.jsonl", o); return err }, "s3://bkt/none.jsonl"},
	} {
		if err := tc.open(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v does not name %s", err, tc.want)
		}
	}
}

// TestBucketManifestStaysInBucket: a manifest in a bucket names clips of its bucket only.
// An absolute local path, a file:// URL, a path climbing above the bucket, another bucket,
// another store or scheme are errors of their lines naming the manifest and the line; no
// local file is read (its bytes appear nowhere), and a long path is quoted shortened.
func TestBucketManifestStaysInBucket(t *testing.T) {
	c := bucketWith(t)
	ctx := context.Background()
	secret := filepath.Join(t.TempDir(), "secret.wav")
	wav, err := os.ReadFile(filepath.Join(fixtures, "manifest", "wavs", "a.wav"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, wav, 0o600); err != nil { // a valid clip: it would convert
		t.Fatal(err)
	}
	long := "/" + strings.Repeat("x", 3000) + ".wav"
	for _, tc := range []struct {
		name, clip string
		want       error
	}{
		{"absolute path", secret, errOutsideBucket},
		{"etc passwd", "/etc/passwd", errOutsideBucket},
		{"file URL", "file://" + secret, errOutsideBucket},
		{"file URL localhost", "file://localhost" + secret, errOutsideBucket},
		{"climbs out", "../../../" + secret, errEscapes},
		{"climbs out of the root", "wavs/../../../x.wav", errEscapes},
		{"other bucket", "s3://other/manifest/wavs/a.wav", errOutsideBucket},
		{"other store", "gs://bkt/manifest/wavs/a.wav", errOutsideBucket},
		{"other scheme", "http://127.0.0.1/a.wav", errOutsideBucket},
		{"malformed URL", "s3:///a.wav", errOutsideBucket},
		{"long path", long, errOutsideBucket},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, _ := json.Marshal(map[string]string{"audio_filepath": tc.clip})
			url := "s3://bkt/manifest/hostile.jsonl"
			if err := c.WriteFile(ctx, url, append(line, '\n')); err != nil {
				t.Fatal(err)
			}
			m, err := OpenManifestContext(ctx, url, Options{Store: c})
			if err != nil {
				t.Fatal(err)
			}
			smps := collect(t, m)
			if len(smps) != 1 {
				t.Fatalf("%d samples", len(smps))
			}
			e := smps[0].Err
			if e == nil {
				t.Fatalf("clip %s accepted: %d columns", quote.Q(tc.clip), len(smps[0].Values))
			}
			if !errors.Is(e, tc.want) || !errors.Is(e, ErrManifest) || !strings.Contains(e.Error(), url+":1") {
				t.Errorf("error %v, want %v naming %s:1", e, tc.want, url)
			}
			if len(e.Error()) > 2*quote.MaxBytes+200 {
				t.Errorf("error of %d bytes", len(e.Error()))
			}
		})
	}
	// Clips of the manifest's own bucket, relative or by URL, are read.
	lines := `{"audio_filepath": "wavs/a.wav"}` + "\n" + `{"audio_filepath": "s3://bkt/manifest/wavs/a.wav"}` + "\n"
	if err := c.WriteFile(ctx, "s3://bkt/manifest/own.jsonl", []byte(lines)); err != nil {
		t.Fatal(err)
	}
	m, err := OpenManifestContext(ctx, "s3://bkt/manifest/own.jsonl", Options{Store: c})
	if err != nil {
		t.Fatal(err)
	}
	smps := collect(t, m)
	for i, v := range viewsOf(t, smps) {
		if smps[i].Err != nil || !reflect.DeepEqual(v.Audio, wav) {
			t.Errorf("line %d: %v, %d bytes", i+1, smps[i].Err, len(v.Audio))
		}
	}
}

// TestLocalManifestFileURL: a local manifest's file:// clip is the local file it names.
func TestLocalManifestFileURL(t *testing.T) {
	abs, _ := filepath.Abs(filepath.Join(fixtures, "manifest", "wavs", "a.wav"))
	got, err := objstore.Ref("/somewhere", "file://"+abs)
	if err != nil || got != abs {
		t.Fatalf("objstore.Ref = %q, %v, want %q", got, err, abs)
	}
}

// A local manifest's clip path goes into its line's error shortened and escaped.
func TestManifestClipPathQuotedShort(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, strings.Repeat("x", 200), strings.Repeat("y", 200), strings.Repeat("z", 200)+"\x1b[2J.wav")
	line, _ := json.Marshal(map[string]string{"audio_filepath": long})
	mp := filepath.Join(dir, "m.jsonl")
	if err := os.WriteFile(mp, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := OpenManifest(mp)
	if err != nil {
		t.Fatal(err)
	}
	e := collect(t, m)[0].Err
	if e == nil || !errors.Is(e, fs.ErrNotExist) || !strings.Contains(e.Error(), mp+":1") {
		t.Fatalf("error %v, want not found naming %s:1", e, mp)
	}
	if msg := e.Error(); len(msg) > 2*quote.MaxBytes+len(mp)+100 || strings.ContainsRune(msg, 0x1b) {
		t.Errorf("error of %d bytes: %.200q", len(msg), msg)
	}
}
