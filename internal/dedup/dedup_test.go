package dedup

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestSumFraming(t *testing.T) {
	cases := []struct {
		name string
		a, b [][]byte
		same bool
	}{
		{"equal", [][]byte{[]byte("ab")}, [][]byte{[]byte("ab")}, true},
		{"different", [][]byte{[]byte("ab")}, [][]byte{[]byte("ac")}, false},
		{"split moved", [][]byte{[]byte("ab"), []byte("c")}, [][]byte{[]byte("a"), []byte("bc")}, false},
		{"empty parts", [][]byte{nil, nil}, [][]byte{nil}, false},
		{"empty equal", [][]byte{{}}, [][]byte{nil}, true},
		{"fields swapped", [][]byte{[]byte("x"), []byte("y")}, [][]byte{[]byte("y"), []byte("x")}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Sum(c.a...) == Sum(c.b...); got != c.same {
				t.Fatalf("Sum(%q) == Sum(%q) is %v", c.a, c.b, got)
			}
		})
	}
}

// Origins are kept whatever their form: a prefix and a number are interned, the rest is
// written to the origins file (and so are the prefixes beyond the budget).
func TestOrigins(t *testing.T) {
	long := strings.Repeat("x", 20<<10)
	origins := []string{"a.jsonl:1", "a.jsonl:0", "a.jsonl:007", "a.jsonl:1234567890123456789", "b", "", "7",
		"a.jsonl:2", long, long + ":3", strings.Repeat("y", MaxOrigin+10), "s3://b/k.parquet#2/5", "é:9"}
	tab, err := New(Config{Dir: t.TempDir(), Memory: MinMemory})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	for i, o := range origins {
		if _, _, err := tab.Check(Sum([]byte(fmt.Sprint(i))), int64(i), o); err != nil {
			t.Fatal(err)
		}
	}
	for i, o := range origins {
		f, dup, err := tab.Check(Sum([]byte(fmt.Sprint(i))), int64(100+i), "again")
		want := o[:min(len(o), MaxOrigin)]
		if err != nil || !dup || f.Index != int64(i) || f.Origin != want {
			t.Fatalf("origin %d: %v, %v, %.40q (want %.40q)", i, dup, err, f.Origin, want)
		}
	}
}

func TestCheck(t *testing.T) {
	tab, err := New(Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	steps := []struct {
		payload string
		index   int64
		origin  string
		dup     bool
		first   First
	}{
		{"a", 0, "x.jsonl:1", false, First{}},
		{"b", 1, "x.jsonl:2", false, First{}},
		{"a", 2, "y.jsonl:1", true, First{0, "x.jsonl:1"}},
		{"", 3, "", false, First{}},
		{"", 4, "z", true, First{3, ""}},
		{"b", 5, "y.jsonl:3", true, First{1, "x.jsonl:2"}},
		{"a", 6, "y.jsonl:4", true, First{0, "x.jsonl:1"}},
	}
	for _, s := range steps {
		f, dup, err := tab.Check(Sum([]byte(s.payload)), s.index, s.origin)
		if err != nil || dup != s.dup || f != s.first {
			t.Fatalf("Check(%q, %d) = %+v, %v, %v; want %+v, %v", s.payload, s.index, f, dup, err, s.first, s.dup)
		}
	}
	if tab.Len() != 3 || tab.Duplicates() != 4 {
		t.Fatalf("Len %d, Duplicates %d", tab.Len(), tab.Duplicates())
	}
	if _, _, err := tab.Check(Sum(nil), -1, ""); err == nil {
		t.Fatal("negative index accepted")
	}
}

// The table answers exactly like a map of every hash, whatever the layout the entries reach
// (memtable, flushed runs, merged runs, runs read with a whole-run binary search when the
// index budget is spent), and its memory stays under the cap, at the same peak for 3x the
// samples.
func TestExactAndMemoryCap(t *testing.T) {
	cases := []struct {
		name       string
		n          int64
		noFanOut   bool // no index budget: every run one bucket, found by binary search
		wantMerges bool // enough flushes for merges
		heavy      bool // left out under the race detector (seconds there)
	}{
		{name: "memtable only", n: 2000},
		{name: "runs merged", n: 20000, wantMerges: true},
		{name: "3x the samples", n: 60000, wantMerges: true, heavy: true},
		{name: "no fan-out", n: 20000, noFanOut: true, wantMerges: true, heavy: true},
	}
	peaks := map[int64]int64{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.heavy && raceOn {
				t.Skip("seconds under the race detector; the plain pass runs it")
			}
			tab, err := New(Config{Dir: t.TempDir(), Memory: MinMemory})
			if err != nil {
				t.Fatal(err)
			}
			defer tab.Close()
			if c.noFanOut {
				tab.fanBudget = 0
			}
			// Sample i repeats sample first(i) when i%5 == 4: a duplicate spread over the past.
			first := func(i int64) int64 { return (i * 7919 % 1000003) * i / 1000003 / 5 * 5 }
			for i := range c.n {
				k := i
				if i%5 == 4 {
					k = first(i)
				}
				f, dup, err := tab.Check(Sum(fmt.Appendf(nil, "p%d", k)), i, fmt.Sprint("o", i))
				if err != nil {
					t.Fatal(err)
				}
				if dup != (k != i) || dup && f != (First{Index: k, Origin: fmt.Sprint("o", k)}) {
					t.Fatalf("sample %d (a copy of %d): %+v, %v", i, k, f, dup)
				}
			}
			st := tab.Stats()
			if st.Entries != c.n-c.n/5 || st.Duplicates != c.n/5 {
				t.Fatalf("stats %+v", st)
			}
			if st.PeakMemory > st.MemoryCap || st.MemoryCap != MinMemory {
				t.Fatalf("peak memory %d over the cap %d", st.PeakMemory, st.MemoryCap)
			}
			if c.wantMerges && (st.Flushes < fanIn || st.Merges == 0) {
				t.Fatalf("%d flushes, %d merges: the test does not reach the runs", st.Flushes, st.Merges)
			}
			// Only the fan-outs grow with the count, by far less than the cap.
			if c.wantMerges && !c.noFanOut {
				peaks[c.n] = st.PeakMemory
			}
			t.Logf("%+v", st)
		})
	}
	if a, b := peaks[20000], peaks[60000]; !raceOn && (a == 0 || b-a > MinMemory/64) {
		t.Fatalf("peak memory %d at 20000 samples, %d at 60000", a, b)
	}
}

