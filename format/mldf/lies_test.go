package mldf

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
)

// npyValue is a version 1.0 .npy of n zero bytes under the given shape.
func npyValue(descr, shape string, n int) []byte {
	d := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	d += strings.Repeat(" ", (64-(10+len(d)+1)%64)%64) + "\n"
	b := binary.LittleEndian.AppendUint16([]byte("\x93NUMPY\x01\x00"), uint16(len(d)))
	return append(append(b, d...), make([]byte, n)...)
}

// lyingBase is a valid file with one field of every kind the field rules read, arguments
// recorded, and two samples. Payloads are not real JPEG or FLAC (no rule decodes them here).
func lyingBase(t *testing.T) []byte {
	descs := []FieldDesc{
		{Name: "jpeg", Type: TypeImageJPEG}, {Name: "raw", Type: TypeImageRaw},
		{Name: "flac", Type: TypeAudioCompressed}, {Name: "pcm", Type: TypeAudioWaveform},
		{Name: "tokens", Type: TypeTextTokenized}, {Name: "text", Type: TypeTextRaw},
		{Name: "fixed", Type: TypeNDArray}, {Name: "npy", Type: TypeNDArray},
		{Name: "label", Type: TypeInt},
	}
	a := &descs[0].Arguments // jpeg, 3 channels, max_pixels -1
	a[0], a[1], a[2], a[3], a[8], a[9] = 1, 1, 90, 3, 2, 1
	binary.LittleEndian.PutUint64(a[16:], ^uint64(0))
	descs[1].Arguments = descs[0].Arguments
	descs[1].Arguments[1] = 0
	descs[2].Arguments[0], descs[2].Arguments[1] = 1, 4 // flac
	descs[3].Arguments[0], descs[3].Arguments[1] = 1, 1 // int16
	descs[5].Arguments[0] = 1
	f := &descs[6].Arguments // <f4 (3, 4)
	f[0], f[1], f[18] = 1, 0, 2
	copy(f[2:], "<f4")
	binary.LittleEndian.PutUint64(f[24:], 3)
	binary.LittleEndian.PutUint64(f[32:], 4)
	descs[7].Arguments[0], descs[7].Arguments[1] = 1, 1
	var samples [][]tval
	for i := range 2 {
		samples = append(samples, []tval{
			{payload: []byte("not decoded here"), img: ImageMeta{Height: 5, Width: 7, Channels: 3, Mode: 1}},
			{payload: make([]byte, 4*5*3), img: ImageMeta{Height: 4, Width: 5, Channels: 3, Mode: 0}},
			{payload: []byte("fLaC..."), aud: AudioMeta{NumSamples: 100, SampleRate: 16000, NumChannels: 1, BitDepth: 16, Codec: 1}},
			{payload: make([]byte, 10*2*2), aud: AudioMeta{NumSamples: 10, SampleRate: 8000, NumChannels: 2, BitDepth: 16, Codec: 0}},
			{payload: make([]byte, 12), txt: TextMeta{NumTokens: 3, Encoding: 1}},
			{payload: []byte("héllo"), txt: TextMeta{}},
			{payload: make([]byte, 48)},
			{payload: npyValue("<i2", "(3,)", 6)},
			{i: int64(i)},
		})
	}
	return buildFile(t, 4096, descs, samples, true)
}

// TestFieldValueJSON: a FLOAT value that JSON numbers cannot hold is a string; the
// others are numbers.
func TestFieldValueJSON(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0.5, `0.5`}, {math.NaN(), `"NaN"`}, {math.Inf(1), `"Infinity"`}, {math.Inf(-1), `"-Infinity"`}} {
		b, err := FieldValue{Name: "x", Type: TypeFloat, Float: c.v}.MarshalJSON()
		if err != nil || !strings.Contains(string(b), `"float":`+c.want) {
			t.Errorf("%v: %s %v", c.v, b, err)
		}
	}
}

// FuzzHeaderFlags: whatever the flags and the header checksum, Open never panics, and a file
// whose checksummed flag is clear opens only when its header checksum is zero (rule R4); a
// file that opens with the flag clear verifies only when every check is zero (V6).
func FuzzHeaderFlags(f *testing.F) {
	f.Add(uint32(0x5), uint64(0x9ab57030a6859133), uint32(0x9a71bb4c))
	f.Add(uint32(0x1), uint64(0x9ab57030a6859133), uint32(0x9a71bb4c))
	f.Add(uint32(0x1), uint64(0), uint32(0x9a71bb4c))
	f.Add(uint32(0x1), uint64(0), uint32(0))
	f.Add(uint32(0xfffffff1), uint64(1), uint32(1))
	f.Fuzz(func(t *testing.T, flags uint32, sum uint64, check uint32) {
		b := golden(t)
		le.PutUint32(b[offFlags:], flags)
		le.PutUint64(b[offSum:], sum)
		le.PutUint32(b[entry(0)+12:], check)
		r, err := FromBytes("flags", b)
		plain := flags&FlagChecksummed == 0
		if err != nil {
			return
		}
		if plain && sum != 0 {
			t.Fatalf("flags %#x with header checksum %x opened", flags, sum)
		}
		rep, err := r.Verify()
		if err == nil && plain && (check != 0 || r.AllocEntry(1).Check != 0) {
			t.Fatalf("flags %#x: non-zero checks verified: %+v", flags, rep)
		}
		if err == nil && !plain && !rep.ChecksumsOK {
			t.Fatalf("flags %#x: verified without checking the checksums", flags)
		}
	})
}
