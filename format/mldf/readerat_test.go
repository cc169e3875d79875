package mldf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
)

// countingReaderAt records the largest single read and the bytes read; it fails reads
// that touch [failFrom, failTo).
type countingReaderAt struct {
	r                io.ReaderAt
	mu               sync.Mutex
	largest, total   int64
	failFrom, failTo int64
}

var errInjected = errors.New("injected read failure")

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.mu.Lock()
	c.largest = max(c.largest, int64(len(p)))
	c.total += int64(len(p))
	c.mu.Unlock()
	if c.failTo > c.failFrom && off < c.failTo && off+int64(len(p)) > c.failFrom {
		return 0, errInjected
	}
	return c.r.ReadAt(p, off)
}

// TestOpenReaderAtRoundTrip reads random files through OpenReaderAt: the same values and
// the same Verify and Describe answers as the mapped file.
func TestOpenReaderAtRoundTrip(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 11))
		pageSize := 4096 << rng.IntN(2)
		descs, samples := randomDataset(rng, pageSize)
		b := buildFile(t, uint32(pageSize), descs, samples, seed%3 != 2)
		mapped, err := FromBytes("m", b)
		if err != nil {
			t.Fatal(err)
		}
		r, err := OpenReaderAt(fmt.Sprintf("s3://b/r%d.mldf", seed), bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if r.Mapped() {
			t.Fatal("a ReaderAt is not mapped")
		}
		checkDataset(t, r, descs, samples)
		want, werr := mapped.Verify()
		got, gerr := r.Verify()
		if werr != nil || gerr != nil {
			t.Fatalf("seed %d: Verify: %v; mapped: %v", seed, gerr, werr)
		}
		w, g := *want, *got
		w.File, g.File = "", ""
		if w != g {
			t.Fatalf("seed %d: Verify %+v %v, mapped %+v %v", seed, got, gerr, want, werr)
		}
		dw, dg := mapped.Describe(), r.Describe()
		dw.File, dg.File = "", ""
		if fmt.Sprint(dw) != fmt.Sprint(dg) {
			t.Fatalf("seed %d: Describe\n%+v\nmapped\n%+v", seed, dg, dw)
		}
		if r.Err() != nil {
			t.Fatal(r.Err())
		}
		r.Close()
	}
}

// TestOpenReaderAtBounded: verifying and describing a file whose tables are several cache
// blocks long reads in blocks, never a table or the file at once.
func TestOpenReaderAtBounded(t *testing.T) {
	const n = 300_000 // 8-byte rows: a 2.4 MB metadata table, a 4.8 MB allocation table
	descs := []FieldDesc{{Name: "x", Type: TypeBytes}}
	samples := make([][]tval, n)
	for i := range samples {
		samples[i] = []tval{{payload: []byte{byte(i), byte(i >> 8), 1}}}
	}
	b := buildFile(t, 4096, descs, samples, true)
	ra := &countingReaderAt{r: bytes.NewReader(b)}
	r, err := OpenReaderAt("s3://b/big.mldf", ra, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rep, err := r.Verify()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Samples != n {
		t.Fatalf("verified %d samples", rep.Samples)
	}
	if d := r.Describe(); d.AllocEntries != n || r.Err() != nil {
		t.Fatalf("Describe: %d entries, %v", d.AllocEntries, r.Err())
	}
	if ra.largest > cacheBlock {
		t.Fatalf("a read of %d bytes: more than one %d-byte block", ra.largest, cacheBlock)
	}
	if len(b) < 4*cacheBlock {
		t.Fatalf("the file (%d bytes) is too small to test the bound", len(b))
	}
}

// TestOpenReaderAtReadError: a read that fails in the tables or the payloads is reported as
// itself, never as a broken rule, by Verify, Sample and Payload.
func TestOpenReaderAtReadError(t *testing.T) {
	descs := []FieldDesc{{Name: "x", Type: TypeBytes}}
	samples := make([][]tval, 5000)
	for i := range samples {
		samples[i] = []tval{{payload: bytes.Repeat([]byte{byte(i)}, 1000)}}
	}
	b := buildFile(t, 4096, descs, samples, true)
	m, err := FromBytes("m", b)
	if err != nil {
		t.Fatal(err)
	}
	h := m.Header()
	for _, c := range []struct {
		name     string
		from, to int64
	}{
		{"payloads", 2<<20 + 10, 2<<20 + 11},
		{"metadata table", int64(h.MetadataPtr) + 100, int64(h.MetadataPtr) + 101},
		{"allocation table", int64(h.AllocTablePtr) + 70000, int64(h.AllocTablePtr) + 70001},
	} {
		t.Run(c.name, func(t *testing.T) {
			ra := &countingReaderAt{r: bytes.NewReader(b), failFrom: c.from, failTo: c.to}
			r, err := OpenReaderAt("s3://b/f.mldf", ra, int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			_, err = r.Verify()
			if !errors.Is(err, errInjected) {
				t.Fatalf("Verify: %v, want the read error", err)
			}
			var re *RuleError
			if errors.As(err, &re) {
				t.Fatalf("Verify reported a rule: %v", err)
			}
			if !bytes.Contains([]byte(err.Error()), []byte("s3://b/f.mldf")) {
				t.Fatalf("error %q does not name the file", err)
			}
		})
	}
}

// TestClosedTables: after Close, the tables read as empty (no panic, no read).
func TestClosedTables(t *testing.T) {
	descs := []FieldDesc{{Name: "x", Type: TypeBytes}}
	b := buildFile(t, 4096, descs, [][]tval{{{payload: []byte("a")}}, {{payload: []byte("b")}}}, true)
	m, err := FromBytes("m", b)
	if err != nil {
		t.Fatal(err)
	}
	r, err := OpenReaderAt("s3://b/x", bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Reader{m, r} {
		x.Close()
		if x.NumAllocEntries() != 0 || x.AllocEntry(0) != (AllocEntry{}) || x.Row(0) != nil || x.Err() != nil {
			t.Fatalf("%s: tables after Close", x.Name())
		}
	}
}

// FuzzOpenReaderAt: a file read through positional reads answers exactly as the same bytes
// in memory: Open, Verify (error and report) and Describe.
func FuzzOpenReaderAt(f *testing.F) {
	g := golden(f)
	f.Add(g)
	f.Add(g[:PreambleSize])
	for _, c := range hostileCases {
		b := c.mut(append([]byte(nil), g...))
		if c.rehash {
			rehash(b)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, merr := FromBytes("f", b)
		r, rerr := OpenReaderAt("f", bytes.NewReader(b), int64(len(b)))
		if (merr == nil) != (rerr == nil) || merr != nil && merr.Error() != rerr.Error() {
			t.Fatalf("open: in memory %v, positional %v", merr, rerr)
		}
		if merr != nil {
			return
		}
		defer r.Close()
		mrep, merr := m.Verify()
		rrep, rerr := r.Verify()
		if fmt.Sprint(merr) != fmt.Sprint(rerr) || fmt.Sprintf("%+v", mrep) != fmt.Sprintf("%+v", rrep) {
			t.Fatalf("verify: in memory %+v %v, positional %+v %v", mrep, merr, rrep, rerr)
		}
		if fmt.Sprintf("%+v", m.Describe()) != fmt.Sprintf("%+v", r.Describe()) || r.Err() != nil {
			t.Fatalf("describe differs (%v)", r.Err())
		}
	})
}
