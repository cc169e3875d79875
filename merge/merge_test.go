package merge

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

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/format/mldf/mldftest"
	"github.com/mldf/convert/pagewriter"
)

type testSample = mldftest.Sample

func genSamples(n int, seed uint64) []testSample { return mldftest.Samples(n, seed) }

var testFields = mldftest.Fields()

// writeFile writes samples as an MLDF file with the project's writer.
func writeFile(t testing.TB, path string, page int64, fields []mldf.FieldDesc, samples []testSample) pagewriter.Result {
	t.Helper()
	return mldftest.Write(t, path, page, fields, true, 64, samples)
}

// writeParts splits samples into n contiguous parts of out, each with its .done record.
func writeParts(t testing.TB, out string, n int, page int64, samples []testSample, recipe string) []string {
	t.Helper()
	var parts []string
	for i := range n {
		lo, hi := len(samples)*i/n, len(samples)*(i+1)/n
		p := PartPath(out, i, n)
		res := writeFile(t, p, page, testFields, samples[lo:hi])
		writeRecord(t, p, Record{Part: p, Shard: i, Shards: n, RecipeSHA256: recipe,
			Inputs: json.RawMessage(`[]`), Samples: res.Samples, Checksum: fmt.Sprintf("%016x", res.Checksum), Version: "test"})
		parts = append(parts, p)
	}
	return parts
}

func writeRecord(t testing.TB, part string, r Record) {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(part+".done", b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// digests returns one digest per sample: the INT value and the payload bytes.
func digests(t testing.TB, path string) []uint64 {
	t.Helper()
	r, err := mldf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := make([]uint64, r.NumSamples())
	for i := range out {
		d := xxhash.New()
		v, err := r.Int(i, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(d, v, ":")
		p, err := r.Payload(i, 1)
		if err != nil {
			t.Fatal(err)
		}
		d.Write(p)
		out[i] = d.Sum64()
	}
	return out
}

func TestMergeMatchesSingleFile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		copyBy CopyMethod
	}{{"1part", 1, CopyAuto}, {"4parts", 4, CopyAuto}, {"4parts-readwrite", 4, CopyReadWrite}, {"7parts", 7, CopyAuto}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			samples := genSamples(500, 1)
			single := filepath.Join(dir, "single.mldf")
			writeFile(t, single, 4096, testFields, samples)
			out := filepath.Join(dir, "out.mldf")
			parts := writeParts(t, out, tc.n, 4096, samples, "r1")
			rep, err := MergeWith(context.Background(), out, parts, Options{Copy: tc.copyBy})
			if err != nil {
				t.Fatal(err)
			}
			vr, err := mldf.Verify(out)
			if err != nil {
				t.Fatalf("verify merged: %v", err)
			}
			if !vr.ChecksumsOK || !vr.GapsChecked {
				t.Fatalf("verify report %+v", vr)
			}
			want, got := digests(t, single), digests(t, out)
			if len(got) != len(want) {
				t.Fatalf("%d samples, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("sample %d differs", i)
				}
			}
			if rep.Samples != int64(len(samples)) || rep.Parts != tc.n || rep.Entries != int64(vr.Entries) || rep.Size != vr.FileSize {
				t.Fatalf("report %+v, verify %+v", rep, vr)
			}
			if tc.copyBy == CopyReadWrite && rep.RangeCopied != 0 {
				t.Fatalf("read/write merge used copy_file_range for %d bytes", rep.RangeCopied)
			}
			if tc.n == 1 {
				// One part: the merge is a byte-for-byte copy.
				a, _ := os.ReadFile(single)
				b, _ := os.ReadFile(out)
				if !bytes.Equal(a, b) {
					t.Fatal("merging one part changed its bytes")
				}
			}
		})
	}
}

