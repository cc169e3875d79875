package tarsrc

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/mldf/convert/sample"
)

// zeroReader yields n zero bytes without holding them.
type zeroReader struct{ n int64 }

func (z *zeroReader) Read(p []byte) (int, error) {
	if z.n == 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), z.n))
	clear(p[:k])
	z.n -= int64(k)
	return k, nil
}

// writeBigShard writes a .tar.gz whose one sample has a small jpg member and `big` members of
// size bytes each (zeros: the file stays tiny), with extensions no field reads.
func writeBigShard(t *testing.T, path string, big int, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	tw := tar.NewWriter(zw)
	add := func(name string, n int64, r io.Reader) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: n}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, r); err != nil {
			t.Fatal(err)
		}
	}
	add("s/000.jpg", 3, strings.NewReader("jpg"))
	for i := 0; i < big; i++ {
		add("s/000.raw"+string(rune('a'+i)), size, &zeroReader{size})
	}
	add("s/001.jpg", 3, strings.NewReader("JPG"))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// allocated runs fn and returns the bytes it allocated (all goroutines).
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestIgnoredMembersNotRead: members no field reads are skipped without
// being held, whatever their size; the sample still shows they were there.
func TestIgnoredMembersNotRead(t *testing.T) {
	const size, big = 64 << 20, 3
	path := filepath.Join(t.TempDir(), "big.tar.gz")
	writeBigShard(t, path, big, size)
	src, err := New([]string{path}, Options{Columns: []string{"jpg", "cls|label"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []sample.Sample
	n := allocated(func() { got = collect(t, src) })
	if len(got) != 2 || got[0].Err != nil || got[1].Err != nil {
		t.Fatalf("%d samples: %+v", len(got), got)
	}
	if v := got[0].Value("jpg"); string(v.Bytes) != "jpg" {
		t.Fatalf("jpg = %q", v.Bytes)
	}
	if len(got[0].Values) != 1+big {
		t.Fatalf("%d columns", len(got[0].Values))
	}
	for _, c := range got[0].Values[1:] {
		if c.Value.Kind != sample.KindNone || c.Value.Bytes != nil || !strings.HasPrefix(c.Value.Name, "s/000.raw") {
			t.Fatalf("ignored member %q: %+v", c.Name, c.Value)
		}
	}
	if got[0].InputBytes != 3+big*size {
		t.Fatalf("InputBytes %d", got[0].InputBytes)
	}
	// Before the fix every member was read: 192 MiB. Buffers (bufio, gzip window) are a few MiB.
	if n > 16<<20 {
		t.Fatalf("reading a sample with %d ignored members of %d MiB allocated %d MiB", big, size>>20, n>>20)
	}
	t.Logf("allocated %.1f MiB for %d ignored members of %d MiB", float64(n)/(1<<20), big, size>>20)

	// Without Columns, every member is read (and bounded by MaxMemberSize).
	src, _ = New([]string{path}, Options{MaxMemberSize: size - 1})
	got = collect(t, src)
	if len(got) != 2 || !errors.Is(got[0].Err, ErrMemberTooLarge) || got[1].Err != nil {
		t.Fatalf("%+v", got)
	}
}

// lyingHeader is a tar whose one member declares size bytes but holds only have.
func lyingHeader(t *testing.T, name string, size int64, have int) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size, Format: tar.FormatPAX}); err != nil {
		t.Fatal(err)
	}
	tw.Write(make([]byte, have))
	return buf.Bytes() // no Close: the archive ends inside the member
}

