package mldf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// desc builds a descriptor of type t whose arguments are set by the given byte writes.
func desc(t TypeID, set func(a *[ArgumentsSize]byte)) FieldDesc {
	d := FieldDesc{Name: "f", Type: t}
	if set != nil {
		set(&d.Arguments)
	}
	return d
}

func imageArgs(channels uint8, maxRes uint32, maxPixels int64) func(a *[ArgumentsSize]byte) {
	return func(a *[ArgumentsSize]byte) {
		a[0], a[1], a[2], a[3] = 1, 1, 90, channels
		binary.LittleEndian.PutUint32(a[4:], maxRes)
		a[8], a[9] = 2, 1
		binary.LittleEndian.PutUint64(a[16:], uint64(maxPixels))
	}
}

func audioArgs(format uint8) func(a *[ArgumentsSize]byte) {
	return func(a *[ArgumentsSize]byte) { a[0], a[1] = 1, format }
}

func textArgs(width uint8, flags uint16, endID, vocab, seqLen, padID uint32) func(a *[ArgumentsSize]byte) {
	return func(a *[ArgumentsSize]byte) {
		le := binary.LittleEndian
		a[0], a[1] = 1, width
		le.PutUint16(a[2:], flags)
		le.PutUint32(a[4:], endID)
		le.PutUint32(a[8:], vocab)
		le.PutUint32(a[12:], seqLen)
		le.PutUint32(a[16:], padID)
	}
}

func ndarrayFixedArgs(descr string, shape ...uint64) func(a *[ArgumentsSize]byte) {
	return func(a *[ArgumentsSize]byte) {
		a[0], a[1] = 1, ndarrayFixed
		copy(a[2:18], descr)
		a[18] = byte(len(shape))
		for i, d := range shape {
			binary.LittleEndian.PutUint64(a[24+8*i:], d)
		}
	}
}

func imageMeta(size uint32, h, w uint16, c, mode uint8) []byte {
	m := make([]byte, ImageMetaSize)
	PutRef(m, PayloadRef{Ptr: 4096, Size: size})
	ImageMeta{Height: h, Width: w, Channels: c, Mode: mode}.Put(m)
	return m
}

func audioMeta(size uint32, frames, rate uint32, ch uint16, bits, codec uint8) []byte {
	m := make([]byte, AudioMetaSize)
	PutRef(m, PayloadRef{Ptr: 4096, Size: size})
	AudioMeta{NumSamples: frames, SampleRate: rate, NumChannels: ch, BitDepth: bits, Codec: codec}.Put(m)
	return m
}

func textMeta(size uint32, enc uint8) []byte {
	m := make([]byte, TextMetaSize)
	PutRef(m, PayloadRef{Ptr: 4096, Size: size})
	TextMeta{Encoding: enc}.Put(m)
	return m
}

func blobMeta(size uint32) []byte {
	m := make([]byte, BlobMetaSize)
	PutRef(m, PayloadRef{Ptr: 4096, Size: size})
	return m
}

// npyBytes is a version 1.0 .npy holding n data bytes under the given header shape.
func npyBytes(descr, shape string, n int) []byte {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	for (10+len(dict)+1)%64 != 0 {
		dict += " "
	}
	dict += "\n"
	b := []byte("\x93NUMPY\x01\x00")
	b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
	return append(append(b, dict...), make([]byte, n)...)
}

