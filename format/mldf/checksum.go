package mldf

import (
	"hash/crc32"

	"github.com/cespare/xxhash/v2"
)

// castagnoli is the CRC-32C polynomial table; crc32 shares one read-only table per polynomial.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// PayloadChecksum returns the allocation-table check of a payload: CRC-32C (Castagnoli) of
// its bytes (docs/FORMAT.md §8).
func PayloadChecksum(payload []byte) uint32 { return crc32.Checksum(payload, castagnoli) }

// HeaderChecksumOffset is where, inside the 64-byte header, the header checksum is stored.
// The checksum covers the header bytes before it.
const HeaderChecksumOffset = 56

// HeaderChecksum returns the header checksum (docs/FORMAT.md §8): xxhash64, seed 0, of
// header[0:56] followed by the field-descriptor block, the metadata table and the allocation
// table, exactly as they lie in the file. header must hold at least 56 bytes.
func HeaderChecksum(header, descriptors, metadata, allocTable []byte) uint64 {
	d := xxhash.New()
	d.Write(header[:HeaderChecksumOffset])
	d.Write(descriptors)
	d.Write(metadata)
	d.Write(allocTable)
	return d.Sum64()
}
