package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/sources"
)

// sinkType returns the type of the sink pagewriter.LocalFile opens with opt in dir, for
// a stream start of 0 (so the type of the buffered sink, or of the direct one where the
// file system takes direct writes).
func sinkType(t *testing.T, dir string, opt pagewriter.FileOptions) reflect.Type {
	t.Helper()
	s, err := pagewriter.LocalFile(filepath.Join(dir, "probe"), opt)(pagewriter.SinkLayout{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	return reflect.TypeOf(s)
}

// Config.NoDirect reaches the local output's sink: on a file system that takes direct writes
// (ext4 under TMPDIR here), a run writes through the direct sink by default and through the
// buffered one with NoDirect, a resumable run too, and the output is the same byte for byte.
func TestNoDirectReachesSink(t *testing.T) {
	dir := t.TempDir()
	buffered := sinkType(t, dir, pagewriter.FileOptions{NoDirect: true})
	direct := sinkType(t, dir, pagewriter.FileOptions{})
	if direct == buffered {
		t.Skipf("the file system of %s takes no direct writes (statx STATX_DIOALIGN, O_DIRECT): every sink there is buffered", dir)
	}
	samples := mixedSamples(300, 4096, false)
	var want []byte
	for _, tc := range []struct {
		name             string
		noDirect, resume bool
		sink             reflect.Type
	}{
		{"default", false, false, direct},
		{"no direct", true, false, buffered},
		{"resumable default", false, true, direct},
		{"resumable no direct", true, true, buffered},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := outPath(t)
			var opts []pagewriter.FileOptions
			var sinks []reflect.Type
			cfg := Config{Source: newSource(samples), Fields: testFields(), Output: out, PageSize: 4096,
				Checksums: true, Workers: 2, NoDirect: tc.noDirect,
				localFile: func(path string, opt pagewriter.FileOptions) pagewriter.SinkOpener {
					opts = append(opts, opt)
					open := pagewriter.LocalFile(path, opt)
					return func(l pagewriter.SinkLayout) (pagewriter.Sink, error) {
						s, err := open(l)
						sinks = append(sinks, reflect.TypeOf(s))
						return s, err
					}
				}}
			if tc.resume {
				cfg.Resume = &Resume{Fingerprint: Fingerprint{Recipe: "r1", Version: "test", Inputs: sources.Inputs(testInputs)}}
			}
			mustRun(t, cfg)
			if len(opts) != 1 || opts[0].NoDirect != tc.noDirect || opts[0].Partial != tc.resume {
				t.Fatalf("file options %+v, want one with NoDirect %v, Partial %v", opts, tc.noDirect, tc.resume)
			}
			if len(sinks) != 1 || sinks[0] != tc.sink {
				t.Fatalf("sinks %v, want %v", sinks, tc.sink)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = got
			} else if !bytes.Equal(got, want) {
				t.Fatalf("output of %d bytes differs from the default run's %d", len(got), len(want))
			}
		})
	}
}

// A run killed with one setting of NoDirect resumes with the other (the knob is no part
// of what the run writes): the partial output one sink wrote is continued by the other,
// and the output is the uninterrupted run's.
func TestNoDirectResumeSwitched(t *testing.T) {
	ref := filepath.Join(t.TempDir(), "ref.mldf")
	mustRun(t, killSamplesConfig(ref, 0))
	want, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, first := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct then buffered", true: "buffered then direct"}[first], func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.mldf")
			var log1, log2 lockedBuf
			cfg, _ := resumeConfig(out, 500*time.Microsecond, false, &log1)
			cfg.NoDirect = first
			interrupt(t, cfg, 2)
			cfg, _ = resumeConfig(out, 0, false, &log2)
			cfg.NoDirect = !first
			mustRun(t, cfg)
			if !strings.Contains(log2.String(), "resumed at sample") {
				t.Fatalf("no resume: %s", log2.String())
			}
			if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
				t.Fatalf("resumed output of %d bytes differs from the uninterrupted run's %d", len(got), len(want))
			}
		})
	}
}
