package mldf_test

import (
	"bytes"
	"encoding/binary"
	"flag"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/format/mldf"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/tiny.mldf")

// goldenPath is testdata/golden/tiny.mldf at the repository root.
var goldenPath = filepath.Join("..", "..", "testdata", "golden", "tiny.mldf")

// The tiny golden dataset of docs/FORMAT.md §11.
var (
	goldenLabels = []int64{7, -1, 42, 3}
	goldenBig    = func() []byte {
		b := make([]byte, 5000)
		for i := range b {
			b[i] = byte(i % 251)
		}
		return b
	}()
	goldenData = [][]byte{[]byte("hello"), nil, goldenBig, []byte("world!")}
	goldenPtrs = []uint64{4096, 0, 8192, 13192}
)

// buildTiny writes the golden file byte by byte at the offsets docs/FORMAT.md §11 gives,
// without the manifest encoders, so that the test checks them independently.
func buildTiny() []byte {
	le := binary.LittleEndian
	const (
		fileSize      = 13344
		fieldDescPtr  = 80
		dataPtr       = 4096
		metadataPtr   = 13200
		allocTablePtr = 13296
		rowSize       = 24
	)
	b := make([]byte, fileSize)

	// §1 signature, bytes 0..8.
	copy(b[0:], []byte{0x89, 'M', 'L', 'D', 'F', 0x0D, 0x0A, 0x1A, 0x0A})

	// §2 header, bytes 9..72 (header-relative offsets + 9).
	hd := b[9:73]
	le.PutUint16(hd[0:], 1)     // version_major
	le.PutUint16(hd[2:], 0)     // version_minor
	le.PutUint32(hd[4:], 1|4)   // flags: little-endian | checksummed
	le.PutUint64(hd[8:], 4)     // num_samples
	le.PutUint16(hd[16:], 2)    // num_fields
	le.PutUint32(hd[20:], 4096) // page_size
	le.PutUint64(hd[24:], fieldDescPtr)
	le.PutUint64(hd[32:], metadataPtr)
	le.PutUint64(hd[40:], dataPtr)
	le.PutUint64(hd[48:], allocTablePtr)

	// §3 field descriptors at 80 and 288.
	copy(b[80:], "label")
	le.PutUint16(b[80+64:], 1) // INT
	le.PutUint32(b[80+68:], 8) // metadata_size
	copy(b[288:], "data")
	le.PutUint16(b[288+64:], 3)  // BYTES
	le.PutUint32(b[288+68:], 16) // metadata_size

	// §6 payloads.
	for s, p := range goldenData {
		copy(b[goldenPtrs[s]:], p)
	}

	// §5 metadata rows: label i64 @0, data {ptr u64 @8, size u32 @16, pad u32 @20}.
	for s := range goldenLabels {
		row := b[metadataPtr+s*rowSize:]
		le.PutUint64(row[0:], uint64(goldenLabels[s]))
		le.PutUint64(row[8:], goldenPtrs[s])
		le.PutUint32(row[16:], uint32(len(goldenData[s])))
	}

	// §7 allocation table, sorted by ptr; §8 check = CRC-32C of the payload.
	tab := crc32.MakeTable(crc32.Castagnoli)
	e := allocTablePtr
	for s, p := range goldenData {
		if len(p) == 0 {
			continue
		}
		le.PutUint64(b[e:], goldenPtrs[s])
		le.PutUint32(b[e+8:], uint32(len(p)))
		le.PutUint32(b[e+12:], crc32.Checksum(p, tab))
		e += 16
	}

	// §8 header checksum: header bytes 0..55, descriptors, metadata table, allocation table.
	var h []byte
	h = append(h, hd[:56]...)
	h = append(h, b[80:80+2*208]...)
	h = append(h, b[metadataPtr:allocTablePtr]...)
	h = append(h, b[allocTablePtr:]...)
	le.PutUint64(hd[56:], xxhash.Sum64(h))
	return b
}