func TestMergeCopyMethodsAgree(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o.mldf")
	parts := writeParts(t, out, 3, 8192, genSamples(300, 2), "r")
	a, b := filepath.Join(dir, "a.mldf"), filepath.Join(dir, "b.mldf")
	if _, err := MergeWith(context.Background(), a, parts, Options{Copy: CopyAuto, VerifyParts: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := MergeWith(context.Background(), b, parts, Options{Copy: CopyReadWrite}); err != nil {
		t.Fatal(err)
	}
	c := filepath.Join(dir, "c.mldf") // unchecked: copy_file_range where the kernel allows
	if _, err := MergeWith(context.Background(), c, parts, Options{Copy: CopyAuto, TrustParts: true}); err != nil {
		t.Fatal(err)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	cb, _ := os.ReadFile(c)
	if !bytes.Equal(ab, bb) || !bytes.Equal(ab, cb) {
		t.Fatal("checked, copy_file_range and read/write merges differ")
	}
}

func TestMergeEmptyParts(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o.mldf")
	// 3 samples over 5 parts: some parts are empty; and all-empty payloads.
	samples := []testSample{{Label: 1}, {Label: 2, Data: []byte("x")}, {Label: 3}}
	parts := writeParts(t, out, 5, 4096, samples, "r")
	if _, err := Merge(out, parts); err != nil {
		t.Fatal(err)
	}
	if _, err := mldf.Verify(out); err != nil {
		t.Fatal(err)
	}
	if got := digests(t, out); len(got) != 3 {
		t.Fatalf("%d samples", len(got))
	}
}

func TestMergeRefuses(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, out string, parts []string) []string
		want  error
		msg   string
	}{
		{"missing part", func(t *testing.T, out string, parts []string) []string {
			os.Remove(parts[2])
			os.Remove(parts[2] + ".done")
			return []string{parts[0], parts[1], parts[3]}
		}, ErrMissingPart, "tasks [2]"},
		{"missing file of a listed part", func(t *testing.T, out string, parts []string) []string {
			os.Remove(parts[1])
			return parts
		}, ErrMissingPart, "re-run task 1"},
		{"no done record", func(t *testing.T, out string, parts []string) []string {
			os.Remove(parts[3] + ".done")
			return parts
		}, ErrIncomplete, ".done does not exist"},
		{"checksum mismatch", func(t *testing.T, out string, parts []string) []string {
			// The part was rewritten (other content) after its record.
			writeFile(t, parts[1], 4096, testFields, genSamples(25, 99))
			return parts
		}, ErrMismatch, "header checksum"},
		{"tables altered", func(t *testing.T, out string, parts []string) []string {
			r, err := mldf.Open(parts[0])
			if err != nil {
				t.Fatal(err)
			}
			at := int64(r.Header().MetadataPtr)
			r.Close()
			f, _ := os.OpenFile(parts[0], os.O_RDWR, 0)
			f.WriteAt([]byte{0x55}, at)
			f.Close()
			return parts
		}, ErrMismatch, "hash to"},
		{"different recipes", func(t *testing.T, out string, parts []string) []string {
			b, _ := os.ReadFile(parts[2] + ".done")
			os.WriteFile(parts[2]+".done", bytes.Replace(b, []byte(`"r1"`), []byte(`"r2"`), 1), 0o644)
			return parts
		}, ErrIncompatible, "different recipes"},
		{"different fields", func(t *testing.T, out string, parts []string) []string {
			fields := []mldf.FieldDesc{{Name: "label", Type: mldf.TypeInt}, {Name: "blob", Type: mldf.TypeBytes}}
			res := writeFile(t, parts[3], 4096, fields, genSamples(25, 3))
			writeRecord(t, parts[3], Record{Part: parts[3], Shard: 3, Shards: 4, RecipeSHA256: "r1", Samples: res.Samples, Checksum: fmt.Sprintf("%016x", res.Checksum)})
			return parts
		}, ErrIncompatible, "field descriptors differ"},
		{"different page size", func(t *testing.T, out string, parts []string) []string {
			res := writeFile(t, parts[3], 8192, testFields, genSamples(25, 3))
			writeRecord(t, parts[3], Record{Part: parts[3], Shard: 3, Shards: 4, RecipeSHA256: "r1", Samples: res.Samples, Checksum: fmt.Sprintf("%016x", res.Checksum)})
			return parts
		}, ErrIncompatible, "page size"},
		{"record of another task", func(t *testing.T, out string, parts []string) []string {
			b, _ := os.ReadFile(parts[0] + ".done")
			os.WriteFile(parts[1]+".done", b, 0o644)
			return parts
		}, ErrMismatch, "task 0 of 4"},
		{"garbage record", func(t *testing.T, out string, parts []string) []string {
			os.WriteFile(parts[1]+".done", []byte("{not json"), 0o644)
			return parts
		}, ErrRecord, ""},
		{"different part counts", func(t *testing.T, out string, parts []string) []string {
			return append(parts[:3:3], PartPath(out, 3, 5))
		}, ErrIncompatible, "part of 5"},
		{"duplicate", func(t *testing.T, out string, parts []string) []string {
			return append(parts, parts[0])
		}, ErrDuplicate, ""},
		{"not a part", func(t *testing.T, out string, parts []string) []string {
			return append(parts, filepath.Join(filepath.Dir(out), "x.mldf"))
		}, ErrPartName, ""},
		{"truncated part", func(t *testing.T, out string, parts []string) []string {
			os.Truncate(parts[2], 100)
			return parts
		}, ErrCorruptPart, ""},
		{"no parts", func(t *testing.T, out string, parts []string) []string { return nil }, ErrMissingPart, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.mldf")
			parts := writeParts(t, out, 4, 4096, genSamples(100, 5), "r1")
			parts = tc.setup(t, out, parts)
			_, err := Merge(out, parts)
			if !errors.Is(err, tc.want) || !strings.Contains(fmt.Sprint(err), tc.msg) {
				t.Fatalf("err = %v, want %v containing %q", err, tc.want, tc.msg)
			}
			if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
				t.Fatalf("a refused merge left %s", out)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Fatalf("temporary file left: %s", e.Name())
				}
			}
		})
	}
}

