package flacenc

import (
	"encoding/binary"
	"testing"
)

// FuzzEncode encodes arbitrary PCM and checks the round trip through
// mewkiz/flac. The first bytes choose the layout; the rest are samples, used
// either directly or as steps of a random walk (which drives the LPC paths).
func FuzzEncode(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte{1, 4, 1, 3, 0xFF, 0xFF, 0x7F, 0, 0, 0x80, 0x12, 0x34, 0x56, 0x78})
	f.Add(make([]byte, 300))
	seed := make([]byte, 4+4*600)
	for i := range seed {
		seed[i] = byte(i * i * 7)
	}
	seed[0], seed[1], seed[2], seed[3] = 3, 1, 2, 1
	f.Add(seed)
	bpsChoices := []int{8, 12, 16, 20, 24}
	levels := []Level{LevelDefault, LevelFast, LevelBest}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		channels := 1 + int(data[0]%8)
		bps := bpsChoices[int(data[1])%len(bpsChoices)]
		walk := data[2]&1 == 1
		level := levels[int(data[2]>>1)%len(levels)]
		blockSize := []int{16, 17, 64, 192, 300, 4096}[int(data[3])%6]
		body := data[4:]
		n := len(body) / 4 / channels * channels
		samples := make([]int32, n)
		lo, hi := int64(-1)<<(bps-1), int64(1)<<(bps-1)-1
		acc := make([]int64, channels)
		for i := range samples {
			v := int64(int32(binary.LittleEndian.Uint32(body[4*i:])))
			if walk {
				c := i % channels
				acc[c] += v >> (32 - bps + 4)
				acc[c] = min(max(acc[c], lo), hi)
				v = acc[c]
			} else {
				v >>= 32 - bps
			}
			samples[i] = int32(v)
		}
		info := Info{SampleRate: 1 + int(data[3])*997, Channels: channels, BitsPerSample: bps}
		roundTrip(t, samples, info, Options{Level: level, BlockSize: blockSize})
	})
}
