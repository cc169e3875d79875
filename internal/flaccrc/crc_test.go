package flaccrc

import (
	"math/rand/v2"
	"testing"
)

// bitwise computes a CRC one bit at a time, straight from the definition.
func bitwise(b []byte, poly uint32, width uint) uint32 {
	var c uint32
	top := uint32(1) << (width - 1)
	mask := uint32(1)<<width - 1
	for _, x := range b {
		c ^= uint32(x) << (width - 8)
		for range 8 {
			if c&top != 0 {
				c = (c<<1 ^ poly) & mask
			} else {
				c = c << 1 & mask
			}
		}
	}
	return c
}

func TestCRC(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 100 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if got, want := CRC8(b), bitwise(b, 0x07, 8); uint32(got) != want {
			t.Fatalf("CRC8 of %d bytes = %02x, want %02x", n, got, want)
		}
		if got, want := CRC16(b), bitwise(b, 0x8005, 16); uint32(got) != want {
			t.Fatalf("CRC16 of %d bytes = %04x, want %04x", n, got, want)
		}
	}
	// Lengths where the carry-less fold (from 64 bytes) takes the bulk, with every tail.
	for _, n := range []int{63, 64, 65, 79, 80, 127, 128, 129, 1000, 4096, 4111, 65536 + 7} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if got, want := CRC16(b), bitwise(b, 0x8005, 16); uint32(got) != want {
			t.Fatalf("CRC16 of %d bytes = %04x, want %04x", n, got, want)
		}
		if got, want := CRC16(b), crc16Update(0, b); got != want {
			t.Fatalf("CRC16 of %d bytes = %04x, tables alone %04x", n, got, want)
		}
	}
	// Check values of CRC-8/SMBUS and CRC-16/UMTS (the FLAC parameters) for "123456789".
	if got := CRC8([]byte("123456789")); got != 0xF4 {
		t.Errorf("CRC8 = %#x, want 0xf4", got)
	}
	if got := CRC16([]byte("123456789")); got != 0xFEE8 {
		t.Errorf("CRC16 = %#x, want 0xfee8", got)
	}
}

func BenchmarkCRC16(b *testing.B) {
	buf := make([]byte, 8192)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		CRC16(buf)
	}
}
