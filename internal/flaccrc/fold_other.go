//go:build !amd64 || purego

package flaccrc

// fold16 has no carry-less multiply version on this platform: CRC16 uses its tables alone.
func fold16(b []byte) ([16]byte, int) { return [16]byte{}, 0 }