func TestFindParts(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "ds.mldf")
	parts := writeParts(t, out, 3, 4096, genSamples(30, 4), "r")
	os.WriteFile(filepath.Join(dir, "ds.part-00000-of-00003.mldf.report.json"), []byte("{}"), 0o644)
	got, err := FindParts(out)
	if err != nil || strings.Join(got, ",") != strings.Join(parts, ",") {
		t.Fatalf("FindParts = %v, %v; want %v", got, err, parts)
	}
	os.WriteFile(PartPath(out, 0, 2), nil, 0o644)
	if _, err := FindParts(out); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("stale parts of another count: err = %v", err)
	}
	if _, err := FindParts(filepath.Join(dir, "other.mldf")); !errors.Is(err, ErrMissingPart) {
		t.Fatalf("no parts: err = %v", err)
	}
}

func TestParsePartName(t *testing.T) {
	for _, tc := range []struct {
		in, out string
		i, n    int
		ok      bool
	}{
		{"a/b.part-00003-of-00008.mldf", "a/b.mldf", 3, 8, true},
		{"b.part-00000-of-00001", "b.mldf", 0, 1, true},
		{"x.y/b.part-00001-of-00002.beton", "x.y/b.beton", 1, 2, true},
		{"b.part-00008-of-00008.mldf", "", 0, 0, false},
		{"b.part-00000-of-00000.mldf", "", 0, 0, false},
		{"b.part-3-of-8.mldf", "", 0, 0, false},
		{"b.mldf", "", 0, 0, false},
	} {
		out, i, n, err := ParsePartName(tc.in)
		if (err == nil) != tc.ok || out != tc.out || i != tc.i || n != tc.n {
			t.Errorf("ParsePartName(%q) = %q %d %d %v", tc.in, out, i, n, err)
		}
		if tc.ok && PartPath(out, i, n) != tc.in && !strings.HasSuffix(tc.in, "00001") {
			t.Errorf("PartPath round trip of %q gave %q", tc.in, PartPath(out, i, n))
		}
	}
}

func FuzzParsePartName(f *testing.F) {
	for _, s := range []string{"a.part-00003-of-00008.mldf", "x.part-00000-of-00001", "..part-99999-of-999999999.", "b.mldf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, i, n, err := ParsePartName(s)
		if err != nil {
			return
		}
		if i < 0 || i >= n {
			t.Fatalf("%q: part %d of %d", s, i, n)
		}
		if _, i2, n2, err := ParsePartName(PartPath(out, i, n)); err != nil || i2 != i || n2 != n {
			t.Fatalf("%q: round trip %d %d %v", s, i2, n2, err)
		}
	})
}

