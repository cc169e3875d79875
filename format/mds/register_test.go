package mds

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mldf/convert/format"
)

// TestFile: the MDS fixture opens as a format.File by its directory; its description, every
// sample and its verification agree with the index, in text and JSON.
func TestFile(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "mds", "text")
	f, ok := format.DirFormat(dir)
	if !ok || f.Name != "mds" {
		t.Fatalf("DirFormat(%s) = %q", dir, f.Name)
	}
	file, err := f.OpenPath(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	d, err := file.Describe()
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := d.WriteText(&text); err != nil || !strings.Contains(text.String(), "8 in 4 shards") {
		t.Errorf("describe: %q %v", text.String(), err)
	}
	for i := range int64(8) {
		s, err := file.Sample(i)
		if err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
		b, err := json.Marshal(s)
		if err != nil || !bytes.Contains(b, []byte(`"text":"sample number`)) || !bytes.Contains(b, []byte(`"number":`)) {
			t.Errorf("sample %d: %s %v", i, b, err)
		}
	}
	if _, err := file.Sample(8); err == nil {
		t.Error("sample 8 of 8: no error")
	}
	rep, err := file.Verify(context.Background(), format.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(rep); !bytes.Contains(b, []byte(`"num_samples":8`)) || !bytes.Contains(b, []byte(`"num_shards":4`)) {
		t.Errorf("verify: %s", b)
	}
}

// TestVerifyCorrupt: verify of a dataset whose shard is damaged fails naming the shard,
// without a panic.
func TestVerifyCorrupt(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "mds", "text")
	for _, tc := range []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"size past the sample", func(b []byte) []byte {
			at := binary.LittleEndian.Uint32(b[4:]) // the first sample's sizes
			binary.LittleEndian.PutUint32(b[at:], 1<<20)
			return b
		}},
		{"truncated", func(b []byte) []byte { return b[:len(b)-5] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ents, err := os.ReadDir(src)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				b, err := os.ReadFile(filepath.Join(src, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if e.Name() == "shard.00002.mds" {
					b = tc.damage(b)
				}
				if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			f, err := OpenDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Verify(context.Background(), format.VerifyOptions{})
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "shard.00002.mds") {
				t.Fatalf("verify: %v, want ErrCorrupt naming shard.00002.mds", err)
			}
		})
	}
}
