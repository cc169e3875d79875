package mldf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/pagewriter"
	"github.com/mldf/convert/pagewriter/pwtest"
)

var testFields = []FieldDesc{
	{Name: "label", Type: TypeInt},
	{Name: "data", Type: TypeBytes},
	{Name: "img", Type: TypeImageJPEG},
}

// chunkOf returns deterministic chunk c: n samples of int + two payloads of varied sizes.
func chunkOf(c, n, page int) (rows [][]byte, pays [][][]byte) {
	for i := range n {
		id := c*n + i
		row := make([]byte, 48)
		PutInt(row, int64(id))
		ImageMeta{Height: uint16(id), Width: 3, Channels: 3, Mode: 1}.Put(row[24:])
		sizes := []int{(id * 37) % 300, (id * 7919) % (3 * page)}
		if id%5 == 0 {
			sizes[0] = 0
		}
		p := [][]byte{nil, nil, nil}
		for k, s := range sizes {
			b := make([]byte, s)
			for j := range b {
				b[j] = byte(id + j + k)
			}
			p[k+1] = b
		}
		rows = append(rows, row)
		pays = append(pays, p)
	}
	return rows, pays
}

// fileOpt says how a test writes its file.
type fileOpt struct {
	wrap       pagewriter.WrapFunc
	pre, named bool
	open       pagewriter.SinkOpener // instead of the local file at path
}

