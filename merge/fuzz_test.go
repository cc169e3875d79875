package merge

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mldf/convert/format/mldf"
)

// FuzzMergePart merges a valid part 0 with fuzzed bytes as part 1. The fuzzed part's header
// checksum is fixed up (and its record written to match) so that the fuzzer reaches the
// table rebasing, not only the checksum check. Merge must never panic, and when it accepts a
// part that verifies, the merged file must verify too.
func FuzzMergePart(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed.mldf")
	writeFile(f, seed, 4096, testFields, genSamples(12, 9))
	b, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	short := filepath.Join(dir, "short.mldf")
	writeFile(f, short, 4096, testFields, []testSample{{Label: 1}})
	b, _ = os.ReadFile(short)
	f.Add(b)
	f.Fuzz(func(t *testing.T, part1 []byte) {
		dir := t.TempDir()
		out := filepath.Join(dir, "o.mldf")
		p0 := PartPath(out, 0, 2)
		res := writeFile(t, p0, 4096, testFields, genSamples(5, 1))
		writeRecord(t, p0, Record{Shard: 0, Shards: 2, RecipeSHA256: "r", Samples: res.Samples, Checksum: fmt.Sprintf("%016x", res.Checksum)})
		p1 := PartPath(out, 1, 2)
		part1 = fixChecksum(part1)
		if err := os.WriteFile(p1, part1, 0o644); err != nil {
			t.Fatal(err)
		}
		var sum, samples uint64
		if len(part1) >= mldf.PreambleSize {
			h := part1[mldf.HeaderOffset:]
			samples = binary.LittleEndian.Uint64(h[8:])
			sum = binary.LittleEndian.Uint64(h[mldf.HeaderChecksumOffset:])
		}
		writeRecord(t, p1, Record{Shard: 1, Shards: 2, RecipeSHA256: "r", Samples: int64(samples & (1<<62 - 1)), Checksum: fmt.Sprintf("%016x", sum)})
		if _, err := Merge(out, []string{p0, p1}); err != nil {
			return
		}
		if _, err := mldf.Verify(p1); err != nil {
			return
		}
		if _, err := mldf.Verify(out); err != nil {
			t.Fatalf("merged a verified part into a file that does not verify: %v", err)
		}
	})
}

// fixChecksum rewrites the header checksum of b when b opens as an MLDF file.
func fixChecksum(b []byte) []byte {
	r, err := mldf.FromBytes("fuzz", b)
	if err != nil {
		return b
	}
	h := r.Header()
	defer r.Close()
	hdr := b[mldf.HeaderOffset : mldf.HeaderOffset+mldf.HeaderSize]
	descEnd := h.FieldDescPtr + uint64(h.NumFields)*mldf.FieldDescSize
	sum := mldf.HeaderChecksum(hdr, b[h.FieldDescPtr:descEnd], b[h.MetadataPtr:h.AllocTablePtr], b[h.AllocTablePtr:])
	out := append([]byte(nil), b...)
	binary.LittleEndian.PutUint64(out[mldf.HeaderOffset+mldf.HeaderChecksumOffset:], sum)
	return out
}
