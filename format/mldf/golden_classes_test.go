package mldf_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/format/mldf"
)

// classesPath is testdata/golden/classes.mldf: the class-names example of docs/FORMAT.md §14.
var classesPath = filepath.Join("..", "..", "testdata", "golden", "classes.mldf")

// The class-names golden dataset: fields [label INT class label, data BYTES], page 4096,
// three samples.
var (
	classesNames  = []string{"cat", "dog", "fish & chips"}
	classesJSON   = `["cat","dog","fish \u0026 chips"]`
	classesLabels = []int64{0, 2, -1}
	classesData   = [][]byte{[]byte("hello"), nil, []byte("world!")}
	classesPtrs   = []uint64{4096, 0, 4104}
)

// buildClasses writes the class-names golden file byte by byte at the offsets docs/FORMAT.md
// §14.3 gives, without the manifest encoders.
func buildClasses() []byte {
	le := binary.LittleEndian
	const (
		fieldDescPtr  = 80
		namesPtr      = 496 // 80 + 2 × 208: right after the descriptors
		dataPtr       = 4096
		metadataPtr   = 4112
		rowSize       = 24
		allocTablePtr = metadataPtr + 3*rowSize // 4184
		fileSize      = allocTablePtr + 2*16    // 4216
	)
	b := make([]byte, fileSize)
	copy(b[0:], []byte{0x89, 'M', 'L', 'D', 'F', 0x0D, 0x0A, 0x1A, 0x0A})
	hd := b[9:73]
	le.PutUint16(hd[0:], 1) // version_major
	le.PutUint16(hd[2:], 1) // version_minor 1: the file holds a class-names block
	le.PutUint32(hd[4:], 1|4)
	le.PutUint64(hd[8:], 3)
	le.PutUint16(hd[16:], 2)
	le.PutUint32(hd[20:], 4096)
	le.PutUint64(hd[24:], fieldDescPtr)
	le.PutUint64(hd[32:], metadataPtr)
	le.PutUint64(hd[40:], dataPtr)
	le.PutUint64(hd[48:], allocTablePtr)

	// Descriptor 0: label, INT, class-label arguments (int.md) with the block's place.
	copy(b[80:], "label")
	le.PutUint16(b[80+64:], 1)
	le.PutUint32(b[80+68:], 8)
	args := b[80+76 : 80+204]
	args[0], args[1] = 1, 1 // version 1, kind 1 (class label)
	le.PutUint32(args[4:], 3)
	le.PutUint64(args[8:], xxhash.Sum64String(classesJSON))
	le.PutUint64(args[16:], namesPtr)
	le.PutUint32(args[24:], uint32(len(classesJSON)))
	copy(b[288:], "data")
	le.PutUint16(b[288+64:], 3)
	le.PutUint32(b[288+68:], 16)

	// §14 the class-names block, then zero to data_ptr.
	copy(b[namesPtr:], classesJSON)

	for s, p := range classesData {
		copy(b[classesPtrs[s]:], p)
		row := b[metadataPtr+s*rowSize:]
		le.PutUint64(row[0:], uint64(classesLabels[s]))
		le.PutUint64(row[8:], classesPtrs[s])
		le.PutUint32(row[16:], uint32(len(p)))
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	e := allocTablePtr
	for s, p := range classesData {
		if len(p) == 0 {
			continue
		}
		le.PutUint64(b[e:], classesPtrs[s])
		le.PutUint32(b[e+8:], uint32(len(p)))
		le.PutUint32(b[e+12:], crc32.Checksum(p, tab))
		e += 16
	}
	var h []byte
	h = append(h, hd[:56]...)
	h = append(h, b[80:496]...)
	h = append(h, b[metadataPtr:]...)
	le.PutUint64(hd[56:], xxhash.Sum64(h))
	return b
}

func TestGoldenClasses(t *testing.T) {
	want := buildClasses()
	if *update {
		if err := os.WriteFile(classesPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(classesPath)
	if err != nil {
		t.Fatalf("%v (run go test ./manifest -run Golden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the hand-built bytes at offset %d", classesPath, firstDiff(got, want))
	}
	if string(mldf.ClassNamesJSON(classesNames)) != classesJSON {
		t.Fatalf("canonical form %s, want %s", mldf.ClassNamesJSON(classesNames), classesJSON)
	}
	r, err := mldf.Open(classesPath)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	names, err := r.Field("label").ClassNames()
	if err != nil || !equalStrings(names, classesNames) {
		t.Fatalf("names %q, %v", names, err)
	}
	if n, ok := r.NumClasses(0); !ok || n != 3 {
		t.Errorf("NumClasses %d %v", n, ok)
	}
	if names, err := r.Field("data").ClassNames(); names != nil || err != nil {
		t.Errorf("data: %q %v", names, err)
	}
	for i, v := range classesLabels {
		if got, err := r.Int(i, 0); err != nil || got != v {
			t.Errorf("sample %d: %d %v", i, got, err)
		}
	}
	rep, err := r.Verify()
	if err != nil {
		t.Fatal(err)
	}
	if !rep.GapsChecked || rep.ClassNames != 1 || !rep.ChecksumsOK {
		t.Errorf("report %+v", rep)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