// TestMemberSizeBounds: declared member sizes at, just over and far over MaxMemberSize, in
// plain and compressed shards, and in wanted and ignored members. Nothing larger than the
// bound is ever allocated, and every oversize member is a per-sample ErrMemberTooLarge.
func TestMemberSizeBounds(t *testing.T) {
	const limit = 1 << 20
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		declared int64
		present  int // payload bytes actually in the shard
		want     bool
		err      error // of the member's sample
		broken   bool  // then an ErrShard sample (the stream ends inside the member)
	}{
		{"at the limit", limit, limit, true, nil, false},
		{"just over", limit + 1, limit + 1, true, ErrMemberTooLarge, false},
		{"far over, present", 8 * limit, 8 * limit, true, ErrMemberTooLarge, false},
		{"far over, lying (1 TiB)", 1 << 40, 4096, true, ErrMemberTooLarge, true},
		{"max int64, lying", 1<<63 - 1, 0, true, ErrMemberTooLarge, true},
		{"at the limit, lying", limit, 100, true, ErrShard, false},
		{"ignored, far over, present", 8 * limit, 8 * limit, false, nil, false},
		{"ignored, lying (1 TiB)", 1 << 40, 4096, false, nil, true},
	} {
		for _, comp := range []string{"tar", "tar.gz"} {
			t.Run(tc.name+" "+comp, func(t *testing.T) {
				var b []byte
				if tc.present == int(tc.declared) {
					b = tarBytes(t, []member{{name: "k.bin", data: make([]byte, tc.present)}, {name: "z.txt", data: []byte("z")}})
				} else {
					b = lyingHeader(t, "k.bin", tc.declared, tc.present)
				}
				if comp == "tar.gz" {
					b = gz(t, b)
				}
				p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+"."+comp)
				os.WriteFile(p, b, 0o644)
				opts := Options{MaxMemberSize: limit}
				if !tc.want {
					opts.Columns = []string{"txt"}
				}
				src, err := New([]string{p}, opts)
				if err != nil {
					t.Fatal(err)
				}
				var got []sample.Sample
				var runErr error
				n := allocated(func() {
					runErr = src.Run(context.Background(), func(s sample.Sample) error { got = append(got, s); return nil })
				})
				if n > 4*limit+(4<<20) {
					t.Fatalf("allocated %d MiB", n>>20)
				}
				// A complete gzip stream of a truncated tar is a broken tar, not a corrupt
				// stream: the same per-sample errors as the plain tar.
				if runErr != nil {
					t.Fatal(runErr)
				}
				if len(got) == 0 {
					t.Fatal("no sample")
				}
				first := got[0]
				switch {
				case tc.err == nil && first.Err != nil:
					t.Fatalf("sample error %v", first.Err)
				case tc.err != nil && !errors.Is(first.Err, tc.err):
					t.Fatalf("sample error %v, want %v", first.Err, tc.err)
				}
				if tc.err == ErrMemberTooLarge && !strings.Contains(first.Err.Error(), "max_member_size") {
					t.Fatalf("error does not name the option: %v", first.Err)
				}
				if tc.broken && !errors.Is(got[len(got)-1].Err, ErrShard) {
					t.Fatalf("last sample %v, want ErrShard", got[len(got)-1].Err)
				}
				if tc.err == nil && tc.want && len(first.Value("bin").Bytes) != tc.present {
					t.Fatalf("read %d bytes", len(first.Value("bin").Bytes))
				}
			})
		}
	}
}

func TestOptionsRange(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.tar")
	os.WriteFile(p, tarBytes(t, []member{{name: "a.x", data: []byte("1")}}), 0o644)
	for _, m := range []int64{-1, MaxMemberSizeLimit + 1, 1 << 62} {
		if _, err := New([]string{p}, Options{MaxMemberSize: m}); !errors.Is(err, ErrOptions) {
			t.Fatalf("MaxMemberSize %d: %v", m, err)
		}
	}
	for _, m := range []int64{0, 1, MaxMemberSizeLimit} {
		if _, err := New([]string{p}, Options{MaxMemberSize: m}); err != nil {
			t.Fatalf("MaxMemberSize %d: %v", m, err)
		}
	}
}

