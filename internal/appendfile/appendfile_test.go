package appendfile

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/format/mldf/mldftest"
)

type sample = mldftest.Sample

func genSamples(n int, seed uint64) []sample { return mldftest.Samples(n, seed) }

var testFields = mldftest.Fields()

// writeFile writes samples with the project's writer (batches of 7, so that batches and
// appends do not line up).
func writeFile(t testing.TB, path string, page int64, fields []mldf.FieldDesc, checksums bool, samples []sample) {
	t.Helper()
	mldftest.Write(t, path, page, fields, checksums, 7, samples)
}

// TestFiveAppendsEqualOneRun: a base and four appends (five inputs) give the bytes of one run
// over the five inputs in the same order, for page sizes that make payloads straddle, fill
// and exceed pages, with and without checksums, and with empty inputs among them.
func TestFiveAppendsEqualOneRun(t *testing.T) {
	for _, tc := range []struct {
		name      string
		page      int64
		checksums bool
		sizes     []int
	}{
		{"4k", 4096, true, []int{40, 13, 1, 77, 25}},
		{"64k", 65536, true, []int{10, 30, 5, 60, 2}},
		{"no checksums", 4096, false, []int{9, 9, 9, 9, 9}},
		{"empty inputs", 4096, true, []int{0, 20, 0, 0, 15}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var all []sample
			var inputs [][]sample
			for i, n := range tc.sizes {
				s := genSamples(n, uint64(i+1))
				inputs = append(inputs, s)
				all = append(all, s...)
			}
			one := filepath.Join(dir, "one.mldf")
			writeFile(t, one, tc.page, testFields, tc.checksums, all)
			base := filepath.Join(dir, "base.mldf")
			writeFile(t, base, tc.page, testFields, tc.checksums, inputs[0])
			for i, in := range inputs[1:] {
				add := filepath.Join(dir, "add.mldf")
				writeFile(t, add, tc.page, testFields, tc.checksums, in)
				rep, err := Append(context.Background(), base, add, base)
				if err != nil {
					t.Fatalf("append %d: %v", i+1, err)
				}
				if rep.Added != int64(len(in)) {
					t.Fatalf("append %d: added %d, want %d", i+1, rep.Added, len(in))
				}
			}
			want, _ := os.ReadFile(one)
			got, _ := os.ReadFile(base)
			if !bytes.Equal(got, want) {
				t.Fatalf("five appends: %d bytes, one run: %d bytes; they differ", len(got), len(want))
			}
			r, err := mldf.Open(base)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.VerifyWith(context.Background(), mldf.VerifyOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestAppendRefusesOtherSchema: a delta with other fields, types, options, page size or
// flags is refused with an error naming both files, and the base is left as it was.
func TestAppendRefusesOtherSchema(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.mldf")
	s := genSamples(10, 1)
	writeFile(t, base, 4096, testFields, true, s)
	before, _ := os.ReadFile(base)
	for _, tc := range []struct {
		name      string
		page      int64
		checksums bool
		fields    []mldf.FieldDesc
	}{
		{"field name", 4096, true, []mldf.FieldDesc{{Name: "y", Type: mldf.TypeInt}, {Name: "data", Type: mldf.TypeBytes}}},
		{"field type", 4096, true, []mldf.FieldDesc{{Name: "label", Type: mldf.TypeFloat}, {Name: "data", Type: mldf.TypeBytes}}},
		{"field count", 4096, true, []mldf.FieldDesc{{Name: "data", Type: mldf.TypeBytes}}},
		{"page size", 8192, true, testFields},
		{"flags", 4096, false, testFields},
	} {
		t.Run(tc.name, func(t *testing.T) {
			add := filepath.Join(dir, "add.mldf")
			ss := s
			if len(tc.fields) == 1 {
				ss = nil
			}
			writeFile(t, add, tc.page, tc.fields, tc.checksums, ss)
			_, err := Append(context.Background(), base, add, base)
			if !errors.Is(err, ErrIncompatible) {
				t.Fatalf("err = %v, want ErrIncompatible", err)
			}
			if !bytes.Contains([]byte(err.Error()), []byte(base)) || !bytes.Contains([]byte(err.Error()), []byte(add)) {
				t.Fatalf("error does not name both files: %v", err)
			}
			after, _ := os.ReadFile(base)
			if !bytes.Equal(before, after) {
				t.Fatal("base changed")
			}
		})
	}
}