// TestFieldRules is the table of lying metadata, one case per rule and per bound: at the
// bound (accepted), just over it and far over it (refused with the rule named).
func TestFieldRules(t *testing.T) {
	const maxU32 = math.MaxUint32
	cases := []struct {
		name    string
		d       FieldDesc
		meta    []byte
		payload []byte
		rule    string // "" = accepted
	}{
		// F1: arguments.
		{"image args version 2", desc(TypeImageJPEG, func(a *[128]byte) { a[0], a[3] = 2, 3 }), imageMeta(10, 4, 4, 3, 1), nil, "F1"},
		{"image args 2 channels", desc(TypeImageJPEG, imageArgs(2, 0, -1)), imageMeta(10, 4, 4, 2, 1), nil, "F1"},
		{"image args max_resolution 65536", desc(TypeImageJPEG, imageArgs(3, 65536, -1)), imageMeta(10, 4, 4, 3, 1), nil, "F1"},
		{"audio args unknown format", desc(TypeAudioWaveform, audioArgs(9)), audioMeta(2, 1, 8000, 1, 16, 0), nil, "F1"},
		{"compressed args int16", desc(TypeAudioCompressed, audioArgs(1)), audioMeta(50, 1, 8000, 1, 16, 1), nil, "F1"},
		{"tokens args width 3", desc(TypeTextTokenized, textArgs(3, 0, 0, 10, 0, 0)), textMeta(4, 1), nil, "F1"},
		{"packed args seq_len 0", desc(TypeTextPacked, textArgs(4, 0, 0, 10, 0, 0)), textMeta(4, 1), nil, "F1"},
		{"ndarray args bad dtype", desc(TypeNDArray, ndarrayFixedArgs("<u3", 2)), blobMeta(6), nil, "F1"},
		{"ndarray args object dtype", desc(TypeNDArray, ndarrayFixedArgs("|O8", 2)), blobMeta(16), nil, "F1"},
		{"ndarray args 9 dims", desc(TypeNDArray, ndarrayFixedArgs("|u1", 1, 1, 1, 1, 1, 1, 1, 1, 1)), blobMeta(1), nil, "F1"},
		{"ndarray args shape over 4 GiB", desc(TypeNDArray, ndarrayFixedArgs("<f4", 1<<30, 2)), blobMeta(8), nil, "F1"},
		{"ndarray args shape overflows", desc(TypeNDArray, ndarrayFixedArgs("<f8", 1<<40, 1<<40)), blobMeta(8), nil, "F1"},
		{"ndarray args layout 2", desc(TypeNDArray, func(a *[128]byte) { a[0], a[1] = 1, 2 }), blobMeta(8), nil, "F1"},
		{"bad args but empty payload", desc(TypeImageJPEG, imageArgs(2, 0, -1)), imageMeta(0, 0, 0, 0, 0), nil, ""},
		// F2: image mode.
		{"image mode 3", desc(TypeImageJPEG, nil), imageMeta(10, 4, 4, 3, 3), nil, "F2"},
		{"image mode 255", desc(TypeImagePNG, nil), imageMeta(10, 4, 4, 3, 255), nil, "F2"},
		// F3: dimensions.
		{"image height 0", desc(TypeImageJPEG, nil), imageMeta(10, 0, 4, 3, 1), nil, "F3"},
		{"image width 0", desc(TypeImageJPEG, nil), imageMeta(10, 4, 0, 3, 1), nil, "F3"},
		{"image 2 channels", desc(TypeImageJPEG, nil), imageMeta(10, 4, 4, 2, 1), nil, "F3"},
		{"image 0 channels", desc(TypeImageJPEG, nil), imageMeta(10, 4, 4, 0, 1), nil, "F3"},
		{"image channels differ from args", desc(TypeImageJPEG, imageArgs(3, 0, -1)), imageMeta(10, 4, 4, 1, 1), nil, "F3"},
		{"image at max_resolution", desc(TypeImageJPEG, imageArgs(3, 256, -1)), imageMeta(10, 256, 100, 3, 1), nil, ""},
		{"image just over max_resolution", desc(TypeImageJPEG, imageArgs(3, 256, -1)), imageMeta(10, 257, 100, 3, 1), nil, "F3"},
		{"image far over max_resolution", desc(TypeImageJPEG, imageArgs(3, 256, -1)), imageMeta(10, 100, 65535, 3, 1), nil, "F3"},
		{"image at max_pixels", desc(TypeImageJPEG, imageArgs(3, 0, 10000)), imageMeta(10, 100, 100, 3, 1), nil, ""},
		{"image just over max_pixels", desc(TypeImageJPEG, imageArgs(3, 0, 10000)), imageMeta(10, 100, 101, 3, 1), nil, "F3"},
		{"image far over max_pixels", desc(TypeImageJPEG, imageArgs(3, 0, 10000)), imageMeta(10, 65535, 65535, 3, 1), nil, "F3"},
		// F4: raw pixels.
		{"raw exact", desc(TypeImageRaw, nil), imageMeta(4*5*3, 4, 5, 3, 0), nil, ""},
		{"raw one byte short", desc(TypeImageRaw, nil), imageMeta(4*5*3-1, 4, 5, 3, 0), nil, "F4"},
		{"raw one byte over", desc(TypeImageRaw, nil), imageMeta(4*5*3+1, 4, 5, 3, 0), nil, "F4"},
		{"raw far over (65535x65535x4 > u32)", desc(TypeImageRaw, nil), imageMeta(maxU32, 65535, 65535, 4, 0), nil, "F4"},
		{"raw mode in a JPEG field", desc(TypeImageJPEG, nil), imageMeta(12, 2, 2, 3, 0), nil, ""},
		// F5: codec.
		{"audio codec 9", desc(TypeAudioCompressed, nil), audioMeta(50, 10, 8000, 1, 16, 9), nil, "F5"},
		{"waveform codec 1", desc(TypeAudioWaveform, nil), audioMeta(50, 10, 8000, 1, 16, 1), nil, "F5"},
		{"compressed codec 0", desc(TypeAudioCompressed, nil), audioMeta(20, 10, 8000, 1, 16, 0), nil, "F5"},
		// F6: audio shape and bounds.
		{"audio 0 channels", desc(TypeAudioCompressed, nil), audioMeta(50, 10, 8000, 0, 16, 1), nil, "F6"},
		{"audio 0 frames", desc(TypeAudioCompressed, nil), audioMeta(50, 0, 8000, 1, 16, 1), nil, "F6"},
		{"audio rate 0", desc(TypeAudioCompressed, nil), audioMeta(50, 10, 0, 1, 16, 1), nil, "F6"},
		{"audio rate at bound", desc(TypeAudioCompressed, nil), audioMeta(50, 10, MaxSampleRate, 1, 16, 1), nil, ""},
		{"audio rate just over", desc(TypeAudioCompressed, nil), audioMeta(50, 10, MaxSampleRate+1, 1, 16, 1), nil, "F6"},
		{"audio rate far over", desc(TypeAudioCompressed, nil), audioMeta(50, 10, 16777213, 1, 16, 1), nil, "F6"},
		{"FLAC 8 channels", desc(TypeAudioCompressed, nil), audioMeta(50, 10, 8000, 8, 16, 1), nil, ""},
		{"FLAC 9 channels", desc(TypeAudioCompressed, nil), audioMeta(50, 10, 8000, 9, 16, 1), nil, "F6"},
		{"FLAC 65535 channels", desc(TypeAudioCompressed, nil), audioMeta(50, 10, 8000, 65535, 16, 1), nil, "F6"},
		{"FLAC 3 bits", desc(TypeAudioCompressed, nil), audioMeta(50, 10, 8000, 1, 3, 1), nil, "F6"},
		{"FLAC 33 bits", desc(TypeAudioCompressed, nil), audioMeta(50, 10, 8000, 1, 33, 1), nil, "F6"},
		{"PCM 24 bits", desc(TypeAudioWaveform, nil), audioMeta(30, 10, 8000, 1, 24, 0), nil, "F6"},
		{"PCM 32 bits without args", desc(TypeAudioWaveform, nil), audioMeta(40, 10, 8000, 1, 32, 0), nil, "F6"},
		{"PCM 32 bits, args int16", desc(TypeAudioWaveform, audioArgs(1)), audioMeta(40, 10, 8000, 1, 32, 0), nil, "F6"},
		{"PCM 16 bits, args float32", desc(TypeAudioWaveform, audioArgs(3)), audioMeta(20, 10, 8000, 1, 16, 0), nil, "F6"},
		{"PCM 32 bits, args float32", desc(TypeAudioWaveform, audioArgs(3)), audioMeta(40, 10, 8000, 1, 32, 0), nil, ""},
		// F7: PCM size.
		{"PCM exact", desc(TypeAudioWaveform, audioArgs(1)), audioMeta(10*2*2, 10, 8000, 2, 16, 0), nil, ""},
		{"PCM one byte over", desc(TypeAudioWaveform, audioArgs(1)), audioMeta(10*2*2+1, 10, 8000, 2, 16, 0), nil, "F7"},
		{"PCM one frame short", desc(TypeAudioWaveform, audioArgs(1)), audioMeta(9*2*2, 10, 8000, 2, 16, 0), nil, "F7"},
		{"PCM far over (frames 2^32-1)", desc(TypeAudioWaveform, audioArgs(2)), audioMeta(40, maxU32, 8000, 65535, 32, 0), nil, "F7"},
		// F8: encoding.
		{"text encoding 3", desc(TypeTextTokenized, nil), textMeta(4, 3), nil, "F8"},
		{"text encoding 255", desc(TypeTextRaw, nil), textMeta(4, 255), nil, "F8"},
		{"TEXT_RAW holding ids", desc(TypeTextRaw, nil), textMeta(4, 1), nil, "F8"},
		{"TEXT_TOKENIZED holding text", desc(TypeTextTokenized, nil), textMeta(4, 0), nil, "F8"},
		{"int16 ids, args say 4 bytes", desc(TypeTextTokenized, textArgs(4, 0, 0, 100, 0, 0)), textMeta(4, 2), nil, "F8"},
		// F9: token payload size.
		{"int32 ids, 7 bytes", desc(TypeTextTokenized, nil), textMeta(7, 1), nil, "F9"},
		{"int16 ids, 3 bytes", desc(TypeTextTokenized, nil), textMeta(3, 2), nil, "F9"},
		{"packed row exact", desc(TypeTextPacked, textArgs(4, 0, 0, 100, 7, 0)), textMeta(28, 1), nil, ""},
		{"packed row one id over", desc(TypeTextPacked, textArgs(4, 0, 0, 100, 7, 0)), textMeta(32, 1), nil, "F9"},
		{"packed row far over", desc(TypeTextPacked, textArgs(4, 0, 0, 100, 7, 0)), textMeta(1<<30, 1), nil, "F9"},
		// F10: NDARRAY.
		{"fixed exact", desc(TypeNDArray, ndarrayFixedArgs("<f4", 3, 4)), blobMeta(48), nil, ""},
		{"fixed one byte over", desc(TypeNDArray, ndarrayFixedArgs("<f4", 3, 4)), blobMeta(49), nil, "F10"},
		{"fixed far over", desc(TypeNDArray, ndarrayFixedArgs("<f4", 3, 4)), blobMeta(maxU32), nil, "F10"},
		{"npy exact", desc(TypeNDArray, func(a *[128]byte) { a[0], a[1] = 1, 1 }), blobMeta(64 + 24), npyBytes("<f4", "(2, 3)", 24), ""},
		{"npy one element short", desc(TypeNDArray, func(a *[128]byte) { a[0], a[1] = 1, 1 }), blobMeta(64 + 20), npyBytes("<f4", "(2, 3)", 20), "F10"},
		{"npy declares one element more", desc(TypeNDArray, func(a *[128]byte) { a[0], a[1] = 1, 1 }), blobMeta(64 + 24), npyBytes("<f4", "(7,)", 24), "F10"},
		{"npy declares 2^40 elements", desc(TypeNDArray, func(a *[128]byte) { a[0], a[1] = 1, 1 }), blobMeta(64 + 24), npyBytes("<f4", "(1099511627776,)", 24), "F10"},
		{"npy declares 2^64 bytes", desc(TypeNDArray, func(a *[128]byte) { a[0], a[1] = 1, 1 }), blobMeta(64 + 24), npyBytes("<f8", "(4294967296, 4294967296)", 24), "F10"},
		{"ndarray without args: raw bytes", desc(TypeNDArray, nil), blobMeta(5), nil, ""},
		// Types without rules.
		{"bytes", desc(TypeBytes, nil), blobMeta(5), nil, ""},
		{"spectrogram codec 9", desc(TypeAudioSpectrogram, nil), audioMeta(5, 0, 0, 0, 0, 9), nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fr := NewFieldRules(c.d)
			if c.payload != nil {
				PutRef(c.meta, PayloadRef{Ptr: 4096, Size: uint32(len(c.payload))})
			}
			err := fr.Check(c.meta, c.payload)
			if c.rule == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Rule != c.rule || !errors.Is(err, ErrFieldRule) {
				t.Fatalf("Check: %v, want rule %s", err, c.rule)
			}
			if !strings.HasSuffix(err.Error(), "(FORMAT.md rule "+c.rule+")") {
				t.Errorf("message %q does not name the rule", err)
			}
			if c.rule == "F1" && fr.Arguments() == nil {
				t.Errorf("Arguments() = nil for an F1 case")
			}
		})
	}
}

