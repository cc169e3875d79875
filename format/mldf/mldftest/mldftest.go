// Package mldftest makes MLDF files for tests: samples of an int label and a bytes payload of
// mixed sizes, and a file of them written with the project's writer.
package mldftest

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/mldf/convert/format/mldf"
	"github.com/mldf/convert/pagewriter"
)

// Sample is one sample of Fields: an int label and a bytes payload (nil: none).
type Sample struct {
	Label int64
	Data  []byte
}

// Fields returns the fields of the samples: label (int) and data (bytes).
func Fields() []mldf.FieldDesc {
	return []mldf.FieldDesc{{Name: "label", Type: mldf.TypeInt}, {Name: "data", Type: mldf.TypeBytes}}
}

// Samples makes n samples with payloads of mixed sizes, the same for the same seed: empty
// (a tenth), larger than a 4 KiB page (a tenth), and up to 3000 bytes.
func Samples(n int, seed uint64) []Sample {
	rng := rand.New(rand.NewPCG(seed, 1))
	s := make([]Sample, n)
	for i := range s {
		var size int
		switch rng.IntN(10) {
		case 0:
			size = 0
		case 1:
			size = 4096 + rng.IntN(9000)
		default:
			size = 1 + rng.IntN(3000)
		}
		d := make([]byte, size)
		for j := range d {
			d[j] = byte(rng.Uint32())
		}
		s[i] = Sample{Label: int64(i*7 - 3), Data: d}
	}
	return s
}

// Write writes samples (of fields whose first is the int label and second the bytes payload)
// as an MLDF file at path with the project's writer, in batches of batch samples, and returns
// the writer's result. It fails the test on an error.
func Write(t testing.TB, path string, page int64, fields []mldf.FieldDesc, checksums bool, batch int, samples []Sample) pagewriter.Result {
	t.Helper()
	w, err := mldf.Create(path, mldf.Options{PageSize: page, Fields: fields, Checksums: checksums})
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < len(samples); lo += batch {
		b := w.NewBatch()
		for _, s := range samples[lo:min(lo+batch, len(samples))] {
			row := make([]byte, w.RowSize())
			mldf.PutInt(row, s.Label)
			if err := b.Append(row, [][]byte{nil, s.Data}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(context.Background(), w.Issue(), b); err != nil {
			t.Fatal(err)
		}
	}
	res, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return res
}
