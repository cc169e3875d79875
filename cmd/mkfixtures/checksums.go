package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/cespare/xxhash/v2"

	"github.com/mldf/convert/format/mldf"
)

// checksumVector is one input of checksums.json: the checksums the Go side computes for a
// deterministic byte string, so other readers can test their CRC-32C and XXH64.
type checksumVector struct {
	Len    int    `json:"len"`
	Seed   int    `json:"seed"`
	CRC32C string `json:"crc32c"`
	XXH64  string `json:"xxh64"`
}

// vectorBytes is the byte string of a vector: byte i is (i*31 + seed*7 + i>>8) mod 256.
func vectorBytes(n, seed int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + seed*7 + i>>8)
	}
	return b
}

func writeChecksums(dir string) error {
	var out []checksumVector
	lens := []int{0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 31, 32, 33, 35, 63, 64, 65, 100, 511, 512, 513, 1000, 4095, 4096,
		4097, 65536, 100003, 262147, 1<<20 + 5}
	for k, n := range lens {
		b := vectorBytes(n, k)
		out = append(out, checksumVector{Len: n, Seed: k, CRC32C: fmt.Sprintf("%08x", mldf.PayloadChecksum(b)),
			XXH64: fmt.Sprintf("%016x", xxhash.Sum64(b))})
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "checksums.json"), data)
}