// writeFile writes chunks chunks of n samples with the given number of goroutines, which
// take chunks in order from a queue and commit them as they can.
func writeFile(t testing.TB, path string, workers, chunks, n int, opt fileOpt) (pagewriter.Result, error) {
	const page = 4096
	c, err := New(Options{PageSize: page, Fields: testFields, Checksums: true})
	if err != nil {
		return pagewriter.Result{}, err
	}
	open := opt.open
	if open == nil {
		open = pagewriter.LocalFile(path, pagewriter.FileOptions{Wrap: opt.wrap, Preallocate: opt.pre, Named: opt.named})
	}
	w, err := pagewriter.New(open, c, pagewriter.Options{Wrap: opt.wrap})
	if err != nil {
		return pagewriter.Result{}, err
	}
	err = pwtest.Drive(context.Background(), w, workers, chunks, func(c int, b *pagewriter.Batch) error {
		rows, pays := chunkOf(c, n, page)
		for i := range rows {
			if err := b.Append(rows[i], pays[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		w.Abort()
		return pagewriter.Result{}, err
	}
	return w.Finish()
}

func TestDeterministicConcurrent(t *testing.T) {
	dir := t.TempDir()
	var ref []byte
	for i, workers := range []int{1, 2, 3, 8, 2, 2} {
		path := filepath.Join(dir, fmt.Sprintf("%d-w%d.mldf", i, workers))
		res, err := writeFile(t, path, workers, 40, 9, fileOpt{pre: i == 4, named: i == 5})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm()&0o400 == 0 || (i == 5 && fi.Mode().Perm() != 0o644) {
			t.Fatalf("mode of %s: %v %v", path, fi.Mode(), err)
		}
		if res.Size != int64(len(got)) || res.Samples != 360 {
			t.Fatalf("result %+v for %d bytes", res, len(got))
		}
		if ref == nil {
			ref = got
			checkFile(t, got, 40, 9)
			continue
		}
		if !bytes.Equal(got, ref) {
			t.Fatalf("%d workers: bytes differ from 1 worker", workers)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 6 {
		t.Fatalf("%d files in %s, want the 6 outputs only", len(entries), dir)
	}
}

// checkFile checks rows and payloads of a file written by writeFile.
func checkFile(t *testing.T, raw []byte, chunks, n int) {
	h, err := DecodeHeader(raw[HeaderOffset:])
	if err != nil {
		t.Fatal(err)
	}
	if h.NumSamples != uint64(chunks*n) || h.DataPtr != 4096 || h.FieldDescPtr != 80 {
		t.Fatalf("header %+v", h)
	}
	prev := uint64(0)
	for c := range chunks {
		rows, pays := chunkOf(c, n, 4096)
		for i := range rows {
			id := c*n + i
			row := raw[h.MetadataPtr+uint64(id)*48:][:48]
			if GetInt(row) != int64(id) || GetImageMeta(row[24:]).Height != uint16(id) {
				t.Fatalf("row %d: %x", id, row)
			}
			for k, off := range []int{8, 24} {
				ref := GetRef(row[off:])
				want := pays[i][k+1]
				if len(want) == 0 {
					if ref != (PayloadRef{}) {
						t.Fatalf("row %d field %d: ref %+v for an empty payload", id, k+1, ref)
					}
					continue
				}
				if ref.Ptr < prev || !bytes.Equal(raw[ref.Ptr:ref.Ptr+uint64(ref.Size)], want) {
					t.Fatalf("row %d field %d: payload at %d differs", id, k+1, ref.Ptr)
				}
				prev = ref.Ptr
			}
		}
	}
}

// faulty fails writes with ENOSPC after a byte budget, or Sync.
type faulty struct {
	pagewriter.File
	budget   *atomic.Int64
	failFrom int64 // writes at or after this offset fail, when > 0
	failSync bool
}

func (f faulty) WriteAt(b []byte, off int64) (int, error) {
	if (f.budget != nil && f.budget.Add(-int64(len(b))) < 0) || (f.failFrom > 0 && off >= f.failFrom) {
		return 0, syscall.ENOSPC
	}
	return f.File.WriteAt(b, off)
}

func (f faulty) Sync() error {
	if f.failSync {
		return syscall.EIO
	}
	return f.File.Sync()
}

func TestFaults(t *testing.T) {
	ref, err := writeFile(t, filepath.Join(t.TempDir(), "ref"), 1, 40, 9, fileOpt{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		role     string
		budget   int64
		failFrom int64
		sync     bool
		want     error
	}{
		{"enospc at create", "output", 10, 0, false, syscall.ENOSPC},
		{"enospc in data", "output", 50_000, 0, false, syscall.ENOSPC},
		{"enospc late in data", "output", 2_000_000, 0, false, syscall.ENOSPC},
		{"enospc in metadata table", "output", -1, ref.MetadataPtr, false, syscall.ENOSPC},
		{"enospc in allocation table", "output", -1, ref.AllocTablePtr, false, syscall.ENOSPC},
		{"enospc in row scratch", "rows", 3000, 0, false, syscall.ENOSPC},
		{"enospc in alloc scratch", "alloc", 3000, 0, false, syscall.ENOSPC},
		{"sync fails", "output", -1, 0, true, syscall.EIO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.mldf")
			if err := os.WriteFile(path, []byte("older file"), 0o644); err != nil {
				t.Fatal(err)
			}
			wrap := func(f pagewriter.File, role string) pagewriter.File {
				if role != tc.role {
					return f
				}
				ff := faulty{File: f, failSync: tc.sync, failFrom: tc.failFrom}
				if tc.budget >= 0 {
					ff.budget = new(atomic.Int64)
					ff.budget.Store(tc.budget)
				}
				return ff
			}
			for _, named := range []bool{false, true} {
				_, err := writeFile(t, path, 2, 40, 9, fileOpt{wrap: wrap, named: named})
				if !errors.Is(err, tc.want) {
					t.Fatalf("named %v: got %v, want %v", named, err, tc.want)
				}
				if b, _ := os.ReadFile(path); string(b) != "older file" {
					t.Fatalf("named %v: older file changed: %q", named, b)
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 1 {
					t.Fatalf("named %v: %d files left in %s", named, len(ents), dir)
				}
			}
		})
	}
}

func TestLifecycle(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.mldf")
	w, err := Create(path, Options{PageSize: 4096, Fields: testFields})
	if err != nil {
		t.Fatal(err)
	}
	t1 := w.Issue()
	if _, err := w.Finish(); !errors.Is(err, pagewriter.ErrUnclaimed) {
		t.Fatalf("finish with an uncommitted chunk: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("output exists")
	}
	if err := w.Commit(context.Background(), t1, w.NewBatch()); err == nil {
		t.Fatal("commit after finish succeeded")
	}
	if _, err := w.Finish(); !errors.Is(err, pagewriter.ErrClosed) {
		t.Fatalf("second finish: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}

	// Abort wakes a waiting commit.
	w, err = Create(path, Options{PageSize: 4096, Fields: testFields})
	if err != nil {
		t.Fatal(err)
	}
	w.Issue()
	t2 := w.Issue()
	done := make(chan error)
	go func() { done <- w.Commit(context.Background(), t2, w.NewBatch()) }()
	w.Abort()
	if err := <-done; err == nil {
		t.Fatal("waiting commit not failed by abort")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("%d files left", len(ents))
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	for name, opt := range map[string]Options{
		"page size":    {PageSize: 1000, Fields: testFields},
		"unknown type": {Fields: []FieldDesc{{Name: "x", Type: 99}}},
		"bad name":     {Fields: []FieldDesc{{Name: "", Type: TypeInt}}},
		"duplicate":    {Fields: []FieldDesc{{Name: "x", Type: TypeInt}, {Name: "x", Type: TypeInt}}},
	} {
		if _, err := Create(filepath.Join(dir, "x"), opt); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Create(dir, Options{Fields: testFields}); err == nil {
		t.Error("directory as output accepted")
	}
	w, err := Create(filepath.Join(dir, "x"), Options{PageSize: 4096, Fields: testFields})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	b := w.NewBatch()
	if err := b.Append(make([]byte, 47), nil); err == nil {
		t.Error("short row accepted")
	}
	if err := b.Append(make([]byte, 48), [][]byte{{1}, nil, nil}); !errors.Is(err, ErrNotPayload) {
		t.Errorf("payload for INT: %v", err)
	}
	if err := b.Append(make([]byte, 48), [][]byte{nil}); err == nil {
		t.Error("wrong payload count accepted")
	}
	if b.Len() != 0 {
		t.Errorf("rejected appends left %d rows", b.Len())
	}
}

// TestLargeTables writes more rows and entries than one copy buffer holds, so Finish copies
// the scratch files in several pieces.
func TestLargeTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.mldf")
	fields := []FieldDesc{{Name: "id", Type: TypeInt}, {Name: "b", Type: TypeBytes}}
	w, err := Create(path, Options{PageSize: 4096, Fields: fields, Checksums: true})
	if err != nil {
		t.Fatal(err)
	}
	const rows = 70000 // 70000 × 24 B rows and 70000 × 16 B entries: over 1 MiB each
	row := make([]byte, 24)
	b := w.NewBatch()
	for c := range rows / 1000 {
		tk := w.Issue()
		b.Reset()
		for i := c * 1000; i < (c+1)*1000; i++ {
			PutInt(row, int64(i))
			if err := b.Append(row, [][]byte{nil, {byte(i), byte(i >> 8)}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Commit(context.Background(), tk, b); err != nil {
			t.Fatal(err)
		}
	}
	res, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if res.Samples != rows || res.Entries != rows || int64(len(raw)) != res.Size || res.Size != res.AllocTablePtr+rows*16 {
		t.Fatalf("result %+v, %d bytes", res, len(raw))
	}
	for _, i := range []int{0, 1, 43690, rows - 1} {
		r := raw[res.MetadataPtr+int64(i)*24:]
		ref := GetRef(r[8:])
		e := DecodeAllocEntry(raw[res.AllocTablePtr+int64(i)*16:])
		if GetInt(r) != int64(i) || ref.Size != 2 || raw[ref.Ptr] != byte(i) || e.Ptr != ref.Ptr ||
			e.Check != PayloadChecksum(raw[ref.Ptr:ref.Ptr+2]) {
			t.Fatalf("row %d: %x, entry %+v", i, r[:24], e)
		}
	}
	d := xxhash.New()
	d.Write(raw[HeaderOffset : HeaderOffset+56])
	d.Write(raw[FieldDescOffset : FieldDescOffset+2*FieldDescSize])
	d.Write(raw[res.MetadataPtr:])
	if d.Sum64() != res.Checksum {
		t.Fatal("header checksum does not cover the tables")
	}
}

// Every byte of the file reaches the sink exactly once (a sink that counts them commits only
// then), and the bytes are the local file's, for any number of workers.
func TestExactlyOnce(t *testing.T) {
	dir := t.TempDir()
	ref, err := writeFile(t, filepath.Join(dir, "ref.mldf"), 1, 40, 9, fileOpt{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(ref.Path)
	for _, workers := range []int{1, 2, 8} {
		m := pwtest.NewMemory("mem.mldf", dir)
		if _, err := writeFile(t, "", workers, 40, 9, fileOpt{open: m.Opener()}); err != nil {
			t.Fatalf("%d workers: %v", workers, err)
		}
		if !bytes.Equal(m.Bytes(), want) {
			t.Fatalf("%d workers: bytes differ from the local file", workers)
		}
		if m.Zeros() == 0 {
			t.Fatal("no gap was declared with Zero")
		}
	}
}
