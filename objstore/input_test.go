package objstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mldf/convert/internal/inputfile"
)

// TestOpenInputsLocal: OpenStream and OpenRegular read plain paths and file:// URLs, and a
// local failure is the operating system's error naming the path (as a local input's errors
// have always read), not an *Error.
func TestOpenInputsLocal(t *testing.T) {
	ctx := context.Background()
	c := New()
	defer c.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.bin")
	want := testData(10_001, 3)
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{path, "file://" + path} {
		rc, err := c.OpenStream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("OpenStream %s: %d bytes, %v", name, len(got), err)
		}
		r, err := c.OpenRegular(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		got = make([]byte, r.Size())
		if _, err := r.ReadAt(got, 0); err != nil || !bytes.Equal(got, want) || r.File() == nil {
			t.Fatalf("OpenRegular %s: %v", name, err)
		}
		r.Close()
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name string
		open func(string) error
	}{
		{"stream", func(n string) error { _, err := c.OpenStream(ctx, n); return err }},
		{"regular", func(n string) error { _, err := c.OpenRegular(ctx, n); return err }},
	} {
		err := tc.open(missing)
		var pe *fs.PathError
		var oe *Error
		if !errors.As(err, &pe) || errors.As(err, &oe) || pe.Path != missing || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s of a missing file: %v", tc.name, err)
		}
		if err := tc.open(dir); err == nil {
			t.Fatalf("%s of a directory: no error", tc.name)
		}
	}
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
	if _, err := c.OpenRegular(ctx, fifo); !errors.Is(err, inputfile.ErrNotRegular) || !strings.Contains(err.Error(), "named pipe") {
		t.Fatalf("OpenRegular of a named pipe: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.OpenStream(cctx, fifo); !errors.Is(err, context.Canceled) {
		t.Fatalf("OpenStream of a named pipe without a writer, cancelled: %v", err)
	}
}

// TestPrefetchLocal: a Prefetcher serves local inputs in their turn, with the operating
// system's errors, and never opens a named pipe ahead of its turn (open(2) of a pipe blocks
// until a writer comes: Close would wait for it forever).
func TestPrefetchLocal(t *testing.T) {
	ctx := context.Background()
	c := New()
	defer c.Close()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("aa"), 0o644)
	os.WriteFile(b, []byte("bbb"), 0o644)
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
	missing := filepath.Join(dir, "missing")
	p := c.Prefetch(ctx, []string{a, missing, "file://" + b, fifo}, 3)
	for i, want := range []string{"aa", "", "bbb"} {
		r, err := p.Next()
		if want == "" {
			if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
				t.Fatalf("input %d: %v", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if string(got) != want || err != nil {
			t.Fatalf("input %d: %q, %v", i, got, err)
		}
	}
	p.Close() // the pipe, not handed out: nothing to wait for

	cctx, cancel := context.WithCancel(ctx)
	p = c.Prefetch(cctx, []string{fifo}, 2)
	cancel()
	if _, err := p.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("a named pipe without a writer, cancelled: %v", err)
	}
	p.Close()
}

func TestResolve(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"", ""},
		{"data/a.jsonl", "/r/data/a.jsonl"},
		{"/abs/a.jsonl", "/abs/a.jsonl"},
		{"s3://bkt/a.jsonl", "s3://bkt/a.jsonl"},
		{"az://c/a", "az://c/a"},
		{"file:///x/a", "file:///x/a"},
		{"s3:///malformed", "s3:///malformed"},
		{"http://host/a", "http://host/a"},
	} {
		if got := Resolve("/r", tc.name); got != tc.want {
			t.Errorf("Resolve(/r, %q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
