package pipeline

import (
	"bytes"
	"testing"

	"github.com/mldf/convert/format/mldf"
)

// TestReaderRoundTrip reads a converted file back with the reader package: it must verify
// (structure, checksums, zero gaps) and give back every good sample's values.
func TestReaderRoundTrip(t *testing.T) {
	samples := mixedSamples(300, 4096, true)
	out := outPath(t)
	mustRun(t, Config{Source: newSource(samples), Fields: testFields(), Output: out, PageSize: 4096, Checksums: true, Workers: 2, ChunkSize: 5})
	if _, err := mldf.Verify(out); err != nil {
		t.Fatalf("verify: %v", err)
	}
	r, err := mldf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	row := 0
	for _, s := range samples {
		lv, ok := s.Get("label")
		dv := s.Value("data")
		if s.Err != nil || !ok || bytes.HasPrefix(dv.Bytes, []byte("BAD")) {
			continue
		}
		label, err := r.Int(row, 0)
		if err != nil || label != lv.Int {
			t.Fatalf("row %d: label %d, %v; want %d", row, label, err, lv.Int)
		}
		p, err := r.Payload(row, 1)
		if err != nil || !bytes.Equal(p, dv.Bytes) {
			t.Fatalf("row %d: payload differs (%v)", row, err)
		}
		row++
	}
	if r.NumSamples() != row {
		t.Fatalf("%d samples, want %d", r.NumSamples(), row)
	}
}

func TestReaderEmpty(t *testing.T) {
	out := outPath(t)
	mustRun(t, Config{Source: newSource(nil), Fields: testFields(), Output: out, PageSize: 4096, Checksums: true, AllowEmpty: true})
	if _, err := mldf.Verify(out); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

// TestReportFields: the per-field payload counts the pipeline reports (which the command's
// report shows) are what the written file holds, rejected samples and empty payloads left out.
func TestReportFields(t *testing.T) {
	samples := mixedSamples(500, 4096, true)
	out := outPath(t)
	rep := mustRun(t, Config{Source: newSource(samples), Fields: testFields(), Output: out, PageSize: 4096, Checksums: true, Workers: 2})
	r, err := mldf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := r.Describe()
	if len(rep.Fields) != len(d.Fields) {
		t.Fatalf("%d fields reported, file has %d", len(rep.Fields), len(d.Fields))
	}
	for f, got := range rep.Fields {
		want := d.Fields[f]
		if got.Name != want.Name || got.Type != want.Type || got.Payloads != int64(want.Payloads) || got.PayloadBytes != int64(want.PayloadBytes) {
			t.Errorf("field %d: reported %+v, file has %d payloads of %d bytes", f, got, want.Payloads, want.PayloadBytes)
		}
	}
	if rep.Fields[1].Payloads == 0 || rep.Rejected == 0 {
		t.Fatalf("the samples should give payloads and rejects: %+v", rep)
	}
}
