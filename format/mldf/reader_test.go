package mldf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// goldenPath is the tiny golden file of docs/FORMAT.md §11, built by manifest's TestGolden.
var goldenPath = filepath.Join("..", "..", "testdata", "golden", "tiny.mldf")

func golden(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Offsets in the golden file (docs/FORMAT.md §11).
const (
	hdr       = HeaderOffset // header-relative offset + hdr = file offset
	offMajor  = hdr + 0
	offMinor  = hdr + 2
	offFlags  = hdr + 4
	offNSamp  = hdr + 8
	offNField = hdr + 16
	offPad    = hdr + 18
	offPage   = hdr + 20
	offFDP    = hdr + 24
	offMeta   = hdr + 32
	offData   = hdr + 40
	offAlloc  = hdr + 48
	offSum    = hdr + 56
	desc0     = 80
	desc1     = 288
	rows      = 13200
	rowSize   = 24
	entries   = 13296
)

func row(i int) int   { return rows + i*rowSize }
func entry(k int) int { return entries + k*16 }

// rehash recomputes the header checksum of a file whose geometry is the golden's, so that a
// test reaches the structural rule it targets rather than V1.
func rehash(b []byte) {
	n := le.Uint64(b[offAlloc:])
	if n > uint64(len(b)) {
		n = uint64(len(b))
	}
	sum := HeaderChecksum(b[hdr:hdr+64], b[desc0:desc0+2*208], b[rows:min(uint64(len(b)), entries)], b[n:])
	le.PutUint64(b[offSum:], sum)
}

func TestGoldenValues(t *testing.T) {
	for _, mm := range []bool{true, false} {
		r, err := open(goldenPath, mm)
		if err != nil {
			t.Fatal(err)
		}
		if r.Mapped() != mm {
			t.Errorf("Mapped() = %v, want %v", r.Mapped(), mm)
		}
		want := [][]byte{[]byte("hello"), nil, nil, []byte("world!")}
		want[2] = make([]byte, 5000)
		for i := range want[2] {
			want[2][i] = byte(i % 251)
		}
		labels := []int64{7, -1, 42, 3}
		for i := range 4 {
			v, err := r.Int(i, 0)
			if err != nil || v != labels[i] {
				t.Errorf("mmap=%v sample %d: Int %d %v", mm, i, v, err)
			}
			p, err := r.Payload(i, 1)
			if err != nil || !bytes.Equal(p, want[i]) {
				t.Errorf("mmap=%v sample %d: Payload %q %v", mm, i, p, err)
			}
		}
		rep, err := r.Verify()
		if err != nil {
			t.Fatal(err)
		}
		if rep.PayloadBytes != 5011 || rep.PagesUsed != 3 || rep.PageFill != 5011.0/9104 {
			t.Errorf("report %+v", rep)
		}
		d := r.Describe()
		if d.Version() != "1.0" || strings.Join(d.FlagNames, ",") != "little-endian,checksummed" ||
			d.PagesUsed != 3 || d.DataPages != 3 || d.RowSize != 24 || len(d.Fields) != 2 ||
			d.Fields[1].TypeName != "BYTES" || d.Fields[1].Payloads != 3 || d.Fields[1].PayloadBytes != 5011 ||
			d.Fields[1].MaxPayload != 5000 || d.Fields[1].RowOffset != 8 || d.Fields[0].ArgumentsHex() != "" {
			t.Errorf("describe %+v", d)
		}
		s, err := r.Sample(2)
		if err != nil || len(s) != 2 || s[0].String() != "label INT 42" || s[1].String() != "data BYTES ptr=8192 size=5000" {
			t.Errorf("Sample(2) = %v, %v", s, err)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Payload(0, 1); !errors.Is(err, ErrClosed) {
			t.Errorf("after Close: %v", err)
		}
		if r.Row(0) != nil {
			t.Error("Row after Close")
		}
	}
}

func TestAccessorErrors(t *testing.T) {
	r, err := FromBytes("tiny", golden(t))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		err  error
		call func() error
	}{
		{"sample -1", ErrOutOfRange, func() error { _, err := r.Payload(-1, 1); return err }},
		{"sample 4", ErrOutOfRange, func() error { _, err := r.Int(4, 0); return err }},
		{"field 2", ErrOutOfRange, func() error { _, err := r.Payload(0, 2); return err }},
		{"payload of INT", ErrFieldType, func() error { _, err := r.Payload(0, 0); return err }},
		{"Int of BYTES", ErrFieldType, func() error { _, err := r.Int(0, 1); return err }},
		{"Float of INT", ErrFieldType, func() error { _, err := r.Float(0, 0); return err }},
		{"Image of BYTES", ErrFieldType, func() error { _, _, err := r.Image(0, 1); return err }},
		{"Audio of BYTES", ErrFieldType, func() error { _, _, err := r.Audio(0, 1); return err }},
		{"Text of BYTES", ErrFieldType, func() error { _, _, err := r.Text(0, 1); return err }},
		{"Sample 9", ErrOutOfRange, func() error { _, err := r.Sample(9); return err }},
	}
	for _, c := range cases {
		if err := c.call(); !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
		} else if !strings.HasPrefix(err.Error(), "tiny: ") {
			t.Errorf("%s: error does not name the file: %v", c.name, err)
		}
	}
	if r.Row(-1) != nil || r.Row(4) != nil || r.Meta(0, 2) != nil || r.Meta(0, -1) != nil {
		t.Error("out-of-range Row/Meta not nil")
	}
	if e := r.AllocEntry(3); e != (AllocEntry{}) {
		t.Error("AllocEntry(3) not zero")
	}
}

