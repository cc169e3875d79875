package mldf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
)

func goldenBytes(tb testing.TB) []byte {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "tiny.mldf"))
	if err != nil {
		tb.Skip("golden file missing:", err)
	}
	return b
}

// FuzzDecodeHeader: DecodeHeader never panics; a header it accepts encodes back to the same
// bytes (the pad at @18 excepted, which Put writes as zero).
func FuzzDecodeHeader(f *testing.F) {
	g := goldenBytes(f)
	f.Add(g[HeaderOffset:PreambleSize])
	f.Add(make([]byte, HeaderSize))
	f.Add(g[HeaderOffset : HeaderOffset+10])
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeHeader(b)
		if err != nil {
			return
		}
		if h.VersionMajor != VersionMajor || h.Flags&FlagLittleEndian == 0 || h.PageSize&(h.PageSize-1) != 0 || h.PageSize == 0 {
			t.Fatalf("accepted %+v", h)
		}
		out := make([]byte, HeaderSize)
		h.Put(out)
		want := append([]byte(nil), b[:HeaderSize]...)
		want[18], want[19] = 0, 0
		if !bytes.Equal(out, want) {
			t.Fatalf("round trip:\n% x\n% x", out, want)
		}
	})
}

// FuzzDecodeFieldDesc: DecodeFieldDesc never panics; a descriptor it accepts encodes back to
// the same bytes (pad @72 and reserved @204 excepted) and decodes to the same value.
func FuzzDecodeFieldDesc(f *testing.F) {
	g := goldenBytes(f)
	f.Add(g[80 : 80+FieldDescSize])
	f.Add(g[288 : 288+FieldDescSize])
	f.Add(make([]byte, FieldDescSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := DecodeFieldDesc(b)
		if err != nil {
			return
		}
		if ValidateName(d.Name) != nil || !d.Type.Known() {
			t.Fatalf("accepted %+v", d)
		}
		out := make([]byte, FieldDescSize)
		if err := d.Put(out); err != nil {
			t.Fatalf("Put of an accepted descriptor: %v", err)
		}
		want := append([]byte(nil), b[:FieldDescSize]...)
		clear(want[72:76])
		clear(want[204:208])
		if !bytes.Equal(out, want) {
			t.Fatalf("round trip:\n% x\n% x", out, want)
		}
		d2, err := DecodeFieldDesc(out)
		if err != nil || !reflect.DeepEqual(d2, d) {
			t.Fatalf("re-decode %+v %v", d2, err)
		}
	})
}

func TestDecodeFieldDescErrors(t *testing.T) {
	g := goldenBytes(t)
	base := g[80 : 80+FieldDescSize]
	cases := []struct {
		name string
		mut  func(b []byte)
		want error
	}{
		{"short", nil, ErrShort},
		{"empty name", func(b []byte) { b[0] = 0 }, ErrFieldName},
		{"unterminated", func(b []byte) { copy(b, bytes.Repeat([]byte{'x'}, 64)) }, ErrFieldName},
		{"junk after NUL", func(b []byte) { b[63] = 'x' }, ErrFieldName},
		{"bad UTF-8", func(b []byte) { b[1] = 0xC0 }, ErrFieldName},
		{"unknown type", func(b []byte) { le.PutUint16(b[64:], 7) }, ErrUnknownType},
		{"video reserved", func(b []byte) { le.PutUint16(b[64:], 31) }, ErrUnknownType},
		{"metadata size", func(b []byte) { le.PutUint32(b[68:], 24) }, ErrMetaSize},
	}
	for _, c := range cases {
		b := append([]byte(nil), base...)
		if c.mut == nil {
			b = b[:100]
		} else {
			c.mut(b)
		}
		if _, err := DecodeFieldDesc(b); err == nil || !errorsIs(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

func TestMetaSizeTable(t *testing.T) {
	for id := range 256 {
		tid := TypeID(id)
		size, payload := MetaSize(tid)
		if tid.Known() != (size != 0) {
			t.Errorf("type %d: Known %v but MetaSize %d", id, tid.Known(), size)
		}
		if payload && size < 16 {
			t.Errorf("type %s: payload struct of %d bytes", tid, size)
		}
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// FuzzDecodeClassNames feeds class-names blocks whose hash matches (so the parser, not the
// hash, decides): no panic, and a block accepted is exactly the canonical form of its names,
// which CheckClassNames accepts.
func FuzzDecodeClassNames(f *testing.F) {
	for _, s := range []string{`["cat","dog","fish \u0026 chips"]`, `["a"]`, `[]`, `["a","a"]`, `["a",""]`,
		`[ "a"]`, `["\ud800"]`, `["a\u003c"]`, `["é"]`, `["\u00e9"]`, `[1]`, `{"a":1}`, `["a"]x`, "[\"\xff\"]", `null`} {
		f.Add([]byte(s), uint32(1))
	}
	f.Fuzz(func(t *testing.T, block []byte, count uint32) {
		c := ClassLabelArgs{NumClasses: count, NamesHash: xxhash.Sum64(block), NamesSize: uint32(len(block))}
		names, err := DecodeClassNames(block, c)
		if err != nil {
			if !errors.Is(err, ErrClassNames) {
				t.Fatalf("error %v does not wrap ErrClassNames", err)
			}
			return
		}
		if uint32(len(names)) != count || CheckClassNames(names) != nil || !bytes.Equal(ClassNamesJSON(names), block) {
			t.Fatalf("accepted %q as %q", block, names)
		}
	})
}

func TestClassNamesLimits(t *testing.T) {
	long := strings.Repeat("é", MaxClassNameLen/2)
	for _, c := range []struct {
		names []string
		ok    bool
	}{
		{[]string{"a"}, true},
		{[]string{long}, true},
		{[]string{long + "x"}, false},
		{nil, false},
		{[]string{"a", "b", "a"}, false},
		{[]string{""}, false},
		{[]string{"a\xffb"}, false},
	} {
		if err := CheckClassNames(c.names); (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrClassNames)) {
			t.Errorf("%q: %v", c.names, err)
		}
	}
}
