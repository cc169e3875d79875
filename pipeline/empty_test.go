package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/sample"
)

// skippingSource is a sliceSource that also counts files it skipped (sources.SkipCounter).
type skippingSource struct {
	sliceSource
	skipped map[string]int64
}

func (s *skippingSource) SkippedFiles() map[string]int64 { return s.skipped }

// TestEmptyRun checks that a run that would write no sample (an empty source, every sample
// rejected or filtered) fails with ErrEmpty, writing nothing at the output path (the rejects
// are still listed), unless AllowEmpty.
func TestEmptyRun(t *testing.T) {
	bad := []sample.Sample{mkSample(0, 1, []byte("BAD")), {Origin: "b", Err: errors.New("unreadable")}}
	for _, tc := range []struct {
		name    string
		samples []sample.Sample
		want    string
	}{
		{"empty source", nil, "the source gave no sample"},
		{"all rejected", bad, "the source gave 2 samples: 2 rejected, 0 filtered"},
	} {
		dir := t.TempDir()
		out := filepath.Join(dir, "out.mldf")
		rejects := filepath.Join(dir, "rejects.jsonl")
		src := &skippingSource{sliceSource: *newSource(tc.samples), skipped: map[string]int64{".svg": 9}}
		_, err := Run(context.Background(), Config{Source: src, Fields: testFields(), Output: out, PageSize: 4096, RejectsPath: rejects})
		if !errors.Is(err, ErrEmpty) || !contains(err, tc.want, out, "allow_empty", "9 files", ".svg: 9") {
			t.Fatalf("%s: error %v", tc.name, err)
		}
		if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: output written (%v)", tc.name, err)
		}
		if _, err := os.Stat(rejects); (err == nil) != (len(tc.samples) > 0) {
			t.Errorf("%s: rejects file: %v", tc.name, err)
		}
		noTemps(t, dir, "rejects.jsonl")

		rep, err := Run(context.Background(), Config{Source: src, Fields: testFields(), Output: out, PageSize: 4096, AllowEmpty: true})
		if err != nil || rep.Samples != 0 {
			t.Fatalf("%s, allow_empty: %v, %d samples", tc.name, err, rep.Samples)
		}
		if _, err := os.Stat(out); err != nil {
			t.Errorf("%s, allow_empty: no output: %v", tc.name, err)
		}
	}
}

// TestSkippedFilesReported checks that the files a source skipped are in the report and
// logged (on stderr, for the command).
func TestSkippedFilesReported(t *testing.T) {
	var log bytes.Buffer
	src := &skippingSource{sliceSource: *newSource([]sample.Sample{mkSample(0, 1, []byte("x"))}), skipped: map[string]int64{".svg": 9, "": 2}}
	rep := mustRun(t, Config{Source: src, Fields: testFields(), Output: outPath(t), PageSize: 4096,
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if rep.SkippedFiles[".svg"] != 9 || rep.SkippedFiles[""] != 2 || len(rep.SkippedFiles) != 2 {
		t.Errorf("report: skipped %v", rep.SkippedFiles)
	}
	if !strings.Contains(log.String(), "11 files skipped") || !strings.Contains(log.String(), ".svg: 9, no extension: 2") {
		t.Errorf("log: %s", log.String())
	}
}

// TestLeadRejects checks that a run whose first LeadRejects samples are all rejected for one
// reason stops there with that reason, writing nothing, and that a run with a sample written
// (or another reason) among them goes on.
func TestLeadRejects(t *testing.T) {
	missing := func(i int) sample.Sample { // no "data" column: "missing field"
		return sample.Sample{Origin: fmt.Sprintf("l%d", i), Values: sample.ColumnsOf(map[string]sample.Value{"label": {Kind: sample.KindInt, Int: 1}})}
	}
	const n = 3 * LeadRejects
	for _, tc := range []struct {
		name  string
		good  int // index of a good sample, -1 none
		other int // index of a sample rejected for another reason, -1 none
		stop  bool
	}{
		{"all rejected", -1, -1, true},
		{"one good sample among them", LeadRejects - 1, -1, false},
		{"another reason among them", n - 1, LeadRejects / 2, false},
		{"good sample after them", LeadRejects + 5, -1, true},
	} {
		for _, chunk := range []int{0, 7} {
			var s []sample.Sample
			for i := range n {
				switch i {
				case tc.good:
					s = append(s, mkSample(i, 1, []byte("ok")))
				case tc.other:
					s = append(s, sample.Sample{Origin: "x", Err: errors.New("unreadable")})
				default:
					s = append(s, missing(i))
				}
			}
			dir := t.TempDir()
			out := filepath.Join(dir, "out.mldf")
			rep, err := Run(context.Background(), Config{Source: newSource(s), Fields: testFields(), Output: out, PageSize: 4096, Workers: 3, ChunkSize: chunk})
			if !tc.stop {
				if err != nil || rep.Samples != 1 {
					t.Errorf("%s, chunk %d: %v, %d samples", tc.name, chunk, err, rep.Samples)
				}
				continue
			}
			if !errors.Is(err, ErrAllRejected) || !contains(err, fmt.Sprintf("the first %d samples", LeadRejects), `"missing field"`, `field "data"`) {
				t.Fatalf("%s, chunk %d: error %v", tc.name, chunk, err)
			}
			if rep.Rejected > n/2 {
				t.Errorf("%s, chunk %d: went on to %d rejects", tc.name, chunk, rep.Rejected)
			}
			if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s, chunk %d: output written", tc.name, chunk)
			}
		}
	}
}
