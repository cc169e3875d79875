package pagewriter

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func TestSpanRule(t *testing.T) {
	r := SpanRule{PageSize: 4096}
	for _, tc := range []struct{ cursor, size, off, next int64 }{
		{4096, 5, 4096, 4104},
		{4104, 5000, 8192, 13192},
		{13192, 6, 13192, 13200},
		{4096, 4096, 4096, 8192},     // exactly one page
		{4100, 4096, 8192, 12288},    // a full page never straddles
		{8096, 96, 8096, 8192},       // ends exactly at the boundary
		{8096, 97, 8192, 8296},       // one byte too many
		{8192, 10000, 8192, 18192},   // larger than a page, already aligned
		{12288 + 8, 1, 12296, 12304}, // 8-byte alignment after the payload
		{4096*5 - 8, 8, 4096*5 - 8, 4096 * 5},
	} {
		off, next, err := r.Place(tc.cursor, tc.size)
		if err != nil || off != tc.off || next != tc.next {
			t.Errorf("Place(%d, %d) = %d, %d, %v; want %d, %d", tc.cursor, tc.size, off, next, err, tc.off, tc.next)
		}
	}
}

func TestPageRule(t *testing.T) {
	r := PageRule{PageSize: 4096, Align: 1}
	if off, next, _ := r.Place(4000, 200); off != 4096 || next != 4296 {
		t.Errorf("Place(4000, 200) = %d, %d", off, next)
	}
	if off, next, _ := r.Place(4001, 95); off != 4001 || next != 4096 {
		t.Errorf("Place(4001, 95) = %d, %d", off, next)
	}
	if _, _, err := r.Place(0, 4097); !errors.Is(err, ErrPageOverflow) {
		t.Errorf("payload > page: %v", err)
	}
}

func TestValidPageSize(t *testing.T) {
	for _, p := range []int64{0, 1, 2048, 4095, 5000, 1 << 32} {
		if ValidPageSize(p) == nil {
			t.Errorf("page size %d accepted", p)
		}
	}
	for _, p := range []int64{4096, 1 << 21, 1 << 31} {
		if err := ValidPageSize(p); err != nil {
			t.Errorf("page size %d: %v", p, err)
		}
	}
}

// recorder is a rangeWriter that keeps the bytes and counts writes, zeros and how often
// each byte arrived.
type recorder struct {
	buf           []byte
	seen          []int
	writes, zeros int
}

func (r *recorder) grow(end int64) {
	for int64(len(r.buf)) < end {
		r.buf, r.seen = append(r.buf, 0xEE), append(r.seen, 0)
	}
}

func (r *recorder) WriteAt(p []byte, off int64) (int, error) {
	r.writes++
	r.grow(off + int64(len(p)))
	copy(r.buf[off:], p)
	for i := range p {
		r.seen[off+int64(i)]++
	}
	return len(p), nil
}

func (r *recorder) Zero(off, n int64) error {
	r.zeros++
	r.grow(off + n)
	for i := off; i < off+n; i++ {
		r.buf[i] = 0
		r.seen[i]++
	}
	return nil
}

// vrecorder is a recorder that takes gather writes, counted in writes like WriteAt.
type vrecorder struct {
	recorder
	vecs int // gather writes
}

func (r *vrecorder) vectored() bool { return true }

func (r *vrecorder) writev(bufs [][]byte, off int64) (int, error) {
	r.vecs++
	var b []byte
	for _, p := range bufs {
		b = append(b, p...)
	}
	return r.WriteAt(b, off)
}