// TestCorruptCompressed: a compressed shard whose decompressor fails (a
// checksum, truncated or corrupt data, trailing garbage) stops the run with ErrCorrupt naming
// the shard, even after its samples went out, and even when it is not the first shard.
func TestCorruptCompressed(t *testing.T) {
	ms, want := wdsShard(t, "c", 6)
	plain := tarBytes(t, ms)
	stored := func() []byte { // stored deflate blocks: any flipped payload byte still inflates
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.NoCompression)
		w.Write(plain)
		w.Close()
		return buf.Bytes()
	}
	zstdCRC := func() []byte {
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
		defer enc.Close()
		return enc.EncodeAll(plain, nil)
	}
	flip := func(b []byte, i int) []byte {
		b = bytes.Clone(b)
		if i < 0 {
			i += len(b)
		}
		b[i] ^= 0x10
		return b
	}
	jpg := bytes.Index(plain, want[3].values["jpg"].Bytes) // a payload byte of sample 3
	for _, tc := range []struct {
		name  string
		data  []byte
		cause error
	}{
		{"gzip payload byte flipped, still inflates", flip(stored(), jpg+40), gzip.ErrChecksum},
		{"gzip CRC flipped", flip(gz(t, plain), -8), gzip.ErrChecksum},
		{"gzip size flipped", flip(gz(t, plain), -1), gzip.ErrChecksum},
		{"gzip truncated", gz(t, plain)[:len(gz(t, plain))-20], io.ErrUnexpectedEOF},
		{"gzip trailing garbage", append(gz(t, plain), "junk after the stream"...), gzip.ErrHeader},
		{"gzip bad header", append([]byte{0x1f, 0x8b, 99}, gz(t, plain)[3:]...), nil},
		{"zstd checksum flipped", flip(zstdCRC(), -1), nil},
		{"zstd truncated", zstdCRC()[:len(zstdCRC())-7], nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			good := filepath.Join(dir, "0.tar.gz")
			bad := filepath.Join(dir, "1.tar.gz")
			os.WriteFile(good, gz(t, plain), 0o644)
			os.WriteFile(bad, tc.data, 0o644)
			for _, o := range []Options{{Parallel: 1, ReadAhead: 1}, {}} {
				src, err := New([]string{good, bad}, o)
				if err != nil {
					t.Fatal(err)
				}
				err = src.Run(context.Background(), func(s sample.Sample) error { return nil })
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), bad) {
					t.Fatalf("Run = %v, want ErrCorrupt naming %s", err, bad)
				}
				if tc.cause != nil && !errors.Is(err, tc.cause) {
					t.Fatalf("Run = %v, want it to wrap %v", err, tc.cause)
				}
			}
			t.Log(err0(t, bad))
		})
	}
	// The intact stored stream reads fine (the flip above is what fails).
	p := filepath.Join(t.TempDir(), "ok.tar.gz")
	os.WriteFile(p, stored(), 0o644)
	src, _ := New([]string{p}, Options{})
	checkSamples(t, p, collect(t, src), want)
}

func err0(t *testing.T, path string) error {
	src, err := New([]string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return src.Run(context.Background(), func(sample.Sample) error { return nil })
}

// TestReadAheadBytes: a budget smaller than every sample still yields every sample in order.
func TestReadAheadBytes(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	var keys []string
	for s := 0; s < 4; s++ {
		ms, want := wdsShard(t, string(rune('a'+s)), 10)
		p := filepath.Join(dir, string(rune('a'+s))+".tar")
		os.WriteFile(p, tarBytes(t, ms), 0o644)
		paths = append(paths, p)
		for _, w := range want {
			keys = append(keys, w.key)
		}
	}
	for _, budget := range []int64{1, 1000, 1 << 20} {
		src, err := New(paths, Options{Parallel: 3, ReadAheadBytes: budget})
		if err != nil {
			t.Fatal(err)
		}
		got := collect(t, src)
		if len(got) != len(keys) {
			t.Fatalf("budget %d: %d samples, want %d", budget, len(got), len(keys))
		}
		for i := range got {
			if got[i].Key != keys[i] {
				t.Fatalf("budget %d: sample %d is %q, want %q", budget, i, got[i].Key, keys[i])
			}
		}
	}
}

// TestFIFOShard (tar inputs): a shard that is a named pipe is read when a
// writer comes, and a run waiting for a writer that never comes stops on cancel.
func TestFIFOShard(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pipe.tar")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	src, err := New([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, func(sample.Sample) error { return nil }) }()
	select {
	case err := <-done:
		t.Fatalf("Run returned %v with no writer", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel = %v", err)
	}

	ms, want := wdsShard(t, "p", 5)
	data := gz(t, tarBytes(t, ms))
	go func() {
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.Write(data)
		w.Close()
	}()
	checkSamples(t, p, collect(t, src), want)
}

// TestHugeNamesQuoted: error messages quote member names and keys shortened.
func TestHugeNamesQuoted(t *testing.T) {
	key := strings.Repeat("k", 900<<10) // archive/tar caps names near 1 MiB
	p := filepath.Join(t.TempDir(), "a.tar")
	os.WriteFile(p, tarBytes(t, []member{
		{name: key + ".jpg", data: []byte("1")}, {name: key + ".JPG", data: []byte("2")},
	}), 0o644)
	src, _ := New([]string{p}, Options{})
	got := collect(t, src)
	if len(got) != 1 || !errors.Is(got[0].Err, ErrDuplicateField) {
		t.Fatalf("%+v", got)
	}
	if msg := got[0].Err.Error(); len(msg) > 4<<10 || !strings.Contains(msg, "bytes)") {
		t.Fatalf("error message of %d bytes: %.300s", len(msg), msg)
	}
	if got[0].Key != key || len(got[0].Origin) > len(p)+1024 {
		t.Fatalf("key of %d bytes, origin of %d", len(got[0].Key), len(got[0].Origin))
	}
}
