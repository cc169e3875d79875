package listing

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

type rec struct{ key, data string }

func build(t *testing.T, o Options, recs []rec) *List {
	t.Helper()
	b := NewBuilder(o)
	for _, r := range recs {
		if err := b.Add([]byte(r.key), []byte(r.data)); err != nil {
			t.Fatal(err)
		}
	}
	l, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

func all(t *testing.T, l *List) []rec {
	t.Helper()
	var out []rec
	if err := l.Each(func(i int64, k, d []byte) error {
		if i != int64(len(out)) {
			t.Fatalf("index %d, want %d", i, len(out))
		}
		out = append(out, rec{string(k), string(d)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// want sorts recs by key, stably (equal keys keep the order they were added in).
func want(recs []rec, unsorted bool) []rec {
	w := slices.Clone(recs)
	if unsorted {
		for i := range w {
			w[i].key = ""
		}
		return w
	}
	slices.SortStableFunc(w, func(a, b rec) int { return strings.Compare(a.key, b.key) })
	return w
}

func genRecs(n int, seed uint64) []rec {
	r := rand.New(rand.NewPCG(seed, 1))
	recs := make([]rec, n)
	for i := range recs {
		// Few distinct keys, so that equal keys are common; data records the order.
		recs[i] = rec{fmt.Sprintf("k%03d/%s", r.IntN(300), strings.Repeat("x", r.IntN(20))), fmt.Sprintf("d%06d", i)}
	}
	return recs
}

// TestOrder: in memory and spilled (several runs merged), sorted and unsorted, the records
// come back in key order, equal keys in the order they were added.
func TestOrder(t *testing.T) {
	recs := genRecs(20000, 1)
	for _, o := range []Options{{}, {MemLimit: 4096}, {MemLimit: 100000}, {Unsorted: true}, {Unsorted: true, MemLimit: 5000}} {
		o.Dir = t.TempDir()
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			l := build(t, o, recs)
			if l.Len() != int64(len(recs)) {
				t.Fatalf("Len %d", l.Len())
			}
			if got, w := all(t, l), want(recs, o.Unsorted); !slices.Equal(got, w) {
				t.Fatalf("records differ from the sorted input")
			}
			// Slices at and off the index's positions.
			w := want(recs, o.Unsorted)
			for _, c := range [][2]int64{{0, 0}, {0, 1}, {4095, 4097}, {4096, 8192}, {5000, 20000}, {19999, 20000}, {123, 9000}} {
				s, err := l.Slice(c[0], c[1])
				if err != nil {
					t.Fatal(err)
				}
				if got := all(t, s); !slices.Equal(got, w[c[0]:c[1]]) {
					t.Fatalf("slice %v differs", c)
				}
				// A slice of a slice.
				if c[1]-c[0] > 2 {
					ss, err := s.Slice(1, c[1]-c[0]-1)
					if err != nil {
						t.Fatal(err)
					}
					if got := all(t, ss); !slices.Equal(got, w[c[0]+1:c[1]-1]) {
						t.Fatalf("slice of slice %v differs", c)
					}
				}
			}
			if entries, _ := os.ReadDir(o.Dir); len(entries) != 0 {
				t.Fatalf("temporary files left with names: %v", entries)
			}
		})
	}
}

func TestEdges(t *testing.T) {
	l := build(t, Options{}, nil)
	if l.Len() != 0 || len(all(t, l)) != 0 {
		t.Fatal("empty list")
	}
	l = build(t, Options{MemLimit: 10, Dir: t.TempDir()}, []rec{{"b", ""}, {"", "empty key"}, {"a", strings.Repeat("z", 100000)}})
	got := all(t, l)
	if len(got) != 3 || got[0].data != "empty key" || got[1].key != "a" || len(got[1].data) != 100000 || got[2].key != "b" {
		t.Fatalf("got %v", got)
	}
	if _, err := l.Slice(2, 4); err == nil {
		t.Fatal("slice past the end accepted")
	}
	if _, err := l.Slice(-1, 1); err == nil {
		t.Fatal("negative slice accepted")
	}
	stop := errors.New("stop")
	n := 0
	if err := l.Each(func(int64, []byte, []byte) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("Each did not stop at fn's error: %v after %d", err, n)
	}
	l.Close()
	if err := l.Each(func(int64, []byte, []byte) error { return nil }); err == nil {
		t.Fatal("read after Close succeeded")
	}
}

// TestBadDir: a temporary folder that cannot be written is an error from Add or Finish.
func TestBadDir(t *testing.T) {
	b := NewBuilder(Options{Dir: "/nonexistent/listing", MemLimit: 10})
	err := b.Add([]byte("k"), make([]byte, 100))
	if err == nil {
		_, err = b.Finish()
	}
	if err == nil || !strings.Contains(err.Error(), "temporary file") {
		t.Fatalf("got %v", err)
	}
}
