package dedup

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// answer is what Check said about one sample.
type answer struct {
	dup   bool
	first First
}

// durableStream is n samples with about 10% duplicates and origins of every kind: interned
// (a file and a line), one per sample (beyond the prefix budget: in the origins file) and
// long ones.
func durableStream(n int) ([]Hash, []string) {
	rng := rand.New(rand.NewPCG(1, 2))
	hs := make([]Hash, n)
	os := make([]string, n)
	for i := range n {
		if i > 10 && rng.IntN(10) == 0 {
			hs[i] = hs[rng.IntN(i)]
		} else {
			hs[i] = Sum([]byte(fmt.Sprint("sample", i)))
		}
		switch i % 3 {
		case 0:
			os[i] = fmt.Sprintf("in-%d.jsonl:%d", i%5, i)
		case 1:
			os[i] = fmt.Sprintf("img/%d.png", i) // a prefix each: the budget runs out
		default:
			os[i] = strings.Repeat("d", i%300) + ".bin"
		}
	}
	return hs, os
}

func check(t *testing.T, tab *Table, hs []Hash, os []string, i int) answer {
	t.Helper()
	f, dup, err := tab.Check(hs[i], int64(i), os[i])
	if err != nil {
		t.Fatalf("sample %d: %v", i, err)
	}
	return answer{dup, f}
}

// A durable table checkpointed, killed (Keep) some samples later and reopened from its last
// checkpoint gives the answers of a table that ran through, whatever flushes and merges
// happened between.
func TestDurableReopen(t *testing.T) {
	n := 60000
	if raceOn {
		n = 20000
	}
	hs, origins := durableStream(n)
	cfg := Config{Memory: MinMemory, Expected: int64(n)}
	ref, err := New(Config{Dir: t.TempDir(), Memory: cfg.Memory, Expected: cfg.Expected})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]answer, n)
	for i := range n {
		want[i] = check(t, ref, hs, origins, i)
	}
	refStats := ref.Stats()
	ref.Close()

	dir := t.TempDir()
	cfg.Durable = filepath.Join(dir, ".out.mldf.partial-dedup")
	tab, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var rec []byte // the last recorded state
	at, i, kills := 0, 0, 0
	rng := rand.New(rand.NewPCG(3, 4))
	for i < n {
		// Go on past the checkpoint; checkpoint now and then; be killed now and then.
		step := 1 + rng.IntN(2500)
		for ; i < n && step > 0; i, step = i+1, step-1 {
			if got := check(t, tab, hs, origins, i); got != want[i] {
				t.Fatalf("sample %d (after %d kills): %+v, want %+v", i, kills, got, want[i])
			}
		}
		if rng.IntN(3) > 0 {
			st, err := tab.Checkpoint()
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Sync(); err != nil {
				t.Fatal(err)
			}
			rec, _ = json.Marshal(st)
			at = i
			for _, r := range st.Retired() {
				if err := os.Remove(r); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		if rec == nil || i >= n {
			continue
		}
		if err := tab.Keep(); err != nil {
			t.Fatal(err)
		}
		var st State
		if err := json.Unmarshal(rec, &st); err != nil {
			t.Fatal(err)
		}
		if tab, err = Reopen(cfg, &st); err != nil {
			t.Fatalf("reopen at %d: %v", at, err)
		}
		i = at
		kills++
	}
	if kills == 0 {
		t.Fatal("no kill")
	}
	s := tab.Stats()
	if s.Entries != refStats.Entries || s.Duplicates != refStats.Duplicates || s.PeakMemory > s.MemoryCap {
		t.Fatalf("stats %+v, want entries %d duplicates %d", s, refStats.Entries, refStats.Duplicates)
	}
	if err := tab.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("Close left %d files, such as %s", len(left), left[0].Name())
	}
	t.Logf("%d samples, %d kills", n, kills)
}