// TestJSONDepthBounds: a JSON payload nested at MaxJSONDepth passes rule D3; one level more
// and far more do not, and the scan does not recurse.
func TestJSONDepthBounds(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(strings.Repeat(`[{"a":`, n/2) + strings.Repeat("[", n%2) + "1" + strings.Repeat("]", n%2) + strings.Repeat("}]", n/2))
	}
	for _, c := range []struct {
		depth int
		ok    bool
	}{{0, true}, {1, true}, {MaxJSONDepth, true}, {MaxJSONDepth + 1, false}, {2000, false}, {10000, false}, {1000000, false}} {
		b := nest(c.depth)
		if got := JSONDepth(b, 0); got != c.depth {
			t.Errorf("JSONDepth(depth %d) = %d", c.depth, got)
		}
		err := CheckJSON(b)
		var fe *FieldError
		if c.ok != (err == nil) || (err != nil && (!errors.As(err, &fe) || fe.Rule != "D3")) {
			t.Errorf("depth %d: CheckJSON = %v", c.depth, err)
		}
	}
	// Brackets inside strings do not count; escaped quotes do not end a string.
	if d := JSONDepth([]byte(`{"a\"[[[": "]]]{{", "b": [1]}`), 0); d != 2 {
		t.Errorf("depth with brackets in strings = %d, want 2", d)
	}
	for _, bad := range []string{`{"a":}`, "\xff", `[1,2`, ``, `1 2`} {
		if err := CheckJSON([]byte(bad)); err == nil {
			t.Errorf("CheckJSON(%q) accepted", bad)
		}
	}
	if err := CheckUTF8([]byte("ok \xe2\x9c\x93 then \xff")); err == nil || !strings.Contains(err.Error(), "offset 12") {
		t.Errorf("CheckUTF8: %v", err)
	}
}

