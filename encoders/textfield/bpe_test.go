package textfield

import (
	"fmt"
	"hash/maphash"
	"testing"
)

// The words of the common form go through fastSegment's byte-pair encoding; on a corpus of
// made-up words (most of them several tokens) and mixed case, the ids must be tiktoken-go's.
func TestFastSegmentsMatchWhole(t *testing.T) {
	docs := zipfCorpus(1)
	for _, n := range Tokenizers() {
		tk, err := NewTokenizer(n)
		if err != nil {
			t.Fatal(err)
		}
		if tk.loadVocab() == nil && fastVocabs[n] {
			t.Fatalf("%s: the rank table did not build", n)
		}
		for _, d := range docs[:min(len(docs), 3000)] {
			got, err := tk.Encode(d, nil)
			want, _ := tk.EncodeWhole(d)
			if err != nil || !slicesEqual(got, want) {
				t.Fatalf("%s: %.80q: ids differ (%v)\n got %v\nwant %v", n, d, err, got, want)
			}
		}
	}
}

func TestFastForm(t *testing.T) {
	for _, c := range []struct {
		seg  string
		end  int
		fast bool
	}{
		{" word", 5, true}, {"Word", 4, true}, {" word,", 5, true}, {" end.", 4, true}, {"x?", 1, true},
		{" ", 0, false}, {"", 0, false}, {" 16", 0, false}, {" don't", 0, false}, {"  two", 0, false},
		{" word..", 0, false}, {" café", 6, true}, {" кап,", 7, true}, {"e\u0301", 0, false}, {" —.", 0, false},
		{" a-b", 0, false}, {" word\n", 0, false}, {",", 0, false}, {" \xff", 0, false}, {" 中文", 7, true},
	} {
		end, ok := fastForm([]byte(c.seg))
		if ok != c.fast || ok && end != c.end {
			t.Errorf("fastForm(%q) = %d, %v; want %d, %v", c.seg, end, ok, c.end, c.fast)
		}
	}
}

func TestIDTable(t *testing.T) {
	seed := maphash.MakeSeed()
	tab := idTable{seed: seed}
	key := func(i int) []byte { // short keys live in their slots, long ones in the slab
		if i%3 == 0 {
			return fmt.Appendf(nil, "a longer key, number %d", i)
		}
		return fmt.Appendf(nil, "key %d", i)
	}
	const n = 5000 // several grows
	for i := range n {
		k := key(i)
		if !tab.put(maphash.Bytes(seed, k), k, []uint32{uint32(i), uint32(i) * 3}[:1+i%2]) {
			t.Fatalf("put %d refused", i)
		}
	}
	if k := key(7); tab.put(maphash.Bytes(seed, k), k, []uint32{1}) {
		t.Fatal("a second put of a key was taken")
	}
	if tab.put(0, make([]byte, maxIDKey+1), nil) {
		t.Fatal("an overlong key was taken")
	}
	if tab.len() != n {
		t.Fatalf("len %d, want %d", tab.len(), n)
	}
	for i := range n {
		k := key(i)
		ids, ok := tab.get(maphash.Bytes(seed, k), k)
		if !ok || len(ids) != 1+i%2 || ids[0] != uint32(i) || len(ids) == 2 && ids[1] != uint32(i)*3 {
			t.Fatalf("get %d = %v, %v", i, ids, ok)
		}
	}
	// The same hash, another key: found by its bytes, not its hash.
	if _, ok := tab.get(maphash.Bytes(seed, key(4)), []byte("key 5")); ok {
		t.Fatal("a key found under another key's hash")
	}
	if _, ok := tab.get(maphash.Bytes(seed, []byte("absent")), []byte("absent")); ok {
		t.Fatal("an absent key found")
	}
}
