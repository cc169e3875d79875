package recipe

import (
	"context"
	"fmt"
	"testing"

	"github.com/mldf/convert/sample"
	"github.com/mldf/convert/sources"
	"github.com/mldf/convert/sources/h5ad"
)

// TestEverySourceResumes builds every source type as a run builds it (the recipe's wrappers
// included) and checks that it is a sources.Resumer whose Resume, given the count and the
// token a run records at a place (after the first, a middle and the last sample; after a
// batch for a batch source), gives exactly the samples after it.
func TestEverySourceResumes(t *testing.T) {
	for _, typ := range sources.Types() {
		t.Run(typ, func(t *testing.T) {
			fix, ok := shardFixtures[typ]
			if !ok {
				t.Fatalf("no fixture for source type %s: add one to shardFixtures", typ)
			}
			if typ == "h5ad" && !h5ad.Available() {
				t.Skip("h5ad: libhdf5 not compiled in")
			}
			p, err := buildYAML(t, fix+"output: x.mldf\n")
			if err != nil {
				t.Fatal(err)
			}
			if c, ok := p.Source.(interface{ Close() error }); ok {
				defer c.Close()
			}
			rs, ok := p.Source.(sources.Resumer)
			if !ok {
				t.Fatalf("%T is not a sources.Resumer", p.Source)
			}
			all, places := placesOf(t, p.Source)
			if len(all) < 2 {
				t.Fatalf("%d samples", len(all))
			}
			ks := []int{1, len(all) / 2, len(all) - 1}
			if _, ok := p.Source.(sources.BatchSource); ok {
				ks = nil
				for k := range places {
					ks = append(ks, k)
				}
			}
			for _, k := range ks {
				tok, ok := places[k]
				if !ok {
					continue
				}
				next, err := rs.Resume(int64(k), tok)
				if err != nil {
					t.Fatalf("Resume(%d, %s): %v", k, tok, err)
				}
				rest, _ := placesOf(t, next)
				if fmt.Sprint(rest) != fmt.Sprint(all[k:]) {
					t.Fatalf("resumed at %d (%s): %d samples, want %d\n%.500q\nwant\n%.500q", k, tok, len(rest), len(all)-k, rest, all[k:])
				}
			}
		})
	}
}

// placesOf runs src as a checkpointing run does and returns its samples and the token at
// each place it records: after each batch of a batch source, after each sample of a
// sources.PositionedRunner, else after each sample with no token.
func placesOf(t *testing.T, src sources.Source) ([]string, map[int][]byte) {
	t.Helper()
	var all []string
	places := map[int][]byte{}
	describe := func(s sample.Sample) string {
		return fmt.Sprintf("%q %q %v %+v", s.Key, s.Origin, s.Err, s.Values)
	}
	var err error
	switch s := src.(type) {
	case sources.BatchSource:
		err = s.RunBatches(context.Background(), func(b sources.Batch) error {
			var tok []byte
			if pb, ok := b.(sources.PositionedBatch); ok {
				tok = pb.After()
			}
			var m sources.Memory
			b.Decode(&m)
			for _, x := range m.Samples {
				all = append(all, describe(x))
			}
			places[len(all)] = tok
			return nil
		})
	case sources.PositionedRunner:
		err = s.RunPositioned(context.Background(), func(x sample.Sample, after func() []byte) error {
			all = append(all, describe(x))
			places[len(all)] = after()
			return nil
		})
	default:
		err = src.Run(context.Background(), func(x sample.Sample) error {
			all = append(all, describe(x))
			places[len(all)] = nil
			return nil
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return all, places
}