// TestCheckTokens: ids below the vocabulary pass; an id at the vocabulary size does not,
// unless it is the end or pad id of the field.
func TestCheckTokens(t *testing.T) {
	ids := func(v ...uint32) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, x)
		}
		return b
	}
	fr := NewFieldRules(desc(TypeTextTokenized, textArgs(4, 1, 500, 100, 0, 0)))
	m := GetTextMeta(textMeta(12, 1))
	for _, c := range []struct {
		p  []byte
		ok bool
	}{{ids(0, 99, 500), true}, {ids(100), false}, {ids(1 << 31), false}, {ids(0xffffffff), false}} {
		if err := fr.CheckTokens(m, c.p); (err == nil) != c.ok {
			t.Errorf("ids % x: %v", c.p, err)
		}
	}
	if err := NewFieldRules(desc(TypeTextTokenized, nil)).CheckTokens(m, ids(1<<31)); err != nil {
		t.Errorf("no vocabulary recorded: %v", err)
	}
}

// TestParseNPYBounds: declared sizes at, just over and far over the payload.
func TestParseNPYBounds(t *testing.T) {
	for _, c := range []struct {
		shape string
		n     int
		ok    bool
	}{
		{"(2, 3)", 24, true}, {"()", 4, true}, {"(0,)", 0, true},
		{"(2, 3)", 25, false}, {"(2, 3)", 23, false}, {"(7,)", 24, false},
		{"(1099511627776,)", 24, false}, {"(4294967296, 4294967296, 4294967296)", 24, false},
		{"(9223372036854775807, 9223372036854775807)", 0, false},
	} {
		_, err := ParseNPY(npyBytes("<f4", c.shape, c.n))
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrNPY)) {
			t.Errorf("shape %s with %d bytes: %v", c.shape, c.n, err)
		}
	}
	for _, d := range []string{"<f2", "<f4", ">f8", "|b1", "|i1", "<i8", "<u2", "=u4", "<c8", "<c16"} {
		if _, err := DTypeSize(d); err != nil {
			t.Errorf("DTypeSize(%q): %v", d, err)
		}
	}
	for _, d := range []string{"<f16", "<u3", "|O8", "<U5", "|S3", "<f04", "f4", "<f", "", "<V8", "<M8"} {
		if _, err := DTypeSize(d); err == nil {
			t.Errorf("DTypeSize(%q) accepted", d)
		}
	}
}