// hostile is one mutation of the golden file and the error it must produce.
type hostile struct {
	name   string
	mut    func(b []byte) []byte
	rehash bool   // recompute the header checksum after mut
	err    error  // the package error expected
	cause  error  // an underlying manifest error also expected, or nil
	rule   string // the FORMAT.md rule expected
	open   bool   // the error comes from Open (else from Verify)
	where  string // a substring the message must hold
}

func set16(off int, v uint16) func([]byte) []byte {
	return func(b []byte) []byte { le.PutUint16(b[off:], v); return b }
}
func set32(off int, v uint32) func([]byte) []byte {
	return func(b []byte) []byte { le.PutUint32(b[off:], v); return b }
}
func set64(off int, v uint64) func([]byte) []byte {
	return func(b []byte) []byte { le.PutUint64(b[off:], v); return b }
}
func flip(off int, mask byte) func([]byte) []byte {
	return func(b []byte) []byte { b[off] ^= mask; return b }
}
func muts(fs ...func([]byte) []byte) func([]byte) []byte {
	return func(b []byte) []byte {
		for _, f := range fs {
			b = f(b)
		}
		return b
	}
}

var hostileCases = []hostile{
	// Open: R1..R12.
	{name: "wrong signature", mut: flip(1, 0x20), err: ErrSignature, rule: "R1", open: true},
	{name: "empty file", mut: func([]byte) []byte { return nil }, err: ErrSignature, rule: "R1", open: true},
	{name: "PNG file", mut: func([]byte) []byte { return []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR") }, err: ErrSignature, rule: "R1", open: true},
	{name: "truncated header", mut: func(b []byte) []byte { return b[:40] }, err: ErrCorrupt, rule: "R2", open: true},
	{name: "major 2", mut: set16(offMajor, 2), err: ErrVersion, rule: "R3", open: true, where: "version 2.0"},
	{name: "major 0", mut: set16(offMajor, 0), err: ErrVersion, rule: "R3", open: true},
	{name: "not little-endian", mut: set32(offFlags, 4), err: ErrCorrupt, cause: ErrBadHeader, rule: "R4", open: true},
	{name: "encrypted", mut: set32(offFlags, 1|4|8), err: ErrUnsupported, rule: "R4", open: true},
	// One flipped bit must not turn the checksums off.
	{name: "checksummed flag cleared (0x05 -> 0x01)", mut: flip(offFlags, 0x04), err: ErrCorrupt, rule: "R4", open: true, where: "header checksum is 9ab57030a6859133"},
	{name: "checksummed flag cleared, header checksum zeroed", mut: muts(flip(offFlags, 0x04), set64(offSum, 0)), err: ErrCorrupt, rule: "V6",
		where: "check is 9a71bb4c"},
	{name: "unchecksummed file, header checksum bit set", mut: muts(unchecksum, flip(offSum+3, 0x10)), err: ErrCorrupt, rule: "R4", open: true},
	{name: "unchecksummed file, check bit set", mut: muts(unchecksum, flip(entry(2)+12, 0x01)), err: ErrCorrupt, rule: "V6",
		where: "sample 3"},
	{name: "compressed", mut: set32(offFlags, 1|2|4), err: ErrUnsupported, rule: "R4", open: true},
	{name: "page size not a power of two", mut: set32(offPage, 3000), err: ErrCorrupt, cause: ErrBadHeader, rule: "R5", open: true},
	{name: "page size zero", mut: set32(offPage, 0), err: ErrCorrupt, rule: "R5", open: true},
	{name: "page size 1024", mut: set32(offPage, 1024), err: ErrCorrupt, rule: "R5", open: true},
	{name: "num_fields 0", mut: set16(offNField, 0), err: ErrCorrupt, rule: "R6", open: true},
	{name: "alloc_table_ptr past EOF", mut: set64(offAlloc, 1<<40), err: ErrCorrupt, rule: "R7", open: true, where: "alloc_table_ptr"},
	{name: "metadata_ptr max", mut: set64(offMeta, 1<<64-1), err: ErrCorrupt, rule: "R7", open: true, where: "metadata_ptr"},
	{name: "data_ptr past EOF", mut: set64(offData, 16384), err: ErrCorrupt, rule: "R7", open: true},
	{name: "field_desc_ptr past EOF", mut: set64(offFDP, 1<<63), err: ErrCorrupt, rule: "R7", open: true},
	{name: "field_desc_ptr inside header", mut: set64(offFDP, 40), err: ErrCorrupt, rule: "R8", open: true},
	{name: "field_desc_ptr unaligned", mut: set64(offFDP, 81), err: ErrCorrupt, rule: "R8", open: true},
	{name: "num_fields file cannot hold", mut: set16(offNField, 65535), err: ErrCorrupt, rule: "R8", open: true, where: "num_fields 65535"},
	{name: "descriptors overlap data", mut: set64(offFDP, 4000), err: ErrCorrupt, rule: "R8", open: true, where: "overlap"},
	{name: "data_ptr not page aligned", mut: set64(offData, 4104), err: ErrCorrupt, rule: "R9", open: true},
	{name: "page size above data_ptr alignment", mut: set32(offPage, 8192), err: ErrCorrupt, rule: "R9", open: true},
	{name: "data_ptr after metadata_ptr", mut: muts(set64(offMeta, 8192), set64(offData, 12288)), err: ErrCorrupt, rule: "R9", open: true},
	{name: "duplicate field name", mut: func(b []byte) []byte { copy(b[desc1:], "label\x00"); return b }, err: ErrCorrupt, rule: "R10", open: true, where: "duplicate"},
	{name: "unknown type", mut: set16(desc1+64, 99), err: ErrCorrupt, cause: ErrUnknownType, rule: "R10", open: true},
	{name: "reserved video type", mut: set16(desc1+64, 30), err: ErrCorrupt, cause: ErrUnknownType, rule: "R10", open: true},
	{name: "wrong metadata size", mut: set32(desc0+68, 16), err: ErrCorrupt, cause: ErrMetaSize, rule: "R10", open: true},
	{name: "empty field name", mut: func(b []byte) []byte { b[desc0] = 0; return b }, err: ErrCorrupt, cause: ErrFieldName, rule: "R10", open: true},
	{name: "name not terminated", mut: func(b []byte) []byte { copy(b[desc0:desc0+64], bytes.Repeat([]byte("a"), 64)); return b }, err: ErrCorrupt, cause: ErrFieldName, rule: "R10", open: true},
	{name: "name not UTF-8", mut: func(b []byte) []byte { b[desc0] = 0xff; return b }, err: ErrCorrupt, cause: ErrFieldName, rule: "R10", open: true},
	{name: "junk after name NUL", mut: func(b []byte) []byte { b[desc0+10] = 'x'; return b }, err: ErrCorrupt, cause: ErrFieldName, rule: "R10", open: true},
	{name: "metadata_ptr unaligned", mut: set64(offMeta, 13201), err: ErrCorrupt, rule: "R11", open: true},
	{name: "num_samples overflow", mut: set64(offNSamp, 1<<62), err: ErrCorrupt, rule: "R11", open: true, where: "past the end"},
	{name: "num_samples max", mut: set64(offNSamp, 1<<64-1), err: ErrCorrupt, rule: "R11", open: true},
	{name: "num_samples file cannot hold", mut: set64(offNSamp, 1000), err: ErrCorrupt, rule: "R11", open: true},
	{name: "num_samples too small", mut: set64(offNSamp, 3), err: ErrCorrupt, rule: "R11", open: true, where: "does not end at alloc_table_ptr"},
	{name: "metadata overlaps alloc table", mut: set64(offAlloc, 13280), err: ErrCorrupt, rule: "R11", open: true},
	{name: "alloc table ragged", mut: func(b []byte) []byte { return append(b, 1, 2, 3) }, err: ErrCorrupt, rule: "R12", open: true},
	{name: "alloc table truncated", mut: func(b []byte) []byte { return b[:len(b)-8] }, err: ErrCorrupt, rule: "R12", open: true},

	// Verify: the tables (checksum recomputed so the structural rule is reached).
	{name: "unsorted alloc table", rehash: true, err: ErrCorrupt, rule: "V2", where: "not sorted", mut: func(b []byte) []byte {
		e0 := append([]byte(nil), b[entry(0):entry(1)]...)
		copy(b[entry(0):], b[entry(1):entry(2)])
		copy(b[entry(1):], e0)
		return b
	}},
	{name: "overlapping payloads", rehash: true, err: ErrCorrupt, rule: "V2", where: "overlaps",
		mut: muts(set64(entry(2), 13188), set64(row(3)+8, 13188))},
	{name: "duplicate entries", rehash: true, err: ErrCorrupt, rule: "V2", mut: set64(entry(2), 8192)},
	{name: "empty entry", rehash: true, err: ErrCorrupt, rule: "V2", where: "size 0", mut: set32(entry(0)+8, 0)},
	{name: "entry outside data region", rehash: true, err: ErrCorrupt, rule: "V3", mut: set64(entry(2), 13196)},
	{name: "entry below data region", rehash: true, err: ErrCorrupt, rule: "V3", mut: set64(entry(0), 4000)},
	{name: "small payload crosses a page", rehash: true, err: ErrCorrupt, rule: "V4", where: "crosses the page boundary at 8192",
		mut: muts(set64(entry(0), 8190), set64(row(0)+8, 8190))},
	{name: "large payload off a page boundary", rehash: true, err: ErrCorrupt, rule: "V4", where: "not on a page boundary",
		mut: muts(set64(entry(1), 8184), set64(row(2)+8, 8184))},
	{name: "row points into metadata table", rehash: true, err: ErrCorrupt, rule: "R13", where: "outside the data region", mut: set64(row(3)+8, 13300)},
	{name: "row points past EOF", rehash: true, err: ErrCorrupt, rule: "R13", mut: set64(row(3)+8, 1<<63)},
	{name: "row size wraps", rehash: true, err: ErrCorrupt, rule: "R13", mut: muts(set64(row(3)+8, 1<<64-4), set32(row(3)+16, 100))},
	{name: "empty payload with a pointer", rehash: true, err: ErrCorrupt, rule: "R13", where: "want 0", mut: set64(row(1)+8, 4096)},
	{name: "row points between entries", rehash: true, err: ErrCorrupt, rule: "V5", where: "no allocation entry", mut: set64(row(3)+8, 13194)},
	{name: "row size differs from entry", rehash: true, err: ErrCorrupt, rule: "V5", where: "has size 6", mut: set32(row(3)+16, 5)},
	{name: "payload referenced twice", rehash: true, err: ErrCorrupt, rule: "V5", where: "also referenced by sample 2",
		mut: muts(set64(row(3)+8, 8192), set32(row(3)+16, 5000))},
	{name: "entry not referenced", rehash: true, err: ErrCorrupt, rule: "V5", where: "not referenced",
		mut: muts(set64(row(3)+8, 0), set32(row(3)+16, 0))},

	// Verify: flipped bits, caught by the checksums (V1, V6) or the zero-gap rule (V7).
	{name: "bit in payload", mut: flip(8200, 0x10), err: ErrChecksum, rule: "V6", where: "sample 2"},
	{name: "bit in last payload", mut: flip(13197, 0x01), err: ErrChecksum, rule: "V6", where: "sample 3"},
	{name: "bit in header pad", mut: flip(offPad, 0x01), err: ErrChecksum, rule: "V1"},
	{name: "bit in header minor", mut: flip(offMinor, 0x04), err: ErrChecksum, rule: "V1"},
	{name: "bit in header checksum", mut: flip(offSum+7, 0x80), err: ErrChecksum, rule: "V1"},
	{name: "bit in descriptor arguments", mut: flip(desc1+76+5, 0x02), err: ErrChecksum, rule: "V1"},
	{name: "bit in descriptor pad", mut: flip(desc0+72, 0x02), err: ErrChecksum, rule: "V1"},
	{name: "bit in descriptor flags", mut: flip(desc0+66, 0x02), err: ErrChecksum, rule: "V1"},
	{name: "bit in metadata value", mut: flip(row(1), 0x40), err: ErrChecksum, rule: "V1"},
	{name: "bit in metadata pad", mut: flip(row(2)+20, 0x01), err: ErrChecksum, rule: "V1"},
	{name: "bit in alloc check", mut: flip(entry(1)+12, 0x01), err: ErrChecksum, rule: "V1"},
	{name: "bit in alloc pointer", mut: flip(entry(2)+1, 0x01), err: ErrChecksum, rule: "V1"},
	{name: "bit in payload check after rehash", rehash: true, mut: flip(entry(1)+13, 0x01), err: ErrChecksum, rule: "V6"},
	{name: "bit in gap before descriptors", mut: flip(75, 0x01), err: ErrCorrupt, rule: "V7", where: "byte 75"},
	{name: "bit in gap after descriptors", mut: flip(1000, 0x01), err: ErrCorrupt, rule: "V7", where: "byte 1000"},
	{name: "bit in gap between payloads", mut: flip(4101, 0x01), err: ErrCorrupt, rule: "V7", where: "byte 4101"},
	{name: "bit in gap at data end", mut: flip(13199, 0x01), err: ErrCorrupt, rule: "V7", where: "byte 13199"},
	// V6 and V7 are checked in one pass: the order of the reports stays V6, then V7 in file order.
	{name: "bit in a gap and in a later payload", mut: muts(flip(4101, 0x01), flip(8200, 0x10)), err: ErrChecksum, rule: "V6", where: "sample 2"},
	{name: "bits in a gap between payloads and before the data", mut: muts(flip(4101, 0x01), flip(1000, 0x01)), err: ErrCorrupt, rule: "V7", where: "byte 1000"},
}

func TestHostile(t *testing.T) {
	dir := t.TempDir()
	for _, c := range hostileCases {
		t.Run(c.name, func(t *testing.T) {
			b := c.mut(golden(t))
			if c.rehash {
				rehash(b)
			}
			path := filepath.Join(dir, "f.mldf")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, mm := range []bool{true, false} {
				var err error
				r, oerr := open(path, mm)
				if c.open {
					err = oerr
				} else {
					if oerr != nil {
						t.Fatalf("Open: %v", oerr)
					}
					_, err = r.Verify()
					if c.rule == "R13" {
						checkPayloadsFail(t, r)
					}
					r.Close()
				}
				checkErr(t, err, c, path)
			}
		})
	}
}

// checkPayloadsFail checks that reading every payload either succeeds or fails with ErrCorrupt
// under rule R13, and that at least one fails.
func checkPayloadsFail(t *testing.T, r *Reader) {
	t.Helper()
	failed := false
	for i := range r.NumSamples() {
		if _, err := r.Payload(i, 1); err != nil {
			var re *RuleError
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &re) || re.Rule != "R13" || re.Sample != i || re.Name != "data" {
				t.Errorf("Payload(%d): %v", i, err)
			}
			failed = true
		}
	}
	if !failed {
		t.Error("no payload read failed")
	}
}

func checkErr(t *testing.T, err error, c hostile, path string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v (rule %s)", c.err, c.rule)
	}
	if !errors.Is(err, c.err) {
		t.Errorf("error %v, want %v", err, c.err)
	}
	if c.cause != nil && !errors.Is(err, c.cause) {
		t.Errorf("error %v does not wrap %v", err, c.cause)
	}
	var re *RuleError
	if !errors.As(err, &re) {
		t.Fatalf("error %v is not a *RuleError", err)
	}
	if re.Rule != c.rule {
		t.Errorf("rule %s, want %s: %v", re.Rule, c.rule, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, path+": ") {
		t.Errorf("error does not start with the file name: %v", err)
	}
	if c.where != "" && !strings.Contains(msg, c.where) {
		t.Errorf("error %q does not contain %q", msg, c.where)
	}
}

func TestMinorVersionAccepted(t *testing.T) {
	b := golden(t)
	le.PutUint16(b[offMinor:], 9)
	rehash(b)
	r, err := FromBytes("minor9", b)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Verify()
	if err != nil {
		t.Fatal(err)
	}
	if rep.GapsChecked || !rep.ChecksumsOK {
		t.Errorf("report %+v: want gaps unchecked (newer minor), checksums ok", rep)
	}
	// A newer minor may use the gaps.
	b[75] = 1
	r, _ = FromBytes("minor9", b)
	if _, err := r.Verify(); err != nil {
		t.Errorf("minor 9 with gap byte: %v", err)
	}
}

// unchecksum turns the golden file into one written without checksums: flag bit 2 clear,
// zero header checksum, zero checks.
func unchecksum(b []byte) []byte {
	le.PutUint32(b[offFlags:], FlagLittleEndian)
	le.PutUint64(b[offSum:], 0)
	for k := range 3 {
		le.PutUint32(b[entry(k)+12:], 0)
	}
	return b
}

func TestUnchecksummed(t *testing.T) {
	b := unchecksum(golden(t))
	b[8200] ^= 1 // not detected without checksums
	r, err := FromBytes("plain", b)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Verify()
	if err != nil || rep.Checksummed || rep.ChecksumsOK {
		t.Errorf("Verify %+v %v", rep, err)
	}
}

// TestEveryByteFlip flips one bit of every byte of the golden file: Open or Verify must
// report it, without panicking.
func TestEveryByteFlip(t *testing.T) {
	orig := golden(t)
	b := make([]byte, len(orig))
	for off := range orig {
		copy(b, orig)
		b[off] ^= 1 << (off % 8)
		r, err := FromBytes("flip", b)
		if err == nil {
			_, err = r.Verify()
		}
		if err == nil {
			t.Errorf("flip at byte %d not detected", off)
			continue
		}
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrSignature) &&
			!errors.Is(err, ErrVersion) && !errors.Is(err, ErrUnsupported) {
			t.Errorf("flip at byte %d: unexpected error class: %v", off, err)
		}
	}
}

