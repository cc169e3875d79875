package taridx

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func addGoldenSeeds(f *testing.F, dir, ext string) {
	paths, _ := filepath.Glob(filepath.Join(dir, "*"+ext))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
}

// FuzzParse checks that the index reader never panics, and that whatever it accepts is
// self-consistent. Parse allocates only after the row count matches the file length.
func FuzzParse(f *testing.F) {
	f.Add(validIndex())
	f.Add([]byte(Magic))
	addGoldenSeeds(f, filepath.Join(goldenRoots[0], "golden"), ".taridx")
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := Parse(b)
		if err != nil {
			if ix != nil {
				t.Fatal("index returned with an error")
			}
			return
		}
		if uint64(len(ix.Rows)) != ix.Header.NRows || uint32(len(ix.Exts)) != ix.Header.NExt ||
			uint32(len(ix.CrashStems)) != ix.Header.NCrash {
			t.Fatalf("inconsistent index accepted: %+v", ix.Header)
		}
		for _, r := range ix.Rows {
			_ = ix.Exts[r.ExtID]
		}
		d := ix.Describe()
		if d.Rows != uint64(len(ix.Rows)) {
			t.Fatal("describe rows")
		}
	})
}

// FuzzAddShard walks arbitrary bytes as a tar shard: no panic, failures are ErrSize or
// ErrName and leave the Writer unchanged, and every index written can be parsed back.
func FuzzAddShard(f *testing.F) {
	addGoldenSeeds(f, filepath.Join(goldenRoots[0], "tars", "gostd"), ".tar")
	addGoldenSeeds(f, filepath.Join(goldenRoots[0], "tars", "wds"), ".tar")
	f.Add(make([]byte, 512))
	f.Fuzz(func(t *testing.T, b []byte) {
		w := NewWriter()
		good := validTar()
		if err := w.AddShard(bytes.NewReader(good), int64(len(good)), "good"); err != nil {
			t.Fatal(err)
		}
		before := w.Header()
		err := w.AddShard(bytes.NewReader(b), int64(len(b)), "fuzz")
		if err != nil {
			if !errors.Is(err, ErrSize) && !errors.Is(err, ErrName) && !errors.Is(err, ErrCompressed) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			if w.Header() != before || w.Shards() != 1 {
				t.Fatalf("failed shard changed the writer: %+v", w.Header())
			}
			return
		}
		for _, r := range w.rows {
			if r.Offset%BlockSize != 0 || r.FID == 1 && r.Offset+BlockSize > uint64(len(b)) {
				t.Fatalf("row %+v outside the shard", r)
			}
		}
		var out bytes.Buffer
		if _, err := w.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		ix, err := Parse(out.Bytes())
		if err != nil {
			t.Fatalf("own index does not parse: %v", err)
		}
		if len(ix.Rows) != w.Rows() {
			t.Fatalf("rows %d, wrote %d", len(ix.Rows), w.Rows())
		}
	})
}

// validTar is a two-member ustar archive built by hand.
func validTar() []byte {
	var b []byte
	for _, name := range []string{"k.jpg", "k.cls"} {
		h := make([]byte, BlockSize)
		copy(h, name)
		copy(h[124:], "00000000003\x00")
		b = append(b, h...)
		b = append(b, make([]byte, BlockSize)...)
	}
	return append(b, make([]byte, 2*BlockSize)...)
}
