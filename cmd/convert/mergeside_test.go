package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A sharded run's task that rejects samples names its own rejects file in the exit-3 message
// (OUT.part-00001-of-00002.mldf.rejects.jsonl, where they are), and merge writes the merged
// output's report (the parts' reports summed) and rejects log (the parts' logs in part order).
func TestMergeWritesReportAndRejects(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	writeNoiseFolder(t, data, 4, 8)
	for i := range 2 {
		if err := os.WriteFile(filepath.Join(data, "class"+strconv.Itoa(i), "bad.png"), []byte("not a png"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "o.mldf")
	var parts []string
	for i := range 2 {
		part := partPath(out, i, 2)
		parts = append(parts, part)
		_, _, err := run(t, "images", data, out, "--mode", "png", "--shards", "2", "--shard", strconv.Itoa(i))
		var rej *rejectedError
		if !errors.As(err, &rej) {
			t.Fatalf("shard %d: %v, want rejected samples (exit 3)", i, err)
		}
		if want := part + ".rejects.jsonl"; !strings.Contains(err.Error(), "listed in "+want+")") {
			t.Errorf("shard %d: %q does not name %s", i, err, want)
		}
		if _, err := os.Stat(part + ".rejects.jsonl"); err != nil {
			t.Errorf("shard %d: %v", i, err)
		}
		// The re-run of a finished task says the same.
		_, _, err = run(t, "images", data, out, "--mode", "png", "--shards", "2", "--shard", strconv.Itoa(i))
		if err == nil || !strings.Contains(err.Error(), part+".rejects.jsonl") {
			t.Errorf("shard %d re-run: %v", i, err)
		}
	}
	// An older run's side files at the merged paths are replaced.
	os.WriteFile(out+".rejects.jsonl", []byte("stale\n"), 0o644)
	stdout, stderr, err := run(t, "merge", out)
	if err != nil {
		t.Fatalf("merge: %v\n%s", err, stderr)
	}
	var want []byte
	var wantRep runReport
	for _, p := range parts {
		b, err := os.ReadFile(p + ".rejects.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, b...)
		var r runReport
		b, err = os.ReadFile(p + ".report.json")
		if err != nil || json.Unmarshal(b, &r) != nil {
			t.Fatalf("part report: %v", err)
		}
		wantRep.NumSamples += r.NumSamples
		wantRep.NumRejected += r.NumRejected
		wantRep.NumInputs += r.NumInputs
	}
	got, err := os.ReadFile(out + ".rejects.jsonl")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("merged rejects %q (%v), want the parts' in order %q", got, err, want)
	}
	if n := bytes.Count(got, []byte("\n")); n != 2 {
		t.Errorf("%d reject lines, want 2", n)
	}
	b, err := os.ReadFile(out + ".report.json")
	if err != nil {
		t.Fatalf("no merged report: %v (stdout %q)", err, stdout)
	}
	var rep runReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Output != out || !rep.OK || rep.NumSamples != 4 || rep.NumSamples != wantRep.NumSamples || rep.NumRejected != 2 ||
		rep.NumInputs != wantRep.NumInputs || rep.Shards != 2 || rep.Shard != nil {
		t.Errorf("merged report %+v, want output %s, ok, 4 samples, 2 rejected, %d inputs", rep, out, wantRep.NumInputs)
	}
	var byReason int64
	for _, n := range rep.RejectsByReason {
		byReason += n
	}
	if byReason != 2 {
		t.Errorf("rejects_by_reason %v, want 2 in all", rep.RejectsByReason)
	}
	if len(rep.Fields) != 2 || rep.Fields[0].NumPayloads != 4 {
		t.Errorf("merged report fields %+v", rep.Fields)
	}
	st, _ := os.Stat(out)
	if rep.OutputBytes != st.Size() {
		t.Errorf("bytes_out %d, file %d", rep.OutputBytes, st.Size())
	}
	if !strings.Contains(stdout, out+".rejects.jsonl") {
		t.Errorf("merge output %q does not name the merged rejects", stdout)
	}

	// Parts without rejects: no merged rejects file, and the older one is removed.
	for _, p := range parts {
		os.Remove(p + ".rejects.jsonl")
	}
	if _, stderr, err := run(t, "merge", out); err != nil {
		t.Fatalf("merge: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(out + ".rejects.jsonl"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an older rejects file survived a merge of parts without rejects: %v", err)
	}
}
