package scdl

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// goldenHeader is the header of a 2-cell archive with 3 stored values over 5 genes, one var
// and one obs block, byte for byte as docs/SCDL.md §2 describes it (written by hand from the
// schema, not by the code under test).
var goldenHeader = strings.Join([]string{
	"5343444c", // magic "SCDL"
	"00010001", // version 0.1.0, endianness 1 (NETWORK)
	"00000001", // backend MEMMAP_V0
	"00000003", // 3 arrays
	"00000004" + hex.EncodeToString([]byte("DATA")) + "0000000000000003" + "00000006" + "00",
	"00000006" + hex.EncodeToString([]byte("ROWPTR")) + "0000000000000003" + "00000001" + "00",
	"00000006" + hex.EncodeToString([]byte("COLPTR")) + "0000000000000003" + "00000001" + "00",
	"00000002", // 2 feature indices
	"0000000c" + hex.EncodeToString([]byte("var_features")) + "0000000000000002" + "00000008" + "00000004",
	"00000025" + hex.EncodeToString([]byte("var_features/cumulative_sum_index.npy")),
	"00000017" + hex.EncodeToString([]byte("var_features/labels.npy")),
	"00000018" + hex.EncodeToString([]byte("var_features/version.npy")),
	"00000020" + hex.EncodeToString([]byte("var_features/dataframe_0.parquet")),
	"00",
	"0000000c" + hex.EncodeToString([]byte("obs_features")) + "0000000000000002" + "00000008" + "00000004",
	"00000025" + hex.EncodeToString([]byte("obs_features/cumulative_sum_index.npy")),
	"00000017" + hex.EncodeToString([]byte("obs_features/labels.npy")),
	"00000018" + hex.EncodeToString([]byte("obs_features/version.npy")),
	"00000020" + hex.EncodeToString([]byte("obs_features/dataframe_0.parquet")),
	"00",
	"00", // no chunked info
}, "")

func goldenStruct() *Header {
	files := func(n string) []string {
		return []string{n + "/cumulative_sum_index.npy", n + "/labels.npy", n + "/version.npy", n + "/dataframe_0.parquet"}
	}
	return &Header{Version: [3]uint8{0, 1, 0}, Backend: BackendMemmapV0, Arrays: []ArrayInfo{
		{Name: "DATA", Length: 3, DType: Float32}, {Name: "ROWPTR", Length: 3, DType: Uint8}, {Name: "COLPTR", Length: 3, DType: Uint8},
	}, Features: []FeatureIndexInfo{
		{Name: "var_features", Length: 2, DType: String, Files: files("var_features")},
		{Name: "obs_features", Length: 2, DType: String, Files: files("obs_features")},
	}}
}

func TestHeaderGolden(t *testing.T) {
	want, err := hex.DecodeString(goldenHeader)
	if err != nil {
		t.Fatal(err)
	}
	got, err := goldenStruct().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("header bytes\n got %x\nwant %x", got, want)
	}
	h, err := ParseHeader(want)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := h.MarshalBinary()
	if !bytes.Equal(again, want) {
		t.Fatal("parse and marshal do not round-trip")
	}
}

func TestHeaderOlderLayouts(t *testing.T) {
	full, _ := hex.DecodeString(goldenHeader)
	// Schema 0.0.x: no chunked-info byte; older still: no feature indices at all.
	noChunk := full[:len(full)-1]
	h, err := ParseHeader(noChunk)
	if err != nil || len(h.Features) != 2 {
		t.Fatalf("header without the chunked flag: %v", err)
	}
	arraysOnly := (&Header{Version: [3]uint8{0, 0, 2}, Backend: BackendMemmapV0, Arrays: goldenStruct().Arrays})
	b, _ := arraysOnly.MarshalBinary()
	b = b[:len(b)-5] // drop the feature index count and the chunked flag
	h, err = ParseHeader(b)
	if err != nil || len(h.Arrays) != 3 || len(h.Features) != 0 {
		t.Fatalf("arrays-only header: %v %+v", err, h)
	}
	chunked := &Header{Version: Version, Backend: BackendChunkedMemmapV0, Arrays: goldenStruct().Arrays, Chunked: &ChunkedInfo{ChunkSize: 100, NumChunks: 3, TotalRows: 250}}
	b, err = chunked.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	h, err = ParseHeader(b)
	if err != nil || h.Chunked == nil || *h.Chunked != *chunked.Chunked {
		t.Fatalf("chunked: %v %+v", err, h)
	}
}

