// Package flaccrc computes the two CRCs of a FLAC frame, for the encoder and the decoder.
// CRC8 covers a frame header and CRC16 a whole frame, sixteen bytes per step.
package flaccrc

// The two CRCs of a frame (RFC 9639 sections 9.1.8 and 9.3): CRC-8 with polynomial
// x^8+x^2+x+1 over the header and CRC-16 with polynomial x^16+x^15+x^2+1 over the whole
// frame, both most significant bit first, initial value 0, no final XOR.
//
// crc16Tables[k][b] is the CRC-16 contribution of byte b followed by k zero bytes, which
// lets crc16 take sixteen bytes per step ("slicing by 16"; the 8 KiB of tables stay in
// the L1 cache). On amd64 with a carry-less multiply, fold16 first reduces the bulk of a
// frame to 16 bytes of the same CRC. The tables are computed once at
// start-up and only read.
var (
	crc8Table   = makeCRC8Table()
	crc16Tables = makeCRC16Tables()
)

func makeCRC8Table() (t [256]uint8) {
	for i := range t {
		c := uint8(i)
		for range 8 {
			if c&0x80 != 0 {
				c = c<<1 ^ 0x07
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}

func makeCRC16Tables() (t [16][256]uint16) {
	for i := range t[0] {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x8005
			} else {
				c <<= 1
			}
		}
		t[0][i] = c
	}
	for k := 1; k < len(t); k++ {
		for i := range t[k] {
			c := t[k-1][i]
			t[k][i] = c<<8 ^ t[0][c>>8]
		}
	}
	return t
}

// CRC8 returns the CRC-8 of a frame header (polynomial 0x07, initial value 0).
func CRC8(b []byte) uint8 {
	var c uint8
	for _, x := range b {
		c = crc8Table[c^x]
	}
	return c
}

// CRC16 returns the CRC-16 of a frame (polynomial 0x8005, initial value 0).
func CRC16(b []byte) uint16 {
	var c uint16
	// Where the CPU has a carry-less multiply, the bulk of b folds into 16 bytes of the
	// same CRC, which the tables then take with the rest.
	if f, n := fold16(b); n > 0 {
		c = crc16Update(0, f[:])
		b = b[n:]
	}
	return crc16Update(c, b)
}

// crc16Update continues the CRC-16 c over b with the tables.
func crc16Update(c uint16, b []byte) uint16 {
	t := &crc16Tables
	for len(b) >= 16 {
		q := b[:16:16]
		c = t[15][q[0]^byte(c>>8)] ^ t[14][q[1]^byte(c)] ^
			t[13][q[2]] ^ t[12][q[3]] ^ t[11][q[4]] ^ t[10][q[5]] ^ t[9][q[6]] ^ t[8][q[7]] ^
			t[7][q[8]] ^ t[6][q[9]] ^ t[5][q[10]] ^ t[4][q[11]] ^ t[3][q[12]] ^ t[2][q[13]] ^
			t[1][q[14]] ^ t[0][q[15]]
		b = b[16:]
	}
	for _, x := range b {
		c = c<<8 ^ t[0][byte(c>>8)^x]
	}
	return c
}
