package tarsrc

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/format/taridx"
)

// TestRealShardsAgreeWithIndex walks the real WebDataset test shards and checks every sample
// value against the member the TARIDX index locates by the same stem and extension.
func TestRealShardsAgreeWithIndex(t *testing.T) {
	var shards []string
	for _, p := range []string{
		filepath.Join("..", "..", "testdata", "tar", "taridx", "tars", "wds", "compressed.tar"),
		filepath.Join("..", "..", "..", "shared", "testdata", "taridx", "tars", "wds", "sample.tar"),
		filepath.Join("..", "..", "..", "shared", "testdata", "taridx", "tars", "wds", "mpdata.tar"),
	} {
		if _, err := os.Stat(p); err == nil {
			shards = append(shards, p)
		}
	}
	if len(shards) == 0 {
		t.Skip("no WebDataset shards found")
	}
	dir := t.TempDir()
	idx := filepath.Join(dir, "fold.taridx")
	if err := taridx.IndexFiles(shards, idx); err != nil {
		t.Fatal(err)
	}
	r, err := taridx.Open(idx, shards)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	src, err := New(shards, Options{Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, src)
	members := 0
	for _, s := range got {
		if s.Err != nil {
			t.Fatalf("%s: %v", s.Origin, s.Err)
		}
		fid := -1
		for i, sh := range shards {
			if len(s.Origin) > len(sh) && s.Origin[:len(sh)+1] == sh+":" {
				fid = i
			}
		}
		stem := filepath.Base(s.Key)
		for _, c := range s.Values {
			ext, v := c.Name, c.Value
			found := false
			for _, row := range r.Find(stem) {
				if int(r.Rows[row].FID) != fid || r.Ext(row) != ext {
					continue
				}
				b, err := r.ReadMember(row)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b, v.Bytes) {
					t.Fatalf("%s.%s: payload differs from the indexed member", s.Origin, ext)
				}
				found = true
			}
			if !found {
				t.Fatalf("%s.%s: not in the index", s.Origin, ext)
			}
			members++
		}
	}
	t.Logf("%d samples, %d members checked against %d index rows", len(got), members, len(r.Rows))
	// sample.tgz is sample.tar gzipped: the same samples.
	tgz := filepath.Join("..", "..", "..", "shared", "testdata", "taridx", "tars", "wds", "sample.tgz")
	if _, err := os.Stat(tgz); err == nil {
		a, _ := New([]string{tgz}, Options{})
		b, _ := New([]string{shards[1]}, Options{})
		ga, gb := collect(t, a), collect(t, b)
		if len(ga) != 90 || len(ga) != len(gb) {
			t.Fatalf("sample.tgz: %d samples, sample.tar: %d", len(ga), len(gb))
		}
		for i := range ga {
			if ga[i].Key != gb[i].Key || !bytes.Equal(ga[i].Value("png").Bytes, gb[i].Value("png").Bytes) {
				t.Fatalf("sample %d differs between .tgz and .tar", i)
			}
		}
	}
}
