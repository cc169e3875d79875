package flacenc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
)

// pcmBytes lays samples out as AppendPCM takes them: little-endian two's complement of
// ceil(bps/8) bytes each.
func pcmBytes(samples []int32, bps int) []byte {
	width := (bps + 7) / 8
	b := make([]byte, 0, width*len(samples))
	for _, v := range samples {
		var w [4]byte
		binary.LittleEndian.PutUint32(w[:], uint32(v))
		b = append(b, w[:width]...)
	}
	return b
}

// TestAppendPCM: AppendPCM writes the same stream as Append for the same samples, at
// every width and with 1-3 channels, and rejects what Append rejects.
func TestAppendPCM(t *testing.T) {
	if raceEnabled {
		t.Skip("every width and channel count: heavy and single-goroutine, run without -race (race_test.go)")
	}
	for _, bps := range []int{4, 8, 12, 16, 17, 20, 24, 28, 32} {
		for _, nch := range []int{1, 2, 3} {
			s := musicLike(44100, 0.3, nch, uint64(bps), min(bps, 24))
			if bps > 24 {
				for i := range s {
					s[i] <<= bps - 24
				}
			}
			info := Info{SampleRate: 44100, Channels: nch, BitsPerSample: bps}
			for _, opts := range []Options{{}, {BlockSize: 1000}} {
				want, err := Append(nil, s, info, opts)
				if err != nil {
					t.Fatal(err)
				}
				got, err := AppendPCM([]byte("x"), pcmBytes(s, bps), info, opts)
				if err != nil {
					t.Fatalf("%d bits, %d channels: %v", bps, nch, err)
				}
				if !bytes.Equal(got[1:], want) || got[0] != 'x' {
					t.Errorf("%d bits, %d channels, block %d: AppendPCM differs from Append", bps, nch, opts.BlockSize)
				}
			}
			if bps%8 != 0 { // a full-width sample cannot be out of range
				bad := slices.Clone(s)
				bad[len(bad)-1] = int32(1) << (bps - 1) // one past the top
				_, werr := Append(nil, bad, info, Options{})
				_, gerr := AppendPCM(nil, pcmBytes(bad, bps), info, Options{})
				if !errors.Is(gerr, ErrSampleRange) || gerr.Error() != werr.Error() {
					t.Errorf("%d bits, %d channels: out of range: %v, Append says %v", bps, nch, gerr, werr)
				}
			}
		}
	}
	if _, err := AppendPCM(nil, make([]byte, 5), Info{8000, 2, 16}, Options{}); !errors.Is(err, ErrSampleCount) {
		t.Errorf("5 bytes of 16-bit stereo: %v, want ErrSampleCount", err)
	}
	if _, err := AppendPCM(nil, nil, Info{8000, 9, 16}, Options{}); !errors.Is(err, ErrInfo) {
		t.Errorf("9 channels: %v, want ErrInfo", err)
	}
}

// FuzzAppendPCM: for any bytes, AppendPCM and Append of the same samples agree (both fail
// alike or write the same stream).
func FuzzAppendPCM(f *testing.F) {
	f.Add([]byte{0, 2, 1, 2, 3, 4, 0xFF, 0x7F, 0, 0x80})
	f.Add(bytes.Repeat([]byte{1, 2, 3, 0x80, 0x7F}, 200))
	bpsChoices := []int{8, 12, 16, 20, 24, 32}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		nch := 1 + int(data[0]%3)
		bps := bpsChoices[int(data[1])%len(bpsChoices)]
		width := (bps + 7) / 8
		body := data[2:]
		body = body[:len(body)/(width*nch)*(width*nch)]
		s := make([]int32, len(body)/width)
		for i := range s {
			var w [4]byte
			copy(w[:], body[i*width:(i+1)*width])
			v := int32(binary.LittleEndian.Uint32(w[:]))
			s[i] = v << (32 - 8*width) >> (32 - 8*width)
		}
		info := Info{SampleRate: 8000, Channels: nch, BitsPerSample: bps}
		opts := Options{BlockSize: 64}
		want, werr := Append(nil, s, info, opts)
		got, gerr := AppendPCM(nil, body, info, opts)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) || !bytes.Equal(got, want) {
			t.Fatalf("AppendPCM: %v; Append: %v (streams equal: %v)", gerr, werr, bytes.Equal(got, want))
		}
	})
}
