package mldf_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/mldf/convert/format/mldf"
	lies "github.com/mldf/convert/internal/hostile"
)

// These tests import internal/hostile, which imports this package: they are external tests,
// reaching the package's test helpers through export_test.go.

// TestLies applies every lie of internal/hostile that needs no decoding to a file of every
// kind: Open, the typed accessors and Verify fail as its Reach says, naming its rule, the
// sample and the field.
func TestLies(t *testing.T) {
	base := mldf.LyingBase(t)
	if r, err := mldf.FromBytes("base", base); err != nil {
		t.Fatal(err)
	} else if _, err := r.Verify(); err != nil {
		t.Fatalf("base: %v", err)
	}
	for _, l := range lies.Lies {
		if l.Reach == lies.Decode {
			continue // reader/decode's tests
		}
		t.Run(l.Name, func(t *testing.T) {
			b, sample, field, err := lies.Apply(base, l)
			if err != nil {
				t.Fatal(err)
			}
			check := func(what string, err error) {
				t.Helper()
				var re *mldf.RuleError
				if !errors.As(err, &re) || re.Rule != l.Rule || !errors.Is(err, mldf.ErrCorrupt) {
					t.Fatalf("%s: %v, want rule %s", what, err, l.Rule)
				}
				if sample >= 0 && l.Reach == lies.Access && (re.Sample != sample || re.Field != field) {
					t.Fatalf("%s: %v, want sample %d, field %d", what, err, sample, field)
				}
			}
			r, err := mldf.FromBytes("lie", b)
			if l.Reach == lies.Open {
				check("Open", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Verify()
			check("Verify", err)
			if sample < 0 {
				return
			}
			typ := r.Fields()[field].Type
			var aerr error
			typed := mldf.IsImage(typ) || mldf.IsAudio(typ) || mldf.IsText(typ)
			switch {
			case mldf.IsImage(typ):
				_, _, aerr = r.Image(sample, field)
			case mldf.IsAudio(typ):
				_, _, aerr = r.Audio(sample, field)
			case mldf.IsText(typ):
				_, _, aerr = r.Text(sample, field)
			}
			_, perr := r.Payload(sample, field)
			if l.Reach == lies.Access {
				if typed {
					check("typed accessor", aerr)
				}
				check("Payload", perr)
			} else if aerr != nil || perr != nil {
				t.Fatalf("accessors: %v, %v; want no error (only Verify can tell)", aerr, perr)
			}
		})
	}
}

// FuzzOpenLies is FuzzOpen seeded with every lie of internal/hostile applied to the golden file.
func FuzzOpenLies(f *testing.F) {
	g := mldf.Golden(f)
	f.Add(g)
	for _, l := range lies.Lies {
		if b, _, _, err := lies.Apply(g, l); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r, err := mldf.FromBytes("fuzz", b)
		if err == nil {
			mldf.ReadAll(r)
		}
		runtime.ReadMemStats(&after)
		// Allocation must follow the input size, never a header value.
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(64*len(b)+1<<20); got > limit {
			t.Fatalf("allocated %d bytes for a %d-byte file", got, len(b))
		}
	})
}