func TestOpenMissing(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "nope.mldf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Open(t.TempDir()); !errors.Is(err, ErrUnsupported) {
		t.Errorf("directory: %v", err)
	}
	if _, err := Verify(goldenPath); err != nil {
		t.Errorf("Verify(golden): %v", err)
	}
}

// readAll exercises every accessor on every sample and field, then Describe and Verify.
func readAll(r *Reader) {
	for f := range r.Fields() {
		_, _ = r.ClassNames(f)
	}
	for i := range r.NumSamples() {
		for f, fd := range r.Fields() {
			_ = r.Meta(i, f)
			switch {
			case fd.Type == TypeInt:
				_, _ = r.Int(i, f)
			case fd.Type == TypeFloat:
				_, _ = r.Float(i, f)
			case isImage(fd.Type):
				_, _, _ = r.Image(i, f)
			case isAudio(fd.Type):
				_, _, _ = r.Audio(i, f)
			case isText(fd.Type):
				_, _, _ = r.Text(i, f)
			default:
				_, _ = r.Payload(i, f)
			}
		}
		_, _ = r.Sample(i)
	}
	for range r.AllocTable() {
	}
	d := r.Describe()
	for _, f := range d.Fields {
		_ = f.ArgumentsHex()
	}
	_, _ = r.Verify()
}

