package inputfile

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
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func fifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pipe.jsonl")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

func TestReadFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "a.jpg")
	os.WriteFile(reg, []byte("data"), 0o644)
	if b, err := ReadFile(reg); err != nil || string(b) != "data" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	if b, err := ReadFile(empty); err != nil || len(b) != 0 {
		t.Fatalf("ReadFile(empty) = %q, %v", b, err)
	}
	link := filepath.Join(dir, "link.jpg")
	os.Symlink(reg, link)
	if b, err := ReadFile(link); err != nil || string(b) != "data" {
		t.Fatalf("ReadFile(symlink) = %q, %v", b, err)
	}
	// A FIFO with no writer: refused at once (an open(2) without O_NONBLOCK would hang).
	for _, tc := range []struct{ path, kind string }{
		{fifo(t), "named pipe"}, {dir, "directory"}, {"/dev/null", "character device"},
	} {
		_, err := ReadFile(tc.path)
		if !errors.Is(err, ErrNotRegular) {
			t.Fatalf("ReadFile(%s) = %v, want ErrNotRegular", tc.path, err)
		}
		if want := tc.path + " is a " + tc.kind; !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

// TestReadFileInto: the buffer's backing array is reused when large enough, a larger file
// gets a new one, and non-regular files are refused as by ReadFile.
func TestReadFileInto(t *testing.T) {
	dir := t.TempDir()
	small, large := filepath.Join(dir, "s"), filepath.Join(dir, "l")
	os.WriteFile(small, []byte("abc"), 0o644)
	os.WriteFile(large, bytes.Repeat([]byte("x"), 1000), 0o644)
	buf := make([]byte, 5, 100)
	b, err := ReadFileInto(small, buf)
	if err != nil || string(b) != "abc" || &b[:1][0] != &buf[:1][0] {
		t.Fatalf("ReadFileInto(small) = %q, %v (reused: %v)", b, err, &b[:1][0] == &buf[:1][0])
	}
	b, err = ReadFileInto(large, buf)
	if err != nil || len(b) != 1000 || cap(b) < 1001 {
		t.Fatalf("ReadFileInto(large) = %d bytes (cap %d), %v", len(b), cap(b), err)
	}
	if b, err := ReadFileInto(small, b); err != nil || string(b) != "abc" {
		t.Fatalf("ReadFileInto(small) after large = %q, %v", b, err)
	}
	if _, err := ReadFileInto(fifo(t), buf); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("ReadFileInto(fifo) = %v, want ErrNotRegular", err)
	}
}

// TestStreamFIFONoWriter: a FIFO nobody writes to waits until the context is cancelled, then
// returns promptly with the context's error.
func TestStreamFIFONoWriter(t *testing.T) {
	p := fifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		r, _, err := OpenStream(ctx, p)
		if err == nil {
			r.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("OpenStream returned before cancel: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), p) {
		t.Fatalf("OpenStream after cancel = %v", err)
	}
}

// TestStreamFIFOWriter: with a writer (arriving late, or writing nothing) the stream is read
// to its end as a file would be.
func TestStreamFIFOWriter(t *testing.T) {
	for _, payload := range []string{"line 1\nline 2\n", ""} {
		p := fifo(t)
		go func() {
			time.Sleep(20 * time.Millisecond) // the reader is waiting already
			w, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			w.Write([]byte(payload))
			w.Close()
		}()
		r, st, err := OpenStream(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode()&os.ModeNamedPipe == 0 {
			t.Fatalf("mode %v", st.Mode())
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(b) != payload {
			t.Fatalf("read %q, %v; want %q", b, err, payload)
		}
	}
}

// TestStreamFIFOCancelRead: a writer that stops writing but keeps the pipe open does not
// hold the reader past a cancel.
func TestStreamFIFOCancelRead(t *testing.T) {
	p := fifo(t)
	hold := make(chan struct{})
	wrote := make(chan struct{})
	go func() {
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			close(wrote)
			return
		}
		w.Write([]byte("first"))
		close(wrote)
		<-hold
		w.Close()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	r, _, err := OpenStream(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	<-wrote
	buf := make([]byte, 5)
	if _, err := io.ReadFull(r, buf); err != nil || string(buf) != "first" {
		t.Fatalf("read %q, %v", buf, err)
	}
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	_, err = r.Read(buf)
	close(hold)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel = %v", err)
	}
}

func TestStreamRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{dir, "/dev/null"} {
		if _, _, err := OpenStream(context.Background(), p); !errors.Is(err, ErrNotStream) {
			t.Fatalf("OpenStream(%s) = %v", p, err)
		}
	}
	reg := filepath.Join(dir, "a")
	os.WriteFile(reg, []byte("x"), 0o644)
	r, st, err := OpenStream(context.Background(), reg)
	if err != nil || st.Size() != 1 {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if string(b) != "x" {
		t.Fatalf("%q", b)
	}
}

// TestKind: every file type has its name, with its article, the one naming every package's
// messages ("PATH is a named pipe").
func TestKind(t *testing.T) {
	for _, c := range []struct {
		m    fs.FileMode
		want string
	}{
		{0o644, "a regular file"},
		{fs.ModeDir | 0o755, "a directory"},
		{fs.ModeNamedPipe, "a named pipe"},
		{fs.ModeDevice | fs.ModeCharDevice, "a character device"},
		{fs.ModeDevice, "a block device"},
		{fs.ModeSocket, "a socket"},
		{fs.ModeSymlink, "a symbolic link"},
		{fs.ModeIrregular, "an irregular file"},
	} {
		if got := Kind(c.m); got != c.want {
			t.Errorf("Kind(%v) = %q, want %q", c.m, got, c.want)
		}
	}
}
