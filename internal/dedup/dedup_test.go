package dedup

import (
	"fmt"
	"os"
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

// The table grows by rehashing, keeps every entry, and its mapped part stays under the
// configured cap however many samples it holds.
func TestGrowAndResidentCap(t *testing.T) {
	const n = 100000                                                              // 2^18 slots after growing: 8 MiB of table, the cap is 1 MiB
	tab, err := New(Config{Dir: t.TempDir(), Resident: MinResident, Expected: 1}) // a small table, grown
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	for i := range int64(n) {
		if _, dup, err := tab.Check(Sum(fmt.Appendf(nil, "p%d", i)), i, fmt.Sprint("o", i)); err != nil || dup {
			t.Fatalf("sample %d: dup %v, err %v", i, dup, err)
		}
	}
	if tab.Slots()*slotSize <= uint64(tab.ResidentCap()) {
		t.Fatalf("table of %d slots fits the cap: the test does not test the cap", tab.Slots())
	}
	for i := int64(0); i < n; i += 997 {
		f, dup, err := tab.Check(Sum(fmt.Appendf(nil, "p%d", i)), n+i, "again")
		if err != nil || !dup || f.Index != i || f.Origin != fmt.Sprint("o", i) {
			t.Fatalf("sample %d again: %+v %v %v", i, f, dup, err)
		}
	}
	if tab.Len() != n {
		t.Fatalf("Len %d", tab.Len())
	}
	if tab.PeakResident() > tab.ResidentCap() || tab.PeakResident() == 0 {
		t.Fatalf("peak resident %d, cap %d", tab.PeakResident(), tab.ResidentCap())
	}
}

func TestSizedFromExpected(t *testing.T) {
	tab, err := New(Config{Dir: t.TempDir(), Expected: 100000})
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	if s := tab.Slots(); s*5/8 < 100000 || s > 4*100000 {
		t.Fatalf("%d slots for 100000 expected", s)
	}
}

func TestConfigAndClose(t *testing.T) {
	dir := t.TempDir()
	if _, err := New(Config{Dir: dir, Resident: 1000}); err == nil {
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

func BenchmarkCheck(b *testing.B) {
	tab, err := New(Config{Dir: b.TempDir(), Expected: int64(b.N)})
	if err != nil {
		b.Fatal(err)
	}
	defer tab.Close()
	k := NewHasher()
	var buf [8]byte
	for i := range b.N {
		k.Reset()
		buf[0], buf[1], buf[2], buf[3] = byte(i), byte(i>>8), byte(i>>16), byte(i>>24)
		k.Add(buf[:])
		if _, _, err := tab.Check(k.Sum(), int64(i), "origin"); err != nil {
			b.Fatal(err)
		}
	}
}
