package flacdec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"testing"

	"github.com/mldf/convert/internal/flacenc"
)

// small returns a short real stream: 2 channels, 16 bits, a few frames.
func small(t testing.TB) []byte {
	t.Helper()
	s := testClip(3000, 2, 16, 42)
	b, err := flacenc.Append(nil, s, flacenc.Info{SampleRate: 44100, Channels: 2, BitsPerSample: 16}, flacenc.Options{BlockSize: 1024})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// setTotal rewrites STREAMINFO's total sample count.
func setTotal(b []byte, total uint64) []byte {
	b = bytes.Clone(b)
	v := binary.BigEndian.Uint64(b[18:])
	v = v&^(1<<36-1) | total
	binary.BigEndian.PutUint64(b[18:], v)
	return b
}

func TestBadInput(t *testing.T) {
	good := small(t)
	const hdr = 8 + 34 // "fLaC", block header, STREAMINFO: the first frame starts here
	mod := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		return b
	}
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrSignature},
		{"not flac", []byte("RIFF....WAVE"), ErrSignature},
		{"signature only", []byte("fLaC"), ErrTruncated},
		{"streaminfo cut", good[:20], ErrTruncated},
		{"first block not streaminfo", mod(func(b []byte) { b[4] = 0x84 }), ErrNoStreamInfo},
		{"streaminfo length 33", mod(func(b []byte) { b[7] = 33 }), ErrMetadata},
		{"bits per sample 2", mod(func(b []byte) {
			v := binary.BigEndian.Uint64(b[18:])
			binary.BigEndian.PutUint64(b[18:], v&^(31<<36)|1<<36)
		}), ErrMetadata},
		{"max block size 8", mod(func(b []byte) { b[10], b[11] = 0, 8; b[8], b[9] = 0, 8 }), ErrMetadata},
		{"no frames", good[:hdr], ErrSampleCount},
		{"frame cut", good[:hdr+100], ErrTruncated},
		{"last byte cut", good[:len(good)-1], ErrTruncated},
		{"no sync", mod(func(b []byte) { b[hdr] = 0 }), ErrFrame},
		{"header CRC", mod(func(b []byte) { b[hdr+4] ^= 1 }), ErrCRC},
		{"frame CRC", mod(func(b []byte) { b[hdr+300] ^= 0x10 }), nil}, // ErrCRC or a decoding error
		{"MD5", mod(func(b []byte) { b[hdr-1] ^= 1 }), ErrMD5},
		{"total too small", setTotal(good, 1000), ErrSampleCount},
		{"total too large", setTotal(good, 5000), ErrSampleCount},
		{"total huge", setTotal(good, 1<<36-1), ErrTooLarge},
	}
	for _, c := range cases {
		_, _, err := Decode(c.in)
		_, verr := Verify(c.in, Options{})
		switch {
		case err == nil:
			t.Errorf("%s: no error", c.name)
		case c.want != nil && !errors.Is(err, c.want):
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
		case verr == nil || verr.Error() != err.Error():
			t.Errorf("%s: Verify says %v, Decode %v", c.name, verr, err)
		}
	}
	// A trailing ID3v1 tag after the declared samples is ignored; an ID3v2 tag before is skipped.
	tag := append(bytes.Clone(good), []byte("TAG"+string(make([]byte, 125)))...)
	if _, _, err := Decode(tag); err != nil {
		t.Errorf("trailing tag: %v", err)
	}
	id3 := append([]byte{'I', 'D', '3', 4, 0, 0, 0, 0, 0, 5, 1, 2, 3, 4, 5}, good...)
	if _, _, err := Decode(id3); err != nil {
		t.Errorf("ID3v2 prefix: %v", err)
	}
	// With the total unknown (0), every frame is decoded.
	if s, _, err := Decode(setTotal(good, 0)); err != nil || len(s) != 6000 {
		t.Errorf("unknown total: %d samples, %v", len(s), err)
	}
	if _, _, err := DecodeOptions(good, Options{MaxSamples: 5000}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("MaxSamples: %v", err)
	}
	if _, _, err := DecodeOptions(setTotal(good, 0), Options{MaxSamples: 5000}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("MaxSamples, unknown total: %v", err)
	}
}

