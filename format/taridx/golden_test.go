package taridx

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// goldenRoots are the folders laid out like ../shared/testdata/taridx: golden/, tars/gostd,
// tars/wds. The local copy holds a subset; the shared one, when present, all of them.
var goldenRoots = []string{
	filepath.Join("..", "..", "testdata", "tar", "taridx"),
	filepath.Join("..", "..", "..", "shared", "testdata", "taridx"),
}

type result struct {
	Tar        string   `json:"tar"`
	Fold       string   `json:"fold"`
	TarSources []string `json:"tar_sources"`
	Parse      string   `json:"parse"`
	Rows       int      `json:"rows"`
	NStems     int      `json:"n_stems"`
	Contiguous *bool    `json:"contiguous"`
}

func readResults(t *testing.T, root string) []result {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "golden", "results.jsonl"))
	if err != nil {
		t.Skipf("no goldens in %s: %v", root, err)
	}
	defer f.Close()
	var out []result
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// findTar returns the path of a source tar under root, or "" when the subset lacks it.
func findTar(root, name string) string {
	for _, d := range []string{"gostd", "wds"} {
		p := filepath.Join(root, "tars", d, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

func buildIndex(t *testing.T, shards []string, sorted bool) []byte {
	t.Helper()
	w := NewWriter()
	for _, s := range shards {
		if err := w.AddFile(s); err != nil {
			t.Fatalf("AddFile(%s): %v", s, err)
		}
	}
	if sorted {
		w.EnforceContiguous()
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func compareGolden(t *testing.T, got []byte, golden string) {
	t.Helper()
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("golden: %v", err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: index differs at byte %d (got %d bytes, want %d)", golden, i, len(got), len(want))
	}
	// The reader accepts every golden, including those the reference's own loader rejects.
	ix, err := Parse(want)
	if err != nil {
		t.Fatalf("Parse(%s): %v", golden, err)
	}
	if uint64(len(ix.Rows)) != ix.Header.NRows {
		t.Fatalf("rows %d != n_rows %d", len(ix.Rows), ix.Header.NRows)
	}
}

func TestGoldens(t *testing.T) {
	for i, root := range goldenRoots {
		t.Run([]string{"local", "shared"}[i], func(t *testing.T) {
			results := readResults(t, root)
			ran := 0
			for _, r := range results {
				if r.Fold != "" {
					var shards []string
					for _, s := range r.TarSources {
						p := findTar(root, s)
						if p == "" {
							shards = nil
							break
						}
						shards = append(shards, p)
					}
					golden := filepath.Join(root, "golden", "folds", r.Fold+".taridx")
					if _, err := os.Stat(golden); shards == nil || err != nil {
						continue
					}
					ran++
					t.Run("fold-"+r.Fold, func(t *testing.T) {
						compareGolden(t, buildIndex(t, shards, false), golden)
						if r.Contiguous != nil && !*r.Contiguous {
							compareGolden(t, buildIndex(t, shards, true),
								filepath.Join(root, "golden", "folds", r.Fold+".sorted.taridx"))
						}
					})
					continue
				}
				tar := findTar(root, r.Tar)
				if tar == "" {
					continue
				}
				ran++
				name := r.Tar[:len(r.Tar)-len(".tar")]
				t.Run(name, func(t *testing.T) {
					if r.Parse != "ok" {
						w := NewWriter()
						err := w.AddFile(tar)
						if !errors.Is(err, ErrSize) {
							t.Fatalf("AddFile(%s) = %v, want ErrSize", tar, err)
						}
						if w.Rows() != 0 || w.Shards() != 0 {
							t.Fatalf("failed shard left %d rows, %d shards", w.Rows(), w.Shards())
						}
						t.Logf("rejected: %v", err)
						return
					}
					got := buildIndex(t, []string{tar}, false)
					compareGolden(t, got, filepath.Join(root, "golden", name+".taridx"))
					if r.Contiguous != nil && !*r.Contiguous {
						compareGolden(t, buildIndex(t, []string{tar}, true),
							filepath.Join(root, "golden", name+".sorted.taridx"))
					}
				})
			}
			if ran == 0 {
				t.Skip("no tars present")
			}
			t.Logf("%s: %d goldens checked", root, ran)
		})
	}
}

func TestIndexFilesAtomic(t *testing.T) {
	root := goldenRoots[0]
	dir := t.TempDir()
	out := filepath.Join(dir, "go.taridx")
	shards := []string{
		filepath.Join(root, "tars", "gostd", "gnu.tar"),
		filepath.Join(root, "tars", "gostd", "star.tar"),
		filepath.Join(root, "tars", "gostd", "v7.tar"),
		filepath.Join(root, "tars", "gostd", "xattrs.tar"),
	}
	if err := IndexFiles(shards, out); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	compareGolden(t, got, filepath.Join(root, "golden", "folds", "go.taridx"))
	if err := IndexFilesOpts(shards, out, true); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(out)
	compareGolden(t, got, filepath.Join(root, "golden", "folds", "go.sorted.taridx"))

	// A rejected shard leaves no output and no temporary file behind.
	bad := filepath.Join(dir, "bad.taridx")
	err = IndexFiles([]string{shards[0], filepath.Join(root, "tars", "gostd", "writer-big.tar")}, bad)
	if !errors.Is(err, ErrSize) {
		t.Fatalf("IndexFiles with writer-big.tar = %v, want ErrSize", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("dir holds %d entries after a failed index, want 1", len(ents))
	}
}

func TestIndexFilesMode(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.taridx")
	if err := IndexFiles(nil, out); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(out)
	if err != nil || st.Mode().Perm() != 0o644 || st.Size() != HeaderSize {
		t.Fatalf("stat = %v, %v", st, err)
	}
}
