package flacdec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSharedCLI decodes every FLAC file of the shared corpus and compares every sample with
// what `flac -d` (libFLAC) decodes; files flac rejects must be rejected too, and the
// IETF suite's faulty files always.
func TestSharedCLI(t *testing.T) {
	dir := sharedDir(t)
	flacCLI(t)
	n := 0
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".flac") {
			return err
		}
		n++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		got, info, derr := Decode(b)
		bps := info.BitsPerSample
		if bps == 0 {
			bps = 16 // we rejected the metadata: only flac's verdict matters
		}
		want, ok, msg := cliDecode(t, b, bps)
		switch {
		case strings.Contains(rel, "faulty"):
			// The IETF test suite's faulty files: a decoder should reject them (libFLAC
			// decodes the one without STREAMINFO from its frame headers; we require the
			// block, like the rest of the project).
			if derr == nil {
				t.Errorf("%s: faulty file decoded without error", rel)
			}
			t.Logf("%s: rejected: %v (flac -d ok: %v)", rel, derr, ok)
		case !ok && derr == nil:
			t.Errorf("%s: flac -d rejects it (%s) but we decode it", rel, strings.TrimSpace(msg))
		case ok && derr != nil:
			t.Errorf("%s: flac -d decodes it but we fail: %v", rel, derr)
		case ok:
			sameSamples(t, rel, got, want, info.Channels)
			t.Logf("%s: %d Hz %d ch %d bit, %d samples per channel: identical", rel, info.SampleRate, info.Channels, info.BitsPerSample, len(got)/info.Channels)
		default:
			t.Logf("%s: rejected like flac -d: %v", rel, derr)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("found only %d FLAC files under %s", n, dir)
	}
}

// TestTestdata decodes the committed fixtures (always, without the CLI) and checks them
// against their STREAMINFO.
func TestTestdata(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.flac")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, info, err := Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if uint64(len(s)) != info.TotalSamples*uint64(info.Channels) {
			t.Fatalf("%s: %d samples, STREAMINFO %d x %d", f, len(s), info.TotalSamples, info.Channels)
		}
		if pcmMD5(s, info.BitsPerSample) != info.MD5 {
			t.Fatalf("%s: MD5 differs", f)
		}
		if vi, err := Verify(b, Options{}); err != nil || vi != info {
			t.Fatalf("%s: Verify: %v, info %+v", f, err, vi)
		}
		if _, _, err := DecodeOptions(b, Options{SkipMD5: true}); err != nil {
			t.Fatalf("%s: SkipMD5: %v", f, err)
		}
	}
}

func TestMissingStreamInfo(t *testing.T) {
	_, _, err := Decode([]byte("fLaC\x04\x00\x00\x00"))
	if !errors.Is(err, ErrNoStreamInfo) {
		t.Fatalf("err = %v", err)
	}
}