// writeRange delivers every byte of the range once: payloads at their offsets, everything
// else zero; neighbours and small gaps are joined (copied into one buffer, or gathered where
// the writer takes gather writes), large payloads go direct, large gaps are declared with
// Zero.
func TestWriteRange(t *testing.T) {
	big := bytes.Repeat([]byte{7}, directSize)
	far := int64(100 + directSize + maxGap + 1)
	items := []Item{{Data: []byte("ab")}, {Space: 1}, {Data: []byte("cd")}, {Data: big}, {Data: []byte("ef")}, {Data: []byte("gh")}}
	offs := []int64{5, 7, 15, 100, far, far + 10}
	to := far + 19
	want := make([]byte, to)
	for k, it := range items {
		copy(want[offs[k]:], it.Data)
	}
	for _, vectored := range []bool{false, true} {
		vr := &vrecorder{}
		var dst rangeWriter = &vr.recorder
		if vectored {
			dst = vr
		}
		r := &vr.recorder
		var seg []byte
		n, err := writeRange(dst, 0, to, items, offs, &seg, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Zero [0,5); "ab".."cd" joined (gap 8); Zero up to big; big direct; Zero the gap of
		// maxGap+1; "ef" and "gh" joined; Zero the tail: 3 writes, 4 zeros; the joined ones
		// gathered when vectored.
		if r.writes != 3 || r.zeros != 4 || n != directSize+24 {
			t.Fatalf("vectored %v: %d writes, %d zeros, %d bytes", vectored, r.writes, r.zeros, n)
		}
		if vectored && vr.vecs != 2 {
			t.Fatalf("%d gather writes, want 2", vr.vecs)
		}
		if int64(len(r.buf)) != to {
			t.Fatalf("vectored %v: %d bytes delivered, want %d", vectored, len(r.buf), to)
		}
		for i, c := range r.seen {
			if c != 1 {
				t.Fatalf("vectored %v: byte %d delivered %d times", vectored, i, c)
			}
		}
		if !bytes.Equal(r.buf, want) {
			t.Fatalf("vectored %v: bytes differ", vectored)
		}
	}
	// An empty range delivers nothing; a range of gaps only is one Zero.
	r := &recorder{}
	var seg []byte
	if _, err := writeRange(r, 10, 10, nil, nil, &seg, nil); err != nil || r.writes+r.zeros != 0 {
		t.Fatalf("empty range: %d writes, %d zeros, %v", r.writes, r.zeros, err)
	}
	if _, err := writeRange(r, 10, 20, []Item{{Space: 1}}, []int64{10}, &seg, nil); err != nil || r.writes != 0 || r.zeros != 1 {
		t.Fatalf("gaps only: %d writes, %d zeros, %v", r.writes, r.zeros, err)
	}
}

// A gather write of many small payloads stays within maxIov buffers a call and segLimit
// bytes, and delivers every byte once.
func TestWriteRangeManyPayloads(t *testing.T) {
	const n = 3 * maxIov
	var items []Item
	var offs []int64
	off := int64(0)
	for i := range n {
		p := bytes.Repeat([]byte{byte(i)}, 1+i%5000)
		items = append(items, Item{Data: p})
		off += int64(i % 3) // small gaps between some
		offs = append(offs, off)
		off += int64(len(p))
	}
	vr := &maxVec{}
	var seg []byte
	if _, err := writeRange(vr, 0, off, items, offs, &seg, nil); err != nil {
		t.Fatal(err)
	}
	if vr.most > maxIov {
		t.Fatalf("a gather write of %d buffers, at most %d allowed", vr.most, maxIov)
	}
	want := make([]byte, off)
	for k, it := range items {
		copy(want[offs[k]:], it.Data)
	}
	for i, c := range vr.seen {
		if c != 1 {
			t.Fatalf("byte %d delivered %d times", i, c)
		}
	}
	if !bytes.Equal(vr.buf, want) {
		t.Fatal("bytes differ")
	}
}

// maxVec is a vrecorder that keeps the largest gather write's buffer count.
type maxVec struct {
	vrecorder
	most int
}

func (r *maxVec) writev(bufs [][]byte, off int64) (int, error) {
	r.most = max(r.most, len(bufs))
	return r.vrecorder.writev(bufs, off)
}

// writevAll goes on after short writes, stops at an error, and reports a write of nothing.
func TestWritevAll(t *testing.T) {
	bufs := func() [][]byte { return [][]byte{[]byte("abc"), nil, []byte("defgh"), []byte("i")} }
	var got []byte
	short := func(b [][]byte, off int64) (int, error) { // at most 2 bytes a call
		if off != int64(len(got)) {
			t.Fatalf("write at %d after %d bytes", off, len(got))
		}
		n := 0
		for _, p := range b {
			k := min(len(p), 2-n)
			got = append(got, p[:k]...)
			if n += k; n == 2 {
				break
			}
		}
		return n, nil
	}
	if n, err := writevAll(bufs(), 0, short); err != nil || n != 9 || string(got) != "abcdefghi" {
		t.Fatalf("short writes: %d, %v, %q", n, err, got)
	}
	boom := errors.New("boom")
	calls := 0
	failing := func(b [][]byte, off int64) (int, error) {
		if calls++; calls == 2 {
			return 1, boom
		}
		return 4, nil
	}
	if n, err := writevAll(bufs(), 0, failing); !errors.Is(err, boom) || n != 5 {
		t.Fatalf("failing write: %d, %v", n, err)
	}
	if n, err := writevAll(bufs(), 0, func([][]byte, int64) (int, error) { return 0, nil }); !errors.Is(err, io.ErrShortWrite) || n != 0 {
		t.Fatalf("write of nothing: %d, %v", n, err)
	}
	if n, err := writevAll(nil, 0, failing); err != nil || n != 0 {
		t.Fatalf("nothing to write: %d, %v", n, err)
	}
}
