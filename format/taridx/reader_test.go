package taridx

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/internal/inputfile"
)

// writeTar writes a tar of the given members (name -> payload, in order) to path.
func writeTar(t testing.TB, path string, names []string, payloads [][]byte) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(payloads[i])), Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(payloads[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRoundTripRandomAccess(t *testing.T) {
	dir := t.TempDir()
	var shards []string
	want := map[string][]byte{}
	for s := 0; s < 3; s++ {
		var names []string
		var payloads [][]byte
		for i := 0; i < 20; i++ {
			key := fmt.Sprintf("s%d/%04d", s, i)
			for _, ext := range []string{"jpg", "cls", "JSON", ""} {
				n := key
				if ext != "" {
					n += "." + ext
				}
				p := bytes.Repeat([]byte{byte(s*31 + i + len(ext))}, (i*97+len(ext)*13)%1500)
				names, payloads = append(names, n), append(payloads, p)
				want[fmt.Sprintf("%d:%s", s, n)] = p
			}
		}
		path := filepath.Join(dir, fmt.Sprintf("shard-%d.tar", s))
		writeTar(t, path, names, payloads)
		shards = append(shards, path)
	}
	// An empty shard in the middle must not shift the fids of the shards after it.
	empty := filepath.Join(dir, "empty.tar")
	if err := os.WriteFile(empty, make([]byte, 1024), 0o644); err != nil {
		t.Fatal(err)
	}
	shards = []string{shards[0], empty, shards[1], shards[2]}
	fids := map[int]int{0: 0, 2: 1, 3: 2} // fid -> s
	out := filepath.Join(dir, "fold.taridx")
	if err := IndexFiles(shards, out); err != nil {
		t.Fatal(err)
	}
	r, err := Open(out, shards)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Rows) != 3*20*4 {
		t.Fatalf("rows = %d", len(r.Rows))
	}
	if r.Exts[0] != "jpg" || r.Exts[2] != "json" || r.Exts[3] != "" {
		t.Fatalf("exts = %q", r.Exts)
	}
	for i, row := range r.Rows {
		name, err := r.MemberName(i)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := fids[int(row.FID)]
		if !ok {
			t.Fatalf("row %d: fid %d", i, row.FID)
		}
		b, err := r.ReadMember(i)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want[fmt.Sprintf("%d:%s", s, name)]) {
			t.Fatalf("row %d (%s): payload differs", i, name)
		}
		stem, _ := SplitName(name)
		if row.KeyHash != xxhash.Sum64String(stem) {
			t.Fatalf("row %d: keyhash", i)
		}
	}
	// The stem drops the directory: "0007" names rows in all three shards.
	if got := len(r.Find("0007")); got != 12 {
		t.Fatalf("Find(0007) = %d rows, want 12", got)
	}
	if _, err := r.Open(len(r.Rows)); !errors.Is(err, ErrRow) {
		t.Fatalf("Open(out of range) = %v", err)
	}
	// Fewer shards than the rows name.
	if _, err := Open(out, shards[:2]); !errors.Is(err, ErrShard) {
		t.Fatalf("Open with too few shards = %v", err)
	}
	var sb strings.Builder
	if err := r.Describe().WriteText(&sb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "rows        240") || !strings.Contains(sb.String(), "shards      4") {
		t.Fatalf("describe:\n%s", sb.String())
	}
}

func TestMemberPastEOF(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.tar")
	writeTar(t, path, []string{"a.bin"}, [][]byte{make([]byte, 3000)})
	out := filepath.Join(dir, "a.taridx")
	if err := IndexFiles([]string{path}, out); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 1024); err != nil { // cut the payload short
		t.Fatal(err)
	}
	r, err := Open(out, []string{path})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.ReadMember(0); !errors.Is(err, ErrShard) {
		t.Fatalf("ReadMember of a truncated shard = %v, want ErrShard", err)
	}
}

