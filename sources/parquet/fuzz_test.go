package parquet

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/mldf/convert/sample"
)

// FuzzSource reads arbitrary bytes as a Parquet file, every column as JSON: any outcome but a
// panic or a hang is fine, and errors name the file.
func FuzzSource(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.parquet")
	bad, _ := filepath.Glob("testdata/bad/*.parquet")
	for _, p := range append(seeds, bad...) {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				buf := make([]byte, 1<<20)
				panic("hang:\n" + string(buf[:runtime.Stack(buf, true)]))
			}
		}()
		open := memOpener(map[string][]byte{"fuzz.parquet": data})
		s, _, err := ReadSchema("fuzz.parquet", open)
		if err != nil {
			return
		}
		var cols []Column
		for _, c := range s.Root.Columns() {
			cols = append(cols, Column{Name: c.Name(), Path: c.Name(), As: AsJSON})
			if leaf, _, err := s.npyLeaf(c); err == nil && leaf != nil {
				cols = append(cols, Column{Name: c.Name() + ".npy", Path: c.Name(), As: AsNPY})
			}
		}
		src, err := NewFiles([]string{"fuzz.parquet"}, cols, Options{Workers: 2, BatchRows: 3, MaxPageSize: 1 << 20, Open: open})
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		rows := 0
		_ = src.Run(ctx, func(smp sample.Sample) error {
			rows++
			if rows > 100000 {
				return context.Canceled
			}
			return nil
		})
	})
}