func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"part":"a.part-00000-of-00001.mldf","shard":0,"shards":1,"recipe_sha256":"ab","inputs":[{"Path":"x","Size":1}],"samples":3,"checksum":"00000000deadbeef","elapsed_seconds":1.5,"version":"0.1.0"}`))
	f.Add([]byte(`{"checksum":"zz"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRecord("fuzz.done", b)
		if err != nil {
			return
		}
		if _, err := r.checksum(); err != nil || r.Samples < 0 {
			t.Fatalf("accepted a bad record: %+v", r)
		}
	})
}

// flipPayloadBit flips one bit of byte off of sample i's payload (field 1) in part path and
// returns the payload's size.
func flipPayloadBit(t *testing.T, path string, i int, off func(size int) int) int {
	t.Helper()
	r, err := mldf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := r.Ref(i, 1)
	r.Close()
	if err != nil || ref.Size == 0 {
		t.Fatalf("sample %d: ref %+v %v", i, ref, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	at := int64(ref.Ptr) + int64(off(int(ref.Size)))
	b := []byte{0}
	if _, err := f.ReadAt(b, at); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x10
	if _, err := f.WriteAt(b, at); err != nil {
		t.Fatal(err)
	}
	return int(ref.Size)
}

// TestMergeChecksPayloads: a part with one flipped payload bit fails the merge by
// default, naming the part, the sample and the rule, and leaves no output; the check runs
// while copying (no --verify-parts), for small payloads and for one that spans the copy
// buffer. TrustParts restores the unchecked copy.
func TestMergeChecksPayloads(t *testing.T) {
	samples := genSamples(60, 11)
	big := make([]byte, chunkSize+chunkSize/2) // crosses a copy-buffer boundary
	for j := range big {
		big[j] = byte(j * 31)
	}
	samples[40].Data = big // in part 1 of 2
	for _, c := range []struct {
		name   string
		sample int // in part 1
		off    func(size int) int
	}{
		{"first byte of a small payload", 3, func(int) int { return 0 }},
		{"last byte of a small payload", 5, func(n int) int { return n - 1 }},
		{"big payload, first chunk", 10, func(int) int { return 100 }},
		{"big payload, after the chunk boundary", 10, func(n int) int { return n - 7 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "o.mldf")
			parts := writeParts(t, out, 2, 4096, samples, "r")
			flipPayloadBit(t, parts[1], c.sample, c.off)
			for _, cp := range []CopyMethod{CopyAuto, CopyReadWrite} {
				_, err := MergeWith(context.Background(), out, parts, Options{Copy: cp})
				if !errors.Is(err, ErrCorruptPart) {
					t.Fatalf("copy %d: err = %v, want ErrCorruptPart", cp, err)
				}
				for _, want := range []string{parts[1], fmt.Sprintf("sample %d, field 1 \"data\"", c.sample), "rule V6", "re-run task 1"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
				if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
					t.Fatal("a refused merge left its output")
				}
			}
			// Trusting the parts copies the flipped bit; verify then finds it.
			if _, err := MergeWith(context.Background(), out, parts, Options{TrustParts: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := mldf.Verify(out); !errors.Is(err, mldf.ErrChecksum) {
				t.Fatalf("verify of the trusted merge: %v", err)
			}
		})
	}
	t.Run("checksummed flag cleared in a part", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "o.mldf")
		parts := writeParts(t, out, 2, 4096, samples, "r")
		f, _ := os.OpenFile(parts[0], os.O_RDWR, 0)
		f.WriteAt([]byte{byte(mldf.FlagLittleEndian)}, mldf.HeaderOffset+4)
		f.Close()
		if _, err := Merge(out, parts); !errors.Is(err, ErrCorruptPart) || !strings.Contains(err.Error(), "rule R4") {
			t.Fatalf("err = %v, want ErrCorruptPart naming rule R4", err)
		}
	})
}