func TestHeaderRules(t *testing.T) {
	golden, _ := hex.DecodeString(goldenHeader)
	mod := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(golden)) }
	marshal := func(f func(h *Header)) []byte {
		h := goldenStruct()
		f(h)
		// Bypass Validate: encode what a careless writer would.
		b := []byte(Magic)
		b = append(b, h.Version[0], h.Version[1], h.Version[2], 1, 0, 0, 0, byte(h.Backend), 0, 0, 0, byte(len(h.Arrays)))
		for _, a := range h.Arrays {
			b = appendString(b, a.Name)
			b = append(b, 0, 0, 0, 0, 0, 0, 0, byte(a.Length), 0, 0, 0, byte(a.DType))
			b = appendShape(b, a.Shape)
		}
		b = append(b, 0, 0, 0, byte(len(h.Features)))
		for _, f := range h.Features {
			b = appendString(b, f.Name)
			b = append(b, 0, 0, 0, 0, 0, 0, 0, byte(f.Length), 0, 0, 0, byte(f.DType), 0, 0, 0, byte(len(f.Files)))
			for _, p := range f.Files {
				b = appendString(b, p)
			}
			b = appendShape(b, f.Shape)
		}
		return append(b, 0)
	}
	cases := []struct {
		name, rule string
		b          []byte
	}{
		{"magic", "magic", mod(func(b []byte) []byte { b[0] = 'X'; return b })},
		{"endianness", "endianness", mod(func(b []byte) []byte { b[7] = 2; return b })},
		{"short", "core header size", golden[:15]},
		{"truncated descriptor", "truncated", golden[:len(golden)-100]},
		{"array count lies", "array count", mod(func(b []byte) []byte { b[15] = 200; return b })},
		{"feature count lies", "feature index count", mod(func(b []byte) []byte { b[83] = 0x7f; return b })},
		{"trailing bytes", "header size", append(bytes.Clone(golden), 0)},
		{"bad chunked flag", "chunked info flag", mod(func(b []byte) []byte { b[len(b)-1] = 7; return b })},
		{"newer major", "version", mod(func(b []byte) []byte { b[4] = 1; return b })},
		{"backend", "backend", mod(func(b []byte) []byte { b[11] = 9; return b })},
		{"empty name", "string length", marshal(func(h *Header) { h.Arrays[0].Name = " " })},
		{"zero-length name", "string length", mod(func(b []byte) []byte {
			return append(b[:16], append([]byte{0, 0, 0, 0}, b[20:]...)...)
		})},
		{"utf-8", "UTF-8", marshal(func(h *Header) { h.Arrays[0].Name = "DA\xffA" })},
		{"duplicate arrays", "unique array names", marshal(func(h *Header) { h.Arrays[1].Name = "DATA" })},
		{"duplicate features", "unique feature index names", marshal(func(h *Header) { h.Features[1].Name = "var_features" })},
		{"array/feature conflict", "no array/feature index name conflict", marshal(func(h *Header) { h.Features[0].Name = "DATA" })},
		{"dtype", "dtype", marshal(func(h *Header) { h.Arrays[2].DType = 42 })},
		{"zero shape dim", "positive shape", marshal(func(h *Header) { h.Arrays[0].Shape = []uint32{3, 0} })},
		{"shape without dims", "shape dims", mod(func(b []byte) []byte {
			// DATA's has_shape byte is at 16+4+4+8+4 = 36: set it and give 0 dims.
			return append(append(b[:36], 1, 0, 0, 0, 0), b[37:]...)
		})},
		{"empty index file name", "string length", marshal(func(h *Header) { h.Features[0].Files[1] = "" })},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseHeader(c.b)
			var re *RuleError
			if !errors.As(err, &re) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v, want a RuleError", err)
			}
			if re.Rule != c.rule {
				t.Fatalf("rule %q (%v), want %q", re.Rule, err, c.rule)
			}
		})
	}
}

func FuzzParseHeader(f *testing.F) {
	golden, _ := hex.DecodeString(goldenHeader)
	f.Add(golden)
	f.Add(golden[:len(golden)-1])
	f.Add(golden[:60])
	f.Add([]byte("SCDL\x00\x01\x00\x01\x00\x00\x00\x01\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHeader(b)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		// Whatever parses must re-encode to a header that parses to the same thing.
		out, err := h.MarshalBinary()
		if err != nil {
			t.Fatalf("parsed header does not marshal: %v", err)
		}
		h2, err := ParseHeader(out)
		if err != nil {
			t.Fatalf("re-encoded header does not parse: %v", err)
		}
		out2, _ := h2.MarshalBinary()
		if !bytes.Equal(out, out2) {
			t.Fatal("marshal is not stable")
		}
	})
}
