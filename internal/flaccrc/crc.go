// Package flaccrc computes the two CRCs of a FLAC frame, for the encoder and the decoder.
// CRC8 covers a frame header and CRC16 a whole frame, eight bytes per step.
package flaccrc

// The two CRCs of a frame (RFC 9639 sections 9.1.8 and 9.3): CRC-8 with polynomial
// x^8+x^2+x+1 over the header and CRC-16 with polynomial x^16+x^15+x^2+1 over the whole
// frame, both most significant bit first, initial value 0, no final XOR.
//
// crc16Tables[k][b] is the CRC-16 contribution of byte b followed by k zero bytes, which
// lets crc16 take eight bytes per step ("slicing by 8"). The tables are computed once at
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

func makeCRC16Tables() (t [8][256]uint16) {
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
	for k := 1; k < 8; k++ {
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
	t := &crc16Tables
	for len(b) >= 8 {
		c = t[7][b[0]^byte(c>>8)] ^ t[6][b[1]^byte(c)] ^
			t[5][b[2]] ^ t[4][b[3]] ^ t[3][b[4]] ^ t[2][b[5]] ^ t[1][b[6]] ^ t[0][b[7]]
		b = b[8:]
	}
	for _, x := range b {
		c = c<<8 ^ t[0][byte(c>>8)^x]
	}
	return c
}
