package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mldf/convert/encoders"
	"github.com/mldf/convert/pipeline"
	"github.com/mldf/convert/recipe"
)

// mkfifo makes a named pipe at path.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// Every command that opens an input refuses a named pipe where it expects a file, up front:
// open(2) on a FIFO without a writer blocks in the kernel, where no signal reaches it, so a
// command that opened one would never stop (not on SIGTERM either). Each case is run with a
// deadline; a command still blocked after it fails the test (the pipe is then opened for
// writing so the blocked open returns and the test can end).
func TestNamedPipeInputsRefused(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	writeNoiseFolder(t, data, 4, 8)
	good := filepath.Join(dir, "good.mldf")
	if _, stderr, err := run(t, "images", data, good, "--mode", "png"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	// A sharded run's parts and completion records, for merge.
	sharded := filepath.Join(dir, "sharded.mldf")
	for i := range 2 {
		if _, stderr, err := run(t, "images", data, sharded, "--mode", "png", "--shards", "2", "--shard", string(rune('0'+i))); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, stderr)
		}
	}
	fifo := func(name string) string {
		p := filepath.Join(dir, name)
		mkfifo(t, p)
		return p
	}
	cases := []struct {
		name  string
		setup func() []string // the command line, after making its pipes
	}{
		{"inspect", func() []string { return []string{"inspect", fifo("in.mldf")} }},
		{"inspect beton", func() []string { return []string{"inspect", fifo("in.beton")} }},
		{"verify", func() []string { return []string{"verify", fifo("in.mldf")} }},
		{"verify beton", func() []string { return []string{"verify", fifo("in.beton")} }},
		{"cat", func() []string { return []string{"cat", fifo("in.mldf"), "--sample", "0", "--field", "label"} }},
		{"export", func() []string {
			return []string{"export", fifo("in.mldf"), filepath.Join(dir, "exp-folder"), "--format", "folder"}
		}},
		{"export classes.json", func() []string {
			// A file of an older writer, whose class names are in the side file only.
			old := filepath.Join(dir, "old.mldf")
			cl, err := encoders.NewClassLabel("label", []string{"neg", "pos", "mixed"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pipeline.Run(context.Background(), pipeline.Config{Source: oldSource{}, Output: old, PageSize: 4096,
				Fields: []pipeline.Binding{{Field: struct{ encoders.Field }{cl}, Column: "label"}}}); err != nil {
				t.Fatal(err)
			}
			fifo("old.mldf" + recipe.ClassesSuffix)
			return []string{"export", old, filepath.Join(dir, "exp-parquet"), "--format", "parquet"}
		}},
		{"index", func() []string { return []string{"index", fifo("shard.tar"), "-o", filepath.Join(dir, "x.taridx")} }},
		{"validate", func() []string { return []string{"validate", fifo("recipe.yaml")} }},
		{"run", func() []string { return []string{"run", fifo("recipe.yaml")} }},
		{"merge recipe", func() []string { return []string{"merge", fifo("recipe.yaml")} }},
		{"merge part", func() []string {
			return []string{"merge", filepath.Join(dir, "m.mldf"), fifo("m.part-00000-of-00001.mldf")}
		}},
		{"merge done record", func() []string {
			fifo("sharded.part-00001-of-00002.mldf.done")
			return []string{"merge", sharded}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.setup()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				var stdout, stderr bytes.Buffer
				done <- dispatch(ctx, args, &stdout, &stderr)
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second): // a deadlock guard, not a timing assertion
				// Unblock the open(2) the command is stuck in: a reader-writer open of each pipe.
				ents, _ := os.ReadDir(dir)
				for _, e := range ents {
					if e.Type()&os.ModeNamedPipe != 0 {
						if f, err := os.OpenFile(filepath.Join(dir, e.Name()), os.O_RDWR, 0); err == nil {
							f.Close()
						}
					}
				}
				<-done
				t.Fatalf("convert %s: still blocked on a named pipe after 30s", strings.Join(args, " "))
			}
			if err == nil {
				t.Fatalf("convert %s: no error for a named pipe", strings.Join(args, " "))
			}
			if !strings.Contains(err.Error(), "named pipe") {
				t.Errorf("convert %s: %v, want an error saying the input is a named pipe", strings.Join(args, " "), err)
			}
			if code := exitCode(err, ctx.Err() != nil); code != exitError {
				t.Errorf("exit status %d, want %d", code, exitError)
			}
		})
	}
}
