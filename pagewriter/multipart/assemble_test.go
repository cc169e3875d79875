package multipart_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/mldf/convert/pagewriter/multipart"
)

// memUpload is a multipart upload in memory with server-side copies from srcs, checking
// S3's rules at Complete.
type memUpload struct {
	mu       sync.Mutex
	srcs     map[string][]byte
	parts    map[int][]byte
	copied   map[int]bool
	obj      []byte
	done     bool
	aborted  bool
	failPart int // a part whose upload fails
}

var errInjected = errors.New("injected failure")

func newMemUpload(srcs map[string][]byte) *memUpload {
	return &memUpload{srcs: srcs, parts: map[int][]byte{}, copied: map[int]bool{}}
}

func (m *memUpload) UploadPart(_ context.Context, part int, data []byte) error {
	if part == m.failPart {
		return errInjected
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.parts[part] = bytes.Clone(data)
	return nil
}

func (m *memUpload) CopyPart(_ context.Context, part int, src string, off, size int64) error {
	if part == m.failPart {
		return errInjected
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.srcs[src]
	if !ok || off < 0 || off+size > int64(len(b)) {
		return fmt.Errorf("copy part %d: no [%d, %d) in %q", part, off, off+size, src)
	}
	m.parts[part] = bytes.Clone(b[off : off+size])
	m.copied[part] = true
	return nil
}

func (m *memUpload) Complete(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var obj []byte
	for k := 1; k <= len(m.parts); k++ {
		p, ok := m.parts[k]
		if !ok {
			return fmt.Errorf("part %d missing", k)
		}
		if k < len(m.parts) && len(p) < multipart.DefaultMinPartSize {
			return fmt.Errorf("part %d is %d bytes, under the minimum", k, len(p))
		}
		obj = append(obj, p...)
	}
	m.obj, m.done = obj, true
	return nil
}

func (m *memUpload) Abort(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.aborted = true
	return nil
}

// TestAssembler: bytes, gaps and copied ranges (short ones read through, long ones copied
// server-side after a top-up of the pending bytes to the minimum) make the object they
// describe, with every part but the last at least the minimum and part 1 patched last.
func TestAssembler(t *testing.T) {
	const mib = 1 << 20
	pattern := make([]byte, 251) // a prime length: no part boundary aligns with it
	for i := range pattern {
		pattern[i] = byte(i*7 + 1)
	}
	src := bytes.Repeat(pattern, 20*mib/len(pattern))
	srcs := map[string][]byte{"s3://b/src": src}
	r := bytes.NewReader(src)
	type step struct {
		bytes      int   // bytes written (or zeros when gap)
		gap        bool  // zeros
		off, n     int64 // a range of src
		serverCopy bool  // the range (some of it) is copied server-side
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"bytes only", []step{{bytes: 17 * mib}}},
		{"short range read through", []step{{bytes: 4096}, {off: 100, n: 3 * mib}, {bytes: 10}}},
		{"top-up then copy", []step{{bytes: 4096}, {gap: true, bytes: 100}, {off: 5, n: 11 * mib, serverCopy: true}, {bytes: 7}}},
		{"copy after a full part", []step{{bytes: 17 * mib}, {off: 0, n: 10 * mib, serverCopy: true}, {off: 10 * mib, n: 5 * mib, serverCopy: true}}},
		{"copy is the last part", []step{{bytes: 6 * mib}, {off: mib, n: 5 * mib, serverCopy: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemUpload(srcs)
			a := multipart.NewAssembler(context.Background(), m)
			var want []byte
			for i, s := range tc.steps {
				switch {
				case s.n > 0:
					before := a.ServerCopied()
					if err := a.Copy(r, "s3://b/src", s.off, s.n); err != nil {
						t.Fatal(err)
					}
					want = append(want, src[s.off:s.off+s.n]...)
					if got := a.ServerCopied() > before; got != s.serverCopy {
						t.Fatalf("step %d: server-side copy %v, want %v", i, got, s.serverCopy)
					}
				case s.gap:
					if err := a.Zeros(int64(s.bytes)); err != nil {
						t.Fatal(err)
					}
					want = append(want, make([]byte, s.bytes)...)
				default:
					b := bytes.Repeat([]byte{byte(i + 1)}, s.bytes)
					if _, err := a.WriteAt(b, int64(len(want))); err != nil {
						t.Fatal(err)
					}
					want = append(want, b...)
				}
				if a.Offset() != int64(len(want)) {
					t.Fatalf("step %d: offset %d, want %d", i, a.Offset(), len(want))
				}
			}
			if err := a.Wait(); err != nil {
				t.Fatal(err)
			}
			if m.done {
				t.Fatal("the upload completed before Complete")
			}
			if err := a.Complete(func(first []byte) { copy(first, "HEAD") }); err != nil {
				t.Fatal(err)
			}
			copy(want, "HEAD")
			if !bytes.Equal(m.obj, want) {
				t.Fatalf("object: %d bytes, want %d; they differ", len(m.obj), len(want))
			}
			var sizes []int64
			for k := 1; k <= len(m.parts); k++ {
				sizes = append(sizes, int64(len(m.parts[k])))
			}
			if got := a.PartSizes(); fmt.Sprint(got) != fmt.Sprint(sizes) {
				t.Fatalf("PartSizes %v, the parts uploaded %v", got, sizes)
			}
			if err := a.Abort(); err != nil || m.aborted {
				t.Fatalf("Abort after Complete: %v, aborted %v", err, m.aborted)
			}
		})
	}
}

// TestAssemblerFailure: a failed part fails Wait; Abort aborts the upload and nothing
// appears. Writing before the offset is refused.
func TestAssemblerFailure(t *testing.T) {
	m := newMemUpload(nil)
	m.failPart = 2
	a := multipart.NewAssembler(context.Background(), m)
	if _, err := a.WriteAt(make([]byte, 20<<20), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WriteAt([]byte{1}, 5); !errors.Is(err, multipart.ErrAssemble) {
		t.Fatalf("a write before the offset: %v", err)
	}
	if err := a.Wait(); !errors.Is(err, errInjected) {
		t.Fatalf("Wait after a failed part: %v", err)
	}
	if err := a.Abort(); err != nil || !m.aborted || m.done {
		t.Fatalf("Abort: %v (aborted %v, completed %v)", err, m.aborted, m.done)
	}
	keys := make([]int, 0, len(m.parts))
	for k := range m.parts {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	if fmt.Sprint(keys) != "[]" {
		t.Fatalf("parts uploaded: %v (part 1 is kept until Complete)", keys)
	}
}

// TestExpect: listed parts match a checkpoint only when every expected part is listed with
// its size; parts outside the range are not checked.
func TestExpect(t *testing.T) {
	listed := []multipart.Part{{Number: 2, Size: 10}, {Number: 3, Size: 10}, {Number: 5, Size: 3}}
	for _, tc := range []struct {
		name string
		from int
		want []int64
		ok   bool
	}{
		{"match", 2, []int64{10, 10}, true},
		{"nothing expected", 2, nil, true},
		{"a prefix", 2, []int64{10}, true},
		{"a part missing", 2, []int64{10, 10, 10}, false},
		{"another size", 2, []int64{10, 11}, false},
		{"another first part", 1, []int64{10}, false},
	} {
		err := multipart.Expect(listed, tc.from, tc.want)
		if (err == nil) != tc.ok || err != nil && !errors.Is(err, multipart.ErrResume) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