// validIndex returns a small valid index with an empty extension and a crash stem.
func validIndex() []byte {
	h := Header{Major: 1, RecSize: RowSize, HdrSize: HeaderSize, NStems: 3, NRows: 4, NExt: 3, NCrash: 1, Flags: FlagContiguous}
	copy(h.Magic[:], Magic)
	exts, crash := "jpg\n\njson", "dup"
	h.OffCrash = HeaderSize + uint64(len(exts))
	h.OffArr = h.OffCrash + uint64(len(crash))
	b, _ := h.AppendBinary(nil)
	b = append(b, exts+crash...)
	for _, r := range []Row{
		{FID: 0, Offset: 0, Size: 5, ExtID: 0, KeyHash: 7},
		{FID: 0, Offset: 1024, Size: 5, ExtID: 2, KeyHash: 7},
		{FID: 1, Offset: 0, Size: 0, ExtID: 1, KeyHash: 9},
		{FID: 1, Offset: 512, Size: 1, ExtID: 1, KeyHash: 9, CrashID: 1},
	} {
		b = appendRow(b, r)
	}
	return b
}

func TestParseBad(t *testing.T) {
	le := binary.LittleEndian
	good := validIndex()
	if ix, err := Parse(good); err != nil || len(ix.Exts) != 3 || ix.Exts[1] != "" || ix.CrashStems[0] != "dup" {
		t.Fatalf("Parse(valid) = %+v, %v", ix, err)
	}
	mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrCorrupt},
		{"short", good[:63], ErrCorrupt},
		{"magic", mut(func(b []byte) []byte { b[0] = 'X'; return b }), ErrMagic},
		{"major", mut(func(b []byte) []byte { le.PutUint16(b[8:], 2); return b }), ErrVersion},
		{"rec_size", mut(func(b []byte) []byte { le.PutUint16(b[12:], 16); return b }), ErrCorrupt},
		{"hdr_size", mut(func(b []byte) []byte { le.PutUint16(b[14:], 128); return b }), ErrCorrupt},
		{"n_stems>n_rows", mut(func(b []byte) []byte { le.PutUint64(b[16:], 5); return b }), ErrCorrupt},
		{"n_rows", mut(func(b []byte) []byte { le.PutUint64(b[24:], 1<<60); return b }), ErrCorrupt},
		{"partial row", good[:len(good)-1], ErrCorrupt},
		{"n_ext", mut(func(b []byte) []byte { le.PutUint32(b[32:], 2); return b }), ErrCorrupt},
		{"n_ext huge", mut(func(b []byte) []byte { le.PutUint32(b[32:], 1<<31); return b }), ErrCorrupt},
		{"n_crash", mut(func(b []byte) []byte { le.PutUint32(b[36:], 0); return b }), ErrCorrupt},
		{"off_crash<64", mut(func(b []byte) []byte { le.PutUint64(b[40:], 10); return b }), ErrCorrupt},
		{"off_arr<off_crash", mut(func(b []byte) []byte { le.PutUint64(b[48:], 70); return b }), ErrCorrupt},
		{"off_arr>len", mut(func(b []byte) []byte { le.PutUint64(b[48:], 1<<62); return b }), ErrCorrupt},
		{"extid", mut(func(b []byte) []byte { le.PutUint16(b[len(b)-32+18:], 3); return b }), ErrCorrupt},
		{"crashid", mut(func(b []byte) []byte { le.PutUint32(b[len(b)-32+20:], 2); return b }), ErrCorrupt},
		{"ext not utf8", mut(func(b []byte) []byte { b[64] = 0xff; return b }), ErrCorrupt},
		{"lying flag", mut(func(b []byte) []byte { le.PutUint64(b[len(b)-4*32+24:], 9); return b }), ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse(tc.b); !errors.Is(err, tc.want) {
				t.Fatalf("Parse = %v, want %v", err, tc.want)
			}
		})
	}
	// Minor versions of major 1 are accepted; reserved bytes are ignored.
	b := mut(func(b []byte) []byte { le.PutUint16(b[10:], 3); b[60] = 9; return b })
	if _, err := Parse(b); err != nil {
		t.Fatalf("minor 3: %v", err)
	}
}