// FuzzParseNPY: ParseNPY never panics, never allocates in proportion to the declared shape,
// and an accepted array holds exactly the bytes its shape needs.
func FuzzParseNPY(f *testing.F) {
	f.Add(npyBytes("<f4", "(2, 3)", 24))
	f.Add(npyBytes("|u1", "()", 1))
	f.Add(npyBytes("<f4", "(1099511627776,)", 24))
	f.Add([]byte("\x93NUMPY\x02\x00\x10\x00\x00\x00{'descr': '<i8'}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		arr, err := ParseNPY(b)
		if err != nil {
			return
		}
		item, err := DTypeSize(arr.Descr)
		if err != nil {
			t.Fatalf("accepted dtype %q: %v", arr.Descr, err)
		}
		n, ok := ArraySize(item, arr.Shape)
		if !ok || uint64(len(arr.Data)) != n {
			t.Fatalf("accepted %d data bytes for shape %v of %s", len(arr.Data), arr.Shape, arr.Descr)
		}
	})
}

// FuzzJSONDepth: JSONDepth agrees with encoding/json's view of valid JSON, and CheckJSON
// accepts exactly the valid JSON no deeper than MaxJSONDepth.
func FuzzJSONDepth(f *testing.F) {
	f.Add([]byte(`{"a": [1, {"b": "]]"}], "c\"": {}}`))
	f.Add([]byte(strings.Repeat("[", 600) + strings.Repeat("]", 600)))
	f.Add([]byte(`"\\"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := JSONDepth(b, 0)
		if limited := JSONDepth(b, 3); (got > 3) != (limited > 3) || (got <= 3 && limited != got) {
			t.Fatalf("limit 3: %d, no limit: %d", limited, got)
		}
		err := CheckJSON(b)
		if !json.Valid(b) || !utf8.Valid(b) {
			if err == nil {
				t.Fatal("CheckJSON accepted invalid JSON")
			}
			return
		}
		want := 0
		dec := json.NewDecoder(bytes.NewReader(b))
		depth := 0
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			if d, ok := tok.(json.Delim); ok {
				if d == '[' || d == '{' {
					depth++
					want = max(want, depth)
				} else {
					depth--
				}
			}
		}
		if got != want {
			t.Fatalf("JSONDepth = %d, encoding/json says %d", got, want)
		}
		if (err == nil) != (want <= MaxJSONDepth) {
			t.Fatalf("depth %d: CheckJSON = %v", want, err)
		}
	})
}

// FuzzFieldRules: NewFieldRules and Check never panic on any arguments, metadata and payload,
// and an accepted value satisfies the size equations the readers rely on.
func FuzzFieldRules(f *testing.F) {
	var a [ArgumentsSize]byte
	imageArgs(3, 256, -1)(&a)
	f.Add(uint16(TypeImageRaw), a[:], imageMeta(48, 4, 4, 3, 0), []byte(nil))
	audioArgs(1)(&a)
	f.Add(uint16(TypeAudioWaveform), a[:], audioMeta(40, 10, 8000, 2, 16, 0), []byte(nil))
	f.Add(uint16(TypeNDArray), []byte{1, 1}, blobMeta(88), npyBytes("<f4", "(2, 3)", 24))
	f.Add(uint16(TypeTextPacked), func() []byte { textArgs(4, 3, 1, 10, 7, 2)(&a); return a[:] }(), textMeta(28, 1), []byte(nil))
	f.Fuzz(func(t *testing.T, typ uint16, args, meta, payload []byte) {
		d := FieldDesc{Name: "f", Type: TypeID(typ)}
		copy(d.Arguments[:], args)
		size, has := MetaSize(d.Type)
		if !has {
			return
		}
		m := make([]byte, size)
		copy(m, meta)
		ref := GetRef(m)
		if uint64(len(payload)) != uint64(ref.Size) {
			payload = nil
		}
		fr := NewFieldRules(d)
		if err := fr.Check(m, payload); err != nil || ref.Size == 0 {
			return
		}
		switch typ := d.Type; {
		case isImageType(typ):
			im := GetImageMeta(m)
			if im.Mode == ImageModeRaw && uint64(im.Height)*uint64(im.Width)*uint64(im.Channels) != uint64(ref.Size) {
				t.Fatalf("accepted raw image %+v of %d bytes", im, ref.Size)
			}
		case typ == TypeAudioWaveform:
			am := GetAudioMeta(m)
			if uint64(am.NumSamples)*uint64(am.NumChannels)*uint64(am.BitDepth/8) != uint64(ref.Size) {
				t.Fatalf("accepted PCM %+v of %d bytes", am, ref.Size)
			}
		case typ == TypeNDArray && payload != nil && d.Arguments[0] == 1 && d.Arguments[1] == 1:
			if _, err := ParseNPY(payload); err != nil {
				t.Fatalf("accepted a bad .npy: %v", err)
			}
		}
	})
}