// A damaged or missing file of a durable table, or a state that does not match its files,
// is refused with ErrDamaged and the file's name; nothing is reopened.
func TestReopenDamaged(t *testing.T) {
	const run1 = "RUN" // the state's first run
	path := func(dir string, st *State) string { return filepath.Join(dir, st.Runs[0].Name) }
	flip := func(path string, at int64) func(*testing.T, string, *State) {
		return func(t *testing.T, dir string, st *State) {
			if path == run1 {
				path = st.Runs[0].Name
			}
			f, err := os.OpenFile(filepath.Join(dir, path), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			b := []byte{0}
			f.ReadAt(b, at)
			b[0] ^= 0x40
			f.WriteAt(b, at)
		}
	}
	cases := []struct {
		name  string
		harm  func(t *testing.T, dir string, st *State)
		names string
	}{
		{"run removed", func(t *testing.T, dir string, st *State) { os.Remove(path(dir, st)) }, run1},
		{"run cut", func(t *testing.T, dir string, st *State) { os.Truncate(path(dir, st), 64) }, run1},
		{"run longer", func(t *testing.T, dir string, st *State) { os.Truncate(path(dir, st), st.Runs[0].Size+32) }, run1},
		{"run bit flipped", flip(run1, 100), run1},
		{"origins removed", func(t *testing.T, dir string, _ *State) { os.Remove(filepath.Join(dir, ".o.partial-dedup-origins")) }, "origins"},
		{"origins cut", func(t *testing.T, dir string, _ *State) {
			os.Truncate(filepath.Join(dir, ".o.partial-dedup-origins"), 3)
		}, "origins"},
		{"origins bit flipped", flip(".o.partial-dedup-origins", 5), "origins"},
		{"prefixes bit flipped", flip(".o.partial-dedup-prefixes", 1), "prefixes"},
		{"prefixes removed", func(t *testing.T, dir string, _ *State) { os.Remove(filepath.Join(dir, ".o.partial-dedup-prefixes")) }, "prefixes"},
		{"state names another file", func(t *testing.T, _ string, st *State) { st.Runs[0].Name = "../x-run-1" }, "x-run-1"},
		{"state names a run twice", func(t *testing.T, _ string, st *State) { st.Runs = append(st.Runs, st.Runs[0]) }, run1},
		{"state counts other entries", func(t *testing.T, _ string, st *State) { st.Entries++ }, ".o.partial-dedup"},
		{"state counts other prefixes", func(t *testing.T, _ string, st *State) { st.NPrefixes-- }, "prefixes"},
		{"state with a negative count", func(t *testing.T, _ string, st *State) { st.Duplicates = -1 }, ".o.partial-dedup"},
	}
	hs, origins := durableStream(12000)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := Config{Memory: MinMemory, Expected: 12000, Durable: filepath.Join(dir, ".o.partial-dedup")}
			tab, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var st *State
			for i := range hs {
				check(t, tab, hs, origins, i)
				if i == len(hs)-500 || i == len(hs)-1 {
					if st, err = tab.Checkpoint(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if len(st.Runs) < 2 || st.Origins.Size == 0 || st.Prefixes.Size == 0 {
				t.Fatalf("state %+v: want two runs or more, origins and prefixes", st)
			}
			if err := tab.Keep(); err != nil {
				t.Fatal(err)
			}
			c.harm(t, dir, st)
			tab, err = Reopen(cfg, st)
			if err == nil {
				tab.Close()
				t.Fatal("reopened")
			}
			names := c.names
			if names == run1 {
				names = st.Runs[0].Name
			}
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), names) {
				t.Fatalf("error %q: want ErrDamaged naming %s", err, names)
			}
		})
	}
}

// A table that is not durable cannot checkpoint; a durable one removes every file on Close,
// including those of an earlier table of its name.
func TestDurableFiles(t *testing.T) {
	tab, err := New(Config{Dir: t.TempDir(), Memory: MinMemory})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Checkpoint(); !errors.Is(err, ErrNotDurable) {
		t.Fatalf("Checkpoint of a table that is not durable: %v", err)
	}
	tab.Close()
	dir := t.TempDir()
	stale := filepath.Join(dir, ".o-run-9")
	os.WriteFile(stale, []byte("x"), 0o600)
	tab, err = New(Config{Memory: MinMemory, Durable: filepath.Join(dir, ".o")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a stale run of the name stays: %v", err)
	}
	if err := tab.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("Close left %s", left[0].Name())
	}
}

// FuzzReopenPrefixes: any bytes as the prefixes file of a state (its CRC matching, as a
// file written by another tool might) are loaded or refused with ErrDamaged; never a panic.
func FuzzReopenPrefixes(f *testing.F) {
	f.Add([]byte("\x07a.jsonl\x03b:x"), 2)
	f.Add([]byte("\x07a.jsonl\x07a.jsonl"), 2)
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"), 1)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		dir := t.TempDir()
		cfg := Config{Memory: MinMemory, Expected: 10, Durable: filepath.Join(dir, ".o")}
		if err := os.WriteFile(cfg.Durable+prefixesSuffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg.Durable+originsSuffix, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		st := &State{Origins: FileState{Name: ".o" + originsSuffix},
			Prefixes:  FileState{Name: ".o" + prefixesSuffix, Size: int64(len(b)), CRC: crc32.Checksum(b, castagnoli)},
			NPrefixes: n}
		tab, err := Reopen(cfg, st)
		if err != nil {
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("refused without ErrDamaged: %v", err)
			}
			return
		}
		defer tab.Close()
		if len(tab.prefixes) != n {
			t.Fatalf("%d prefixes loaded, the state says %d", len(tab.prefixes), n)
		}
	})
}
