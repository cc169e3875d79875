package pagewriter

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sync/errgroup"
)

// The write-behind is a hint to the kernel: with it on (the default) or off, concurrent
// writes at disjoint offsets, many times writeBehindStep in all, give the same file.
func TestLocalFileWriteBehind(t *testing.T) {
	const piece, pieces = 1 << 20, 3 * writeBehindStep >> 20
	want := make([]byte, piece*pieces)
	for i := range want {
		want[i] = byte(i*7 + i>>20)
	}
	for _, opt := range []FileOptions{{}, {NoWriteBehind: true}, {Preallocate: true}} {
		path := filepath.Join(t.TempDir(), "out")
		s, err := LocalFile(path, opt)(SinkLayout{})
		if err != nil {
			t.Fatal(err)
		}
		var g errgroup.Group
		for w := range 2 {
			g.Go(func() error {
				for k := pieces - 1 - w; k >= 0; k -= 2 { // from the end: out of order
					if _, err := s.WriteAt(want[k*piece:(k+1)*piece], int64(k*piece)); err != nil {
						return err
					}
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(int64(len(want))); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%+v: the file differs from what was written", opt)
		}
	}
}
