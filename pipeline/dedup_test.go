package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/internal/dedup"
	"github.com/mldf/convert/internal/quote"
	"github.com/mldf/convert/sample"
)

// dupSamples returns n samples over two "input files" whose data repeats (every 7th sample
// repeats an earlier one, also across the files), some with an empty payload, some bad
// (their bytes start with BAD: the field rejects them), and labels that differ between
// copies of the same data every 5th sample.
func dupSamples(n int) []sample.Sample {
	var out []sample.Sample
	for i := range n {
		var data []byte
		switch {
		case i%11 == 3:
			data = nil // empty payload: never a duplicate
		case i%13 == 5:
			data = []byte(fmt.Sprintf("BAD%d", i%3)) // rejected, so never a first occurrence
		case i%7 == 6:
			data = []byte(fmt.Sprintf("payload-%d", (i*31)%max(i, 1))) // a copy of an earlier one
		default:
			data = []byte(fmt.Sprintf("payload-%d", i))
		}
		s := mkSample(i, int64(i%5/4), data)
		file := "a.jsonl"
		if i >= n/2 {
			file = "b.jsonl"
		}
		s.Origin = fmt.Sprintf("%s:%d", file, i+1)
		out = append(out, s)
	}
	return out
}

// expectDups is the reference: for every sample index a duplicate's first occurrence (-1:
// not a duplicate), comparing the given columns; empty data and bad samples are never keys.
func expectDups(samples []sample.Sample, withLabel bool) []int {
	first := map[string]int{}
	dup := make([]int, len(samples))
	for i, s := range samples {
		dup[i] = -1
		data := s.Values[s.Find("data", 0)].Value.Bytes
		if bytes.HasPrefix(data, []byte("BAD")) || (len(data) == 0 && !withLabel) {
			continue
		}
		key := string(data)
		if withLabel {
			key = fmt.Sprintf("%d/%s", s.Values[s.Find("label", 0)].Value.Int, data)
		}
		if f, ok := first[key]; ok {
			dup[i] = f
		} else {
			first[key] = i
		}
	}
	return dup
}

func TestDedup(t *testing.T) {
	samples := dupSamples(600)
	cases := []struct {
		name    string
		fields  []string
		mode    DedupMode
		batches bool
	}{
		{"drop data", []string{"data"}, DedupDrop, false},
		{"report data", []string{"data"}, DedupReport, false},
		{"drop data and label", []string{"data", "label"}, DedupDrop, false},
		{"drop data, batch source", []string{"data"}, DedupDrop, true},
		{"report data and label, batch source", []string{"label", "data"}, DedupReport, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := expectDups(samples, len(c.fields) > 1)
			var kept []sample.Sample
			nDup := 0
			for i, s := range samples {
				if want[i] >= 0 {
					nDup++
					if c.mode == DedupDrop {
						continue
					}
				}
				kept = append(kept, s)
			}
			if nDup < 20 {
				t.Fatalf("only %d duplicates in the test data", nDup)
			}
			// The reference output: a run without dedup over the samples that stay.
			ref := filepath.Join(t.TempDir(), "ref.mldf")
			mustRun(t, Config{Source: newSource(kept), Fields: testFields(), Output: ref, Checksums: true, Workers: 1})
			refBytes, _ := os.ReadFile(ref)
			for _, workers := range []int{1, 2, 4} {
				for _, chunk := range []int{0, 1, 7} {
					dir := t.TempDir()
					out, rej := filepath.Join(dir, "out.mldf"), filepath.Join(dir, "rej.jsonl")
					cfg := Config{Fields: testFields(), Output: out, Checksums: true, Workers: workers, ChunkSize: chunk,
						RejectsPath: rej, Dedup: &Dedup{Fields: c.fields, Mode: c.mode, Dir: dir}}
					if c.batches {
						cfg.Source = &batchSource{sliceSource: newSource(samples), sizes: []int{5, 64, 1, 33}}
					} else {
						cfg.Source = newSource(samples)
					}
					rep := mustRun(t, cfg)
					got, _ := os.ReadFile(out)
					if !bytes.Equal(got, refBytes) {
						t.Fatalf("workers %d, chunk %d: output differs from the reference (%d vs %d bytes)", workers, chunk, len(got), len(refBytes))
					}
					if rep.Duplicates != int64(nDup) || rep.RejectsByReason["duplicate"] != int64(nDup) || rep.Rejected == 0 {
						t.Fatalf("workers %d: report %d duplicates (%v), want %d", workers, rep.Duplicates, rep.RejectsByReason, nDup)
					}
					checkDupRejects(t, rej, samples, want, strings.Join(c.fields, ","), c.mode == DedupDrop)
					noTemps(t, dir, "out.mldf", "rej.jsonl")
				}
			}
		})
	}
}