func TestGolden(t *testing.T) {
	want := buildTiny()
	if *update {
		if err := os.MkdirAll(filepath.Dir(goldenPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v (run go test ./manifest -run Golden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the hand-built bytes at offset %d", goldenPath, firstDiff(got, want))
	}

	t.Run("reader", func(t *testing.T) { checkGoldenReader(t, goldenPath) })
	t.Run("encoders", func(t *testing.T) { checkGoldenEncoders(t, want) })
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// checkGoldenReader opens the golden file with the reader and checks every value.
func checkGoldenReader(t *testing.T, path string) {
	r, err := mldf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := r.Header()
	wantH := mldf.Header{VersionMajor: 1, Flags: 5, NumSamples: 4, NumFields: 2, PageSize: 4096,
		FieldDescPtr: 80, MetadataPtr: 13200, DataPtr: 4096, AllocTablePtr: 13296, Checksum: h.Checksum}
	if h != wantH {
		t.Errorf("header %+v, want %+v", h, wantH)
	}
	if r.NumSamples() != 4 {
		t.Errorf("NumSamples %d", r.NumSamples())
	}
	fs := r.Fields()
	if len(fs) != 2 || fs[0].Name != "label" || fs[0].Type != mldf.TypeInt || fs[0].MetadataSize != 8 ||
		fs[1].Name != "data" || fs[1].Type != mldf.TypeBytes || fs[1].MetadataSize != 16 {
		t.Fatalf("fields %+v", fs)
	}
	if fs[0].Arguments != [128]byte{} || fs[1].Arguments != [128]byte{} {
		t.Error("arguments not zero")
	}
	lf, df := r.FieldIndex("label"), r.FieldIndex("data")
	if lf != 0 || df != 1 || r.FieldIndex("nope") != -1 {
		t.Errorf("FieldIndex %d %d", lf, df)
	}
	for i := range 4 {
		v, err := r.Int(i, lf)
		if err != nil || v != goldenLabels[i] {
			t.Errorf("sample %d label %d, %v", i, v, err)
		}
		p, err := r.Payload(i, df)
		if err != nil || !bytes.Equal(p, goldenData[i]) {
			t.Errorf("sample %d data %d bytes, %v", i, len(p), err)
		}
		ref, _ := r.Ref(i, df)
		if ref.Ptr != goldenPtrs[i] || int(ref.Size) != len(goldenData[i]) {
			t.Errorf("sample %d ref %+v", i, ref)
		}
		if len(r.Row(i)) != 24 {
			t.Errorf("row %d: %d bytes", i, len(r.Row(i)))
		}
	}
	wantE := []mldf.AllocEntry{{Ptr: 4096, Size: 5}, {Ptr: 8192, Size: 5000}, {Ptr: 13192, Size: 6}}
	for k, e := range r.AllocTable() {
		if e.Ptr != wantE[k].Ptr || e.Size != wantE[k].Size {
			t.Errorf("entry %d %+v", k, e)
		}
	}
	rep, err := r.Verify()
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if rep.Entries != 3 || rep.EmptyPayloads != 1 || rep.PayloadBytes != 5011 || rep.DataRegionBytes != 9104 ||
		rep.PagesUsed != 3 || !rep.ChecksumsOK || !rep.GapsChecked {
		t.Errorf("report %+v", rep)
	}
}

// checkGoldenEncoders checks that the manifest encoders produce the golden bytes.
func checkGoldenEncoders(t *testing.T, want []byte) {
	le := binary.LittleEndian
	b := make([]byte, len(want))
	copy(b, mldf.Signature)
	h := mldf.Header{VersionMajor: mldf.VersionMajor, VersionMinor: 0,
		Flags: mldf.FlagLittleEndian | mldf.FlagChecksummed, NumSamples: 4, NumFields: 2, PageSize: 4096,
		FieldDescPtr: 80, MetadataPtr: 13200, DataPtr: 4096, AllocTablePtr: 13296}
	descs := []mldf.FieldDesc{
		{Name: "label", Type: mldf.TypeInt, MetadataSize: mldf.ScalarMetaSize},
		{Name: "data", Type: mldf.TypeBytes, MetadataSize: mldf.BlobMetaSize},
	}
	for k := range descs {
		if err := descs[k].Put(b[80+k*mldf.FieldDescSize:]); err != nil {
			t.Fatal(err)
		}
	}
	l, err := mldf.Layout([]mldf.TypeID{mldf.TypeInt, mldf.TypeBytes})
	if err != nil || l.Size != 24 || l.Offsets[0] != 0 || l.Offsets[1] != 8 {
		t.Fatalf("layout %+v %v", l, err)
	}
	e := 13296
	for s, p := range goldenData {
		copy(b[goldenPtrs[s]:], p)
		row := b[13200+s*l.Size:]
		mldf.PutInt(row[l.Offsets[0]:], goldenLabels[s])
		mldf.PutRef(row[l.Offsets[1]:], mldf.PayloadRef{Ptr: goldenPtrs[s], Size: uint32(len(p))})
		if len(p) > 0 {
			mldf.AllocEntry{Ptr: goldenPtrs[s], Size: uint32(len(p)), Check: mldf.PayloadChecksum(p)}.Put(b[e:])
			e += mldf.AllocEntrySize
		}
	}
	h.Put(b[mldf.HeaderOffset:])
	h.Checksum = mldf.HeaderChecksum(b[9:73], b[80:496], b[13200:13296], b[13296:])
	h.Put(b[mldf.HeaderOffset:])
	if !bytes.Equal(b, want) {
		t.Fatalf("encoders differ from the golden bytes at offset %d", firstDiff(b, want))
	}
	if d, err := mldf.DecodeHeader(want[9:]); err != nil || d != h {
		t.Errorf("DecodeHeader %+v %v", d, err)
	}
	if got := mldf.GetInt(want[13200+24:]); got != -1 {
		t.Errorf("GetInt %d", got)
	}
	if le.Uint64(want[13200+2*24+8:]) != 8192 {
		t.Error("row 2")
	}
}
