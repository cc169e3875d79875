package objstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"

	"github.com/mldf/convert/pagewriter"
)

func TestLocalRoundTrip(t *testing.T) {
	dir := t.TempDir()
	c := New()
	defer c.Close()
	ctx := context.Background()
	for _, name := range []string{filepath.Join(dir, "a.bin"), "file://" + filepath.Join(dir, "b.bin")} {
		want := testData(100_003, 1)
		if err := c.WriteFile(ctx, name, want); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, c, name); !bytes.Equal(got, want) {
			t.Fatalf("%s: bytes differ", name)
		}
		ra, err := c.OpenReaderAt(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 10)
		if _, err := ra.ReadAt(buf, 500); err != nil || !bytes.Equal(buf, want[500:510]) || ra.Size() != int64(len(want)) {
			t.Fatalf("ReadAt: %v", err)
		}
		ra.Close()
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Fatalf("temporary files left: %v", ents)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "a.bin")); fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", fi.Mode())
	}
}

// A writer that is aborted, or whose Close is never reached, leaves the target untouched.
func TestLocalWriterAtomic(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "report.json")
	os.WriteFile(target, []byte("old"), 0o644)
	c := New()
	defer c.Close()
	w, err := c.Create(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("new content"))
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Fatalf("target changed before Close: %q", b)
	}
	w.Abort()
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Fatalf("target changed by an aborted writer: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left: %v", ents)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("Write after Abort succeeded")
	}
	if _, err = c.Create(context.Background(), dir); !errors.Is(err, ErrBadURL) {
		t.Fatalf("create on a directory: %v", err)
	}
	if err := c.WriteFile(context.Background(), filepath.Join(dir, "no/such/dir/x"), []byte("x")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("write into a missing directory: %v", err)
	}
}

func TestLocalFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	c := New()
	defer c.Close()
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.Write([]byte("streamed"))
			f.Close()
		}
		done <- err
	}()
	if got := readAll(t, c, fifo); string(got) != "streamed" {
		t.Fatalf("read %q", got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Random access needs a regular file; opening the FIFO would block, so the check
	// comes first.
	if _, err := c.OpenReaderAt(context.Background(), fifo); !errors.Is(err, ErrBadURL) {
		t.Fatalf("ReaderAt on a FIFO: %v", err)
	}
}

func TestLocalMultipart(t *testing.T) {
	dir := t.TempDir()
	c := New()
	defer c.Close()
	ctx := context.Background()
	target := filepath.Join(dir, "out.mldf")
	src := filepath.Join(dir, "part-0.mldf")
	srcData := testData(MinPartSize+5000, 2)
	os.WriteFile(src, srcData, 0o644)
	u, err := c.NewUpload(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	p1, p3 := testData(MinPartSize, 1), testData(1234, 3)
	if err := u.UploadPart(ctx, 3, p3); err != nil {
		t.Fatal(err)
	}
	if err := u.CopyPart(ctx, 2, src, 100, MinPartSize); err != nil {
		t.Fatal(err)
	}
	if err := u.UploadPart(ctx, 1, p1); err != nil {
		t.Fatal(err)
	}
	inc, err := c.ListIncomplete(ctx, filepath.Join(dir, "out"))
	if err != nil || len(inc) != 1 || inc[0].URL != target || inc[0].ID != u.ID() {
		t.Fatalf("ListIncomplete = %+v, %v", inc, err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatal("target exists before Complete")
	}
	if err := u.Complete(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(target)
	if want := slices.Concat(p1, srcData[100:100+MinPartSize], p3); !bytes.Equal(got, want) {
		t.Fatal("assembled file differs")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("left: %v", ents)
	}

	// Abandoned and aborted uploads.
	u2, _ := c.NewUpload(ctx, target)
	u2.UploadPart(ctx, 1, p3)
	u3, _ := c.NewUpload(ctx, target)
	u3.UploadPart(ctx, 1, p3)
	if err := u3.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	inc, _ = c.ListIncomplete(ctx, dir+"/")
	if len(inc) != 1 || inc[0].ID != u2.ID() {
		t.Fatalf("ListIncomplete = %+v", inc)
	}
	if n, err := c.AbortIncomplete(ctx, target, 0); n != 1 || err != nil {
		t.Fatalf("AbortIncomplete = %d, %v", n, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("left: %v", ents)
	}
	if got2, _ := os.ReadFile(target); !bytes.Equal(got2, got) {
		t.Fatal("aborted uploads changed the target")
	}
}

func TestLocalCheckWrite(t *testing.T) {
	dir := t.TempDir()
	c := New()
	defer c.Close()
	ctx := context.Background()
	if err := c.CheckWrite(ctx, filepath.Join(dir, "new.mldf")); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckWrite(ctx, filepath.Join(dir, "missing", "new.mldf")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing directory: %v", err)
	}
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	if err := c.CheckWrite(ctx, filepath.Join(dir, "d")); !errors.Is(err, ErrBadURL) {
		t.Fatalf("a directory: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left: %v", ents)
	}
	if _, err := c.Stat(ctx, filepath.Join(dir, "nothing")); !errors.Is(err, ErrNotFound) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stat missing: %v", err)
	}
	var n int
	for a, err := range c.List(ctx, dir+"/") {
		if err != nil {
			t.Fatal(err)
		}
		n++
		_ = a
	}
	if n != 0 {
		t.Fatalf("listed %d files in an empty tree", n)
	}
	_ = io.EOF
}

// A local object being written is a locked temporary file: the page writer's clean-up of a
// killed run's leftovers beside the same target (same naming) leaves it alone, and Close
// publishes it.
func TestLocalWriterTempHeld(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the lock is taken on Linux only")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "report.json")
	c := New()
	defer c.Close()
	w, err := c.Create(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("{}")); err != nil {
		t.Fatal(err)
	}
	pagewriter.RemoveLeftovers(dir, "report.json")
	if err := w.Close(); err != nil {
		t.Fatalf("Close after the leftover clean-up: %v", err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "{}" {
		t.Fatalf("target: %q, %v", b, err)
	}
}