// With a table at its smallest cap, the hashes reach its run files (flushed and merged) and
// the output is still the reference's for any worker count. Under the race detector (seconds
// there) a smaller case: flushed runs, no merge, one worker count.
func TestDedupTableOnDisk(t *testing.T) {
	n, workerCounts := 20000, []int{1, 3}
	if dedupRace {
		n, workerCounts = 8000, []int{3}
	}
	samples := dupSamples(n)
	want := expectDups(samples, false)
	var kept []sample.Sample
	nDup := 0
	for i, s := range samples {
		if want[i] >= 0 {
			nDup++
			continue
		}
		kept = append(kept, s)
	}
	ref := filepath.Join(t.TempDir(), "ref.mldf")
	mustRun(t, Config{Source: newSource(kept), Fields: testFields(), Output: ref, Checksums: true, Workers: 1})
	refBytes, _ := os.ReadFile(ref)
	for _, workers := range workerCounts {
		dir := t.TempDir()
		tab, err := dedup.New(dedup.Config{Dir: dir, Memory: dedup.MinMemory})
		if err != nil {
			t.Fatal(err)
		}
		out, rej := filepath.Join(dir, "out.mldf"), filepath.Join(dir, "rej.jsonl")
		rep := mustRun(t, Config{Source: newSource(samples), Fields: testFields(), Output: out, Checksums: true, Workers: workers,
			RejectsPath: rej, Dedup: &Dedup{Fields: []string{"data"}, Table: tab}})
		st := tab.Stats()
		tab.Close()
		if st.Flushes == 0 || st.Merges == 0 && !dedupRace || st.PeakMemory > dedup.MinMemory {
			t.Fatalf("table stats %+v: no run or merge, or over the cap", st)
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, refBytes) || rep.Duplicates != int64(nDup) {
			t.Fatalf("workers %d: %d duplicates (want %d), output equal: %v", workers, rep.Duplicates, nDup, bytes.Equal(got, refBytes))
		}
		checkDupRejects(t, rej, samples, want, "data", true)
	}
}

// checkDupRejects checks that the rejects file lists every duplicate, in sample order, with
// the sample it duplicates: its origin and its sample id in the output.
func checkDupRejects(t *testing.T, path string, samples []sample.Sample, want []int, fields string, drop bool) {
	t.Helper()
	ids := make([]int64, len(samples))
	var row int64
	for i, s := range samples {
		ids[i] = -1
		if bytes.HasPrefix(s.Values[s.Find("data", 0)].Value.Bytes, []byte("BAD")) || (drop && want[i] >= 0) {
			continue
		}
		ids[i] = row
		row++
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []struct {
		Origin, Key, Field, Reason string
		DuplicateOf                *struct {
			Origin string
			Index  int64
		} `json:"duplicate_of"`
	}
	for _, l := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var line = struct {
			Origin, Key, Field, Reason string
			DuplicateOf                *struct {
				Origin string
				Index  int64
			} `json:"duplicate_of"`
		}{}
		if err := json.Unmarshal(l, &line); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if line.Reason == "duplicate" {
			lines = append(lines, line)
		}
	}
	k := 0
	for i, f := range want {
		if f < 0 {
			continue
		}
		if k >= len(lines) {
			t.Fatalf("rejects file lists %d duplicates, want more", len(lines))
		}
		l := lines[k]
		k++
		if l.Origin != samples[i].Origin || l.Field != fields || l.DuplicateOf == nil ||
			l.DuplicateOf.Origin != samples[f].Origin || l.DuplicateOf.Index != ids[f] {
			t.Fatalf("duplicate %d: line %+v (duplicate_of %+v), want %s duplicating %d (%s)", i, l, l.DuplicateOf, samples[i].Origin, f, samples[f].Origin)
		}
	}
	if k != len(lines) {
		t.Fatalf("rejects file lists %d duplicates, want %d", len(lines), k)
	}
}