// TestTruncatedEverywhere cuts a stream at every length and flips every bit of its first
// frames: never a panic, and a cut stream is never accepted.
func TestTruncatedEverywhere(t *testing.T) {
	good := small(t)
	for n := range len(good) {
		if _, _, err := Decode(good[:n]); err == nil {
			t.Fatalf("cut at %d of %d: no error", n, len(good))
		}
		if _, err := Verify(good[:n], Options{}); err == nil {
			t.Fatalf("Verify, cut at %d of %d: no error", n, len(good))
		}
	}
	for i := 0; i < min(len(good), 600)*8; i++ {
		b := bytes.Clone(good)
		b[i/8] ^= 1 << (i % 8)
		Decode(b) // must not panic; some flips (in the MD5 of a SkipMD5 run, padding) are harmless
	}
}

// TestLyingHeaderAllocation: a tiny stream whose STREAMINFO claims a huge count, or whose
// frames claim huge blocks, allocates in proportion to its size, not to the claims.
func TestLyingHeaderAllocation(t *testing.T) {
	// One frame of 65535 samples in 8 channels, all constant: a few dozen bytes that
	// decode to half a million samples. MaxSamples bounds it.
	s := make([]int32, 65535*8)
	b := build("const", 8000, 8, 32, s, []int{65535}, func(fi, start, bn int) frameSpec {
		subs := make([]subSpec, 8)
		return frameSpec{bps: 32, rate: 8000, srCode: -1, bsCode: -1, ssCode: -1, subs: subs}
	}).stream
	if len(b) > 200 {
		t.Fatalf("constant stream is %d bytes", len(b))
	}
	if _, _, err := DecodeOptions(b, Options{MaxSamples: 65535*8 - 1}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("MaxSamples: %v", err)
	}
	huge := setTotal(small(t), 1<<31/2-1) // within the default bound, far beyond the frames
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	_, _, err := Decode(huge)
	runtime.ReadMemStats(&m1)
	if !errors.Is(err, ErrSampleCount) {
		t.Fatalf("lying total: %v", err)
	}
	if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > 4<<20 {
		t.Fatalf("a %d-byte stream with a lying total allocated %d bytes", len(huge), alloc)
	}
}

func TestSkipMD5(t *testing.T) {
	b := bytes.Clone(small(t))
	b[8+34-1] ^= 1
	if _, _, err := DecodeOptions(b, Options{SkipMD5: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("testdata"); err != nil {
		t.Fatal(err)
	}
}

// TestSampleRange: a frame whose predictor lands one past either end of the bit depth is
// rejected, with the MD5 check (the range is tested in the MD5 pass) and without it; the
// ends themselves are accepted.
func TestSampleRange(t *testing.T) {
	for _, bps := range []int{4, 8, 12, 16, 17, 20, 24, 31} {
		hi, lo := int32(1)<<(bps-1)-1, -int32(1)<<(bps-1)
		for _, c := range []struct {
			name string
			last int32
			ok   bool
		}{{"max", hi, true}, {"min", lo, true}, {"max+1", hi + 1, false}, {"min-1", lo - 1, false}} {
			s := make([]int32, 32)
			for i := range s {
				s[i] = int32(i%5) - 2
			}
			s[30], s[31] = c.last/2, c.last // a fixed order-1 residual reaches it
			st := build("range", 44100, 1, bps, s, []int{32}, func(_, _, _ int) frameSpec {
				return defaults(frameSpec{bps: bps, rate: 44100, srCode: -1, bsCode: -1,
					subs: []subSpec{{kind: 2, order: 1, param: []int{-1}}}})
			})
			for _, skip := range []bool{false, true} {
				got, _, err := DecodeOptions(st.stream, Options{SkipMD5: skip})
				switch {
				case c.ok && err != nil:
					t.Errorf("%d bits, %s, SkipMD5 %v: %v", bps, c.name, skip, err)
				case c.ok && got[31] != c.last:
					t.Errorf("%d bits, %s: decoded %d, want %d", bps, c.name, got[31], c.last)
				case !c.ok && !errors.Is(err, ErrFrame):
					t.Errorf("%d bits, %s, SkipMD5 %v: err %v, want ErrFrame", bps, c.name, skip, err)
				}
			}
		}
	}
}