// Expected keeps a small table small.
func TestExpectedSizes(t *testing.T) {
	tab, err := New(Config{Dir: t.TempDir(), Expected: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	if m := tab.Stats().Memory; m > 1<<20 {
		t.Fatalf("%d bytes for 1000 expected samples", m)
	}
	for i := range int64(3000) { // more than expected: fine, it flushes
		if _, dup, err := tab.Check(Sum(fmt.Appendf(nil, "%d", i%2000)), i, ""); err != nil || dup != (i >= 2000) {
			t.Fatalf("sample %d: %v, %v", i, dup, err)
		}
	}
}

func TestConfigAndClose(t *testing.T) {
	dir := t.TempDir()
	if _, err := New(Config{Dir: dir, Memory: 1000}); err == nil {
		t.Fatal("a resident cap below the minimum accepted")
	}
	if _, err := New(Config{Dir: dir + "/missing"}); err == nil {
		t.Fatal("a missing directory accepted")
	}
	tab, err := New(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tab.Check(Hash{}, 0, ""); err != ErrClosed {
		t.Fatalf("Check after Close: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("files left behind: %v", left)
	}
}

// BenchmarkCheck checks DEDUP_N hashes (default 10^6; run it with -benchtime=1x), one in
// ten a duplicate of an earlier one, with the default cap, and reports the table's counters.
func BenchmarkCheck(b *testing.B) {
	n := int64(1000000)
	if v, err := strconv.ParseInt(os.Getenv("DEDUP_N"), 10, 64); err == nil && v > 0 {
		n = v
	}
	for b.Loop() {
		tab, err := New(Config{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		k := NewHasher()
		var buf [8]byte
		for i := range n {
			v := i
			if i%10 == 9 {
				v = (i * 7919 % 1000003) * i / 1000003 / 10 * 10
			}
			k.Reset()
			binary.LittleEndian.PutUint64(buf[:], uint64(v))
			k.Add(buf[:])
			if _, _, err := tab.Check(k.Sum(), i, "origin"); err != nil {
				b.Fatal(err)
			}
		}
		st := tab.Stats()
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/check")
		b.ReportMetric(float64(st.PeakMemory), "peak-mem-B")
		b.ReportMetric(float64(st.RunReads), "run-reads")
		b.ReportMetric(float64(st.Maybe-st.Duplicates), "filter-false-maybes")
		tab.Close()
	}
}