func TestDedupConfigErrors(t *testing.T) {
	for _, d := range []*Dedup{
		{Fields: nil},
		{Fields: []string{"image"}},
		{Fields: []string{"data", "data"}},
	} {
		_, err := Run(context.Background(), Config{Source: newSource(dupSamples(10)), Fields: testFields(), Output: outPath(t), Dedup: d})
		if !errors.Is(err, ErrConfig) {
			t.Fatalf("dedup %+v: got %v, want ErrConfig", d, err)
		}
	}
	if _, err := ParseDedupMode("keep"); !errors.Is(err, ErrConfig) {
		t.Fatalf("mode keep: %v", err)
	}
}

// A table seeded with a base file drops the new samples that duplicate one of the base's
// (an append), naming the base and the row.
func TestSeedDedup(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.mldf")
	var baseSamples, newSamples []sample.Sample
	for i := range 20 {
		baseSamples = append(baseSamples, mkSample(i, int64(i%2), []byte(fmt.Sprint("b", i))))
	}
	mustRun(t, Config{Source: newSource(baseSamples), Fields: testFields(), Output: base, Checksums: true})
	for i := range 10 {
		data := []byte(fmt.Sprint("n", i))
		if i%3 == 0 {
			data = []byte(fmt.Sprint("b", i*2)) // row i*2 of the base
		}
		newSamples = append(newSamples, mkSample(i, int64(i%2), data))
	}
	for _, fields := range [][]string{{"data"}, {"data", "label"}} {
		tab, err := dedup.New(dedup.Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		n, err := SeedDedup(context.Background(), tab, base, fields)
		if err != nil || n != 20 {
			t.Fatalf("seed: %d, %v", n, err)
		}
		rej := filepath.Join(dir, "rej.jsonl")
		rep := mustRun(t, Config{Source: newSource(newSamples), Fields: testFields(), Output: filepath.Join(dir, "new.mldf"),
			RejectsPath: rej, Dedup: &Dedup{Fields: fields, Table: tab}})
		// With the label too, new sample i (label i%2) equals base row 2i (label 0) when i is even.
		want := []int{0, 6}
		if len(fields) == 1 {
			want = []int{0, 3, 6, 9}
		}
		if rep.Duplicates != int64(len(want)) || rep.Samples != int64(10-len(want)) {
			t.Fatalf("fields %v: report %+v", fields, rep)
		}
		raw, _ := os.ReadFile(rej)
		for _, i := range want {
			if !strings.Contains(string(raw), fmt.Sprintf(`"duplicate_of":{"origin":%q,"index":%d}`, base, 2*i)) {
				t.Fatalf("fields %v: rejects file does not name base row %d:\n%s", fields, 2*i, raw)
			}
		}
		if err := tab.Close(); err != nil {
			t.Fatal(err)
		}
	}
	tab, _ := dedup.New(dedup.Config{Dir: dir})
	defer tab.Close()
	if _, err := SeedDedup(context.Background(), tab, base, []string{"image"}); !errors.Is(err, ErrConfig) {
		t.Fatalf("seed with a field the base lacks: %v", err)
	}
	if _, err := SeedDedup(context.Background(), tab, filepath.Join(dir, "missing.mldf"), []string{"data"}); err == nil {
		t.Fatal("seed from a missing base succeeded")
	}
}

// The duplicates' rejects lines are the bytes json.Marshal gives the rejects line, whatever
// the strings hold.
func TestDuplicateLine(t *testing.T) {
	strs := []string{"", "a.jsonl:12", `q"uote`, `back\slash`, "<html>&", "tab\there", "nl\n", "é ü", "\u2028",
		"bad \xff utf8", strings.Repeat("long/", 100), "\x00\x7f"}
	for i, s := range strs {
		o := strs[(i+3)%len(strs)]
		e := &SampleError{Origin: s, Key: o, Field: "image,label", Reason: "duplicate",
			Err: &DuplicateError{First: dedup.First{Index: int64(i) - 1, Origin: o + s}}}
		d := e.Err.(*DuplicateError)
		want, _ := json.Marshal(struct {
			Origin      string      `json:"origin"`
			Key         string      `json:"key"`
			Field       string      `json:"field"`
			Reason      string      `json:"reason"`
			Error       string      `json:"error"`
			DuplicateOf *firstEntry `json:"duplicate_of,omitempty"`
		}{quote.S(e.Origin), quote.S(e.Key), e.Field, e.Reason, e.Err.Error(), firstOf(d)})
		if got := appendDuplicateLine(nil, e, d); string(got) != string(want)+"\n" {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
		}
	}
}