func FuzzOpen(f *testing.F) {
	g := golden(f)
	f.Add(g)
	f.Add(g[:PreambleSize])
	if c, err := os.ReadFile(classesPath); err == nil { // a class-names block (minor version 1)
		f.Add(c)
		for _, m := range classCases {
			f.Add(m.mut(append([]byte(nil), c...)))
		}
	}
	for _, c := range hostileCases {
		b := c.mut(append([]byte(nil), g...))
		if c.rehash {
			rehash(b)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r, err := FromBytes("fuzz", b)
		if err == nil {
			readAll(r)
		}
		runtime.ReadMemStats(&after)
		// Allocation must follow the input size, never a header value.
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(64*len(b)+1<<20); got > limit {
			t.Fatalf("allocated %d bytes for a %d-byte file", got, len(b))
		}
	})
}

// TestVerifyRefsOutOfOrder: rows may reference the allocation entries in any order (V5 asks
// for a one-to-one match, not an order); verify leaves its in-order fast path for the bitmap
// and accepts the file.
func TestVerifyRefsOutOfOrder(t *testing.T) {
	b := golden(t)
	r0 := append([]byte(nil), b[row(0)+8:row(0)+20]...)
	copy(b[row(0)+8:row(0)+20], b[row(3)+8:row(3)+20])
	copy(b[row(3)+8:row(3)+20], r0)
	rehash(b)
	path := filepath.Join(t.TempDir(), "swapped.mldf")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(path)
	if err != nil {
		t.Fatalf("rows referencing entries out of order: %v", err)
	}
	if rep.Entries != 3 || rep.EmptyPayloads != 1 {
		t.Fatalf("report %+v", rep)
	}
}