func TestEmptyBlocks(t *testing.T) {
	for _, exts := range [][]string{nil, {""}, {"", ""}, {"a", ""}, {"", "a"}} {
		w := NewWriter()
		w.exts = exts
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		ix, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("%q: %v", exts, err)
		}
		if len(ix.Exts) != len(exts) {
			t.Fatalf("%q: got %q", exts, ix.Exts)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"", 0, true}, {"\x00garbage", 0, true}, {"00000000012\x00", 10, true}, {"00000000012 ", 10, true},
		{"  17  ", 15, true}, {"\t7\n", 7, true}, {"0o17", 15, true}, {"0O_17", 15, true}, {"1_7", 15, true},
		{"+7", 7, true}, {"-0", 0, true}, {"77777777777", 8589934591, true},
		{"   ", 0, false}, {"8", 0, false}, {"-1", 0, false}, {"1__7", 0, false}, {"17_", 0, false},
		{"_17", 0, false}, {"0o", 0, false}, {"1 7", 0, false}, {"\x80\x00\x00\x00", 0, false}, {"\xf410", 0, false},
		{"0x10", 0, false},
	}
	for _, tc := range tests {
		got, ok := parseSize([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseSize(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSplitName(t *testing.T) {
	tests := []struct{ name, stem, ext string }{
		{"a/x.jpg", "x", "jpg"}, {"img.seg.PNG", "img", "seg.png"}, {"GlobalHead.0.0", "GlobalHead", "0.0"},
		{"noext", "noext", ""}, {"dir/", "", ""}, {"./PaxHeaders.1/file.txt", "file", "txt"},
		{"././@PaxHeader", "@PaxHeader", ""}, {".hidden", "", "hidden"}, {"k.İ", "k", "i\u0307"},
		{"k.ΑΣ", "k", "ας"}, {"k.ΣΑ", "k", "σα"},
	}
	for _, tc := range tests {
		stem, ext := SplitName(tc.name)
		if stem != tc.stem || ext != tc.ext {
			t.Errorf("SplitName(%q) = %q, %q; want %q, %q", tc.name, stem, ext, tc.stem, tc.ext)
		}
	}
}

// TestDecodeReplacePython compares DecodeReplace and PyLower with the system Python on
// awkward byte strings; it is skipped when python3 is absent.
func TestDecodeReplacePython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	inputs := [][]byte{
		{0xff}, {0xc0, 0x80}, {0xe0, 0x80, 0x80}, {0xe0, 0xa0}, {0xe0, 0xa0, 'a'}, {0xed, 0xa0, 0x80},
		{0xf0, 0x90, 0x80}, {0xf0, 0x90, 0x80, 0x80}, {0xf4, 0x90, 0x80, 0x80}, {0xf5, 0x80}, {0xe1, 0x80, 0xe1},
		{'a', 0x80, 0x80, 'b'}, {0xc2}, {0xf1, 0x80, 0x80, 0xc3, 0xa9}, []byte("ÄÖ.ÜΣ"), []byte("x.ΑΣ.b"),
		[]byte("x.İI"), []byte("x.ǅ"), []byte("x.ΑΣ'"), []byte("x.Σ"),
	}
	// Pseudo-random byte strings biased to UTF-8 lead and continuation bytes.
	seed := uint32(1)
	for i := 0; i < 300; i++ {
		n := i%9 + 1
		b := make([]byte, n)
		for j := range b {
			seed = seed*1664525 + 1013904223
			b[j] = []byte{0x80, 0xbf, 0x9f, 0xa0, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 'a', 0x8f, 0x90, 0xc1}[seed>>28]
		}
		inputs = append(inputs, b)
	}
	var in strings.Builder
	for _, b := range inputs {
		fmt.Fprintf(&in, "%x\n", b)
	}
	cmd := exec.Command(py, "-c", `import sys
for l in sys.stdin.read().split():
    s = bytes.fromhex(l).decode('utf-8', errors='replace')
    print(s.encode('utf-8').hex(), s.lower().encode('utf-8').hex())`)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("python3: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("python printed %d lines for %d inputs", len(lines), len(inputs))
	}
	for i, b := range inputs {
		got := DecodeReplace(b)
		var wantDec, wantLow string
		fmt.Sscanf(lines[i], "%x %x", &wantDec, &wantLow)
		if got != wantDec {
			t.Errorf("DecodeReplace(% x) = %+q, python %+q", b, got, wantDec)
		}
		if low := PyLower(got); low != wantLow {
			t.Errorf("PyLower(%+q) = %+q, python %+q", got, low, wantLow)
		}
	}
}

// An index of an empty file list is valid and empty.
func TestEmptyFold(t *testing.T) {
	var buf bytes.Buffer
	if _, err := NewWriter().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != HeaderSize {
		t.Fatalf("empty index is %d bytes", buf.Len())
	}
	ix, err := Parse(buf.Bytes())
	if err != nil || len(ix.Rows) != 0 || !ix.Header.Contiguous() {
		t.Fatalf("Parse(empty) = %+v, %v", ix, err)
	}
}

// TestParseSizePython compares parseSize with Python's int(x or b'0', 8) on awkward fields;
// it is skipped when python3 is absent.
func TestParseSizePython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	inputs := []string{"", " ", "0", "7", "8", " 17 ", "\x0b17\x0c", "\x1c17", "17\x1f", "+1", "-0", "--1", "+-1",
		"0o7", "0O7", "0o_7", "0o__7", "0_7", "07_", "_7", "0x7", "0b1", "1e3", "\xa07", "7\xa0", "\x85 7",
		"00000001234", "0000000123 ", "77777777777", "777777777777", " - 1", "- 1", "0 o7"}
	var in strings.Builder
	for _, s := range inputs {
		fmt.Fprintf(&in, "%x\n", s)
	}
	cmd := exec.Command(py, "-c", `import sys
for l in sys.stdin.read().split('\n')[:-1]:
    try:
        v = int(bytes.fromhex(l) or b'0', 8)
        print(v if v >= 0 else 'neg')
    except ValueError:
        print('err')`)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("python3: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("python printed %d lines for %d inputs", len(lines), len(inputs))
	}
	for i, s := range inputs {
		v, ok := parseSize([]byte(s))
		got := "err"
		if ok {
			got = fmt.Sprint(v)
		}
		want := lines[i]
		if want == "neg" {
			want = "err" // we reject negative sizes
		}
		if got != want {
			t.Errorf("parseSize(%q) = %s, python %s", s, got, lines[i])
		}
	}
}

// TestCompressedShard: a compressed shard is refused with a message that says why
// (not just "unsupported tar size field"), and the Writer is unchanged.
func TestCompressedShard(t *testing.T) {
	tarball := validTar()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(tarball)
	zw.Close()
	for _, tc := range []struct {
		name string
		data []byte
		kind string
	}{
		{"gzip", gz.Bytes(), "gzip-compressed"},
		{"zstd", append([]byte("\x28\xb5\x2f\xfd"), make([]byte, 600)...), "zstd-compressed"},
		{"bzip2", append([]byte("BZh91AY&SY"), make([]byte, 600)...), "bzip2-compressed"},
		{"xz", append([]byte("\xfd7zXZ\x00"), make([]byte, 600)...), "xz-compressed"},
		{"tiny gzip", gz.Bytes()[:10], "gzip-compressed"},
	} {
		w := NewWriter()
		err := w.AddShard(bytes.NewReader(tc.data), int64(len(tc.data)), "s.tar.gz")
		if !errors.Is(err, ErrCompressed) || !strings.Contains(err.Error(), tc.kind) ||
			!strings.Contains(err.Error(), "uncompressed tar") || !strings.Contains(err.Error(), "s.tar.gz") {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if w.Shards() != 0 || w.Rows() != 0 {
			t.Fatalf("%s: writer changed", tc.name)
		}
	}
	// A tar whose first member is named like a magic number is still a tar.
	b := validTar()
	copy(b, "BZh9.jpg")
	if err := NewWriter().AddShard(bytes.NewReader(b), int64(len(b)), "x.tar"); err != nil {
		t.Fatal(err)
	}
}

// TestAddFileFIFO: a named pipe as a shard is refused at once (a ReaderAt cannot be a pipe,
// and opening one would block).
func TestAddFileFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.tar")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := NewWriter().AddFile(p); !errors.Is(err, inputfile.ErrNotRegular) {
		t.Fatalf("AddFile(fifo) = %v", err)
	}
}
